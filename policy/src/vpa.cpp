#include <phasescale/model/error.hpp>
#include <phasescale/policy/simple.hpp>
#include <phasescale/policy/vpa.hpp>

#include <algorithm>
#include <cmath>

namespace phasescale::policy {

namespace {

// model.ResourceAmount (v1.8.1): a usage sample is held as whole millicores or bytes, truncated
// and clamped to [0, MaxResourceAmount] (resourceAmountFromFloat).
constexpr double kMaxResourceAmount = 1e14;
double resource_amount(double value) {
    return std::trunc(std::clamp(value, 0.0, kMaxResourceAmount));
}
double cpu_amount(double cores) {
    return resource_amount(cores * 1000.0) / 1000.0;
}

// logic.getConfidence: the history length in confidence intervals (days by default), or the
// number of samples counted as one a minute, whichever is less.
double confidence(double first, double last, std::size_t samples, double interval_s) {
    return std::min((last - first) / interval_s, static_cast<double>(samples) / (interval_s / 60));
}

// model.ScaleResource: value * factor as a whole amount (`unit` converts the value to upstream's
// millicores or bytes), truncated and capped at MaxResourceAmount, as every estimator of the
// chain returns it. 0 * infinity (an empty histogram with no history) is 0.
double scaled(double value, double unit, double factor) {
    const double amount = value * unit * factor;
    return std::isnan(amount) ? 0 : resource_amount(amount) / unit;
}

// logic's confidence multipliers: (1 + multiplier / confidence)^exponent (with no history the
// upper bound is the cap and the lower bound 0).
double confidence_factor(double multiplier, double exponent, double confidence) {
    return std::pow(1 + multiplier / confidence, exponent);
}

}  // namespace

ExponentialBuckets::ExponentialBuckets(double max_value, double first_bucket, double ratio)
    : first_bucket_(first_bucket), ratio_(ratio) {
    count_ = static_cast<int>(std::ceil(std::log(max_value * (ratio - 1) / first_bucket + 1) /
                                        std::log(ratio))) +
             1;
}

int ExponentialBuckets::find(double value) const {
    if (value < first_bucket_) return 0;
    const int bucket =
        static_cast<int>(std::log(value * (ratio_ - 1) / first_bucket_ + 1) / std::log(ratio_));
    return std::min(bucket, count_ - 1);
}

double ExponentialBuckets::start(int bucket) const {
    if (bucket == 0) return 0;
    return first_bucket_ * (std::pow(ratio_, bucket) - 1) / (ratio_ - 1);
}

const ExponentialBuckets& vpa_cpu_buckets() {
    static const ExponentialBuckets buckets(kVpaCpuMaxValue, kVpaCpuFirstBucket,
                                            1. + kVpaBucketGrowth);
    return buckets;
}

const ExponentialBuckets& vpa_memory_buckets() {
    static const ExponentialBuckets buckets(kVpaMemoryMaxValue, kVpaMemoryFirstBucket,
                                            1. + kVpaBucketGrowth);
    return buckets;
}

DecayingHistogram::DecayingHistogram(const ExponentialBuckets* buckets, double half_life_s)
    : buckets_(buckets),
      half_life_(half_life_s),
      weights_(static_cast<std::size_t>(buckets->count()), 0.0),
      min_bucket_(buckets->count() - 1),
      max_bucket_(0) {
    if (!(half_life_s > 0))
        throw model::InputError("VPA: the histogram half-life must be positive");
}

void DecayingHistogram::add(double value, double weight, double time_s) {
    weight *= decay_factor(time_s);
    const int b = buckets_->find(value);
    weights_[b] += weight;
    total_ += weight;
    if (b < min_bucket_ && weights_[b] >= kEpsilon) min_bucket_ = b;
    if (b > max_bucket_ && weights_[b] >= kEpsilon) max_bucket_ = b;
}

void DecayingHistogram::subtract(double value, double weight, double time_s) {
    weight *= decay_factor(time_s);
    const int b = buckets_->find(value);
    total_ -= weight;
    if (total_ < kEpsilon) total_ = 0;
    weights_[b] -= weight;
    if (weights_[b] < kEpsilon) weights_[b] = 0;
    update_min_max();
}

bool DecayingHistogram::empty() const {
    return weights_[min_bucket_] < kEpsilon;
}

double DecayingHistogram::percentile(double p) const {
    if (empty()) return 0;
    const double threshold = p * total_;
    double partial = 0;
    int b = min_bucket_;
    for (; b < max_bucket_; ++b) {
        partial += weights_[b];
        if (partial >= threshold) break;
    }
    return b < buckets_->count() - 1 ? buckets_->start(b + 1) : buckets_->start(b);
}

double DecayingHistogram::decay_factor(double time_s) {
    if (time_s > reference_ + half_life_ * kMaxDecayExponent) shift_reference(time_s);
    return std::exp2((time_s - reference_) / half_life_);
}

// The reference moves to a multiple of the half-life near `time_s`; all weights are rescaled by
// the same power of two, which leaves every percentile unchanged.
void DecayingHistogram::shift_reference(double time_s) {
    const double reference = std::round(time_s / half_life_) * half_life_;
    const double exponent = std::floor((reference_ - reference) / half_life_ + 0.5);
    const double factor = std::ldexp(1.0, static_cast<int>(exponent));
    for (int b = min_bucket_; b <= max_bucket_; ++b) weights_[b] *= factor;
    total_ *= factor;
    update_min_max();
    reference_ = reference;
}

void DecayingHistogram::update_min_max() {
    const int last = buckets_->count() - 1;
    while (weights_[min_bucket_] < kEpsilon && min_bucket_ < last) ++min_bucket_;
    while (weights_[max_bucket_] < kEpsilon && max_bucket_ > 0) --max_bucket_;
}

VpaRecommender::VpaRecommender(VpaOptions options)
    : options_(options),
      cpu_(&vpa_cpu_buckets(), options.cpu_half_life_s),
      memory_(&vpa_memory_buckets(), options.memory_half_life_s) {
    if (!(options_.memory_interval_s > 0))
        throw model::InputError("VPA: the memory aggregation interval must be positive");
}

void VpaRecommender::start_container() {
    containers_.emplace_back();
    current_ = containers_.size() - 1;
}

void VpaRecommender::select_container(std::size_t index) {
    if (index >= containers_.size()) containers_.resize(index + 1);
    current_ = index;
}

void VpaRecommender::observe(const Sample& s) {
    ContainerState& c = container();
    // ContainerState.addCPUSample: one sample per timestamp, later ones only, each of the same
    // weight (AggregateContainerState.addCPUSample). A NaN usage is no sample (upstream's would
    // turn into a negative amount, which it discards).
    if (s.timestamp > c.last_cpu_time && !std::isnan(s.usage.cpu)) {
        cpu_.add(cpu_amount(s.usage.cpu), options_.cpu_sample_weight, s.timestamp);
        c.last_cpu_time = s.timestamp;
        if (samples_ == 0 || s.timestamp < first_sample_) first_sample_ = s.timestamp;
        if (samples_ == 0 || s.timestamp > last_sample_) last_sample_ = s.timestamp;
        ++samples_;
    }
    if (!std::isnan(s.usage.memory))
        add_memory_peak(resource_amount(s.usage.memory), s.timestamp, false);
    if (s.oom_killed) {
        // ContainerState.RecordOOM: an artificial peak above what the container was given.
        const double used = std::max(resource_amount(s.allocated.memory), c.memory_peak);
        const double needed = resource_amount(options_.oom_bump.after(used));
        add_memory_peak(needed, s.timestamp, true);
    }
}

// ContainerState.addMemorySample: one peak per aggregation interval, stamped with the
// interval's end; a higher sample in the same interval replaces the peak.
void VpaRecommender::add_memory_peak(double usage, double time_s, bool oom) {
    ContainerState& c = container();
    if (!oom && time_s < c.last_memory_time) return;  // outdated (OOM peaks always count)
    c.last_memory_time = time_s;
    if (!c.have_window) {
        c.window_end = time_s;
        c.have_window = true;
    }
    bool add_new_peak = false;
    if (time_s < c.window_end) {
        const double old_peak = std::max(c.memory_peak, c.oom_peak);
        if (old_peak != 0 && usage > old_peak) {
            memory_.subtract(old_peak, 1.0, c.window_end);
            add_new_peak = true;
        }
    } else {
        const double interval = options_.memory_interval_s;
        c.window_end += std::floor((time_s - c.window_end) / interval) * interval + interval;
        c.memory_peak = 0;
        c.oom_peak = 0;
        add_new_peak = true;
    }
    if (!add_new_peak) return;
    memory_.add(usage, 1.0, c.window_end);
    (oom ? c.oom_peak : c.memory_peak) = usage;
}

std::optional<VpaRecommendation> VpaRecommender::recommendation() const {
    if (cpu_.empty() && memory_.empty()) return std::nullopt;  // no data: no recommendation yet
    // logic.podResourceRecommender: percentile, then safety margin, then (bounds only) the
    // confidence multiplier, then the minimum resources.
    // Each step returns a whole amount (millicores, bytes), as upstream's do.
    const auto chain = [](double percentile, double unit, double margin, double factor) {
        return scaled(scaled(scaled(percentile, unit, 1), unit, 1 + margin), unit, factor);
    };
    const auto cpu_at = [&](double p, double factor) {
        return chain(cpu_.percentile(p), 1000, options_.margins.cpu, factor);
    };
    const auto memory_at = [&](double p, double factor) {
        return chain(memory_.percentile(p), 1, options_.margins.memory, factor);
    };
    const double c =
        confidence(first_sample_, last_sample_, samples_, options_.confidence_interval_s);
    const auto at_least_min = [&](Amount a) {
        return Amount{std::max(a.cpu, options_.min_cpu), std::max(a.memory, options_.min_memory)};
    };
    const double lo = options_.lower_bound_percentile, hi = options_.upper_bound_percentile;
    VpaRecommendation r;
    r.target = at_least_min(
        {cpu_at(options_.cpu_percentile, 1), memory_at(options_.memory_percentile, 1)});
    // The lower bound: multiplier 0.001, exponent -2; the upper: multiplier 1, exponent 1.
    const double lower = confidence_factor(0.001, -2, c), upper = confidence_factor(1, 1, c);
    r.lower_bound = at_least_min({cpu_at(lo, lower), memory_at(lo, lower)});
    r.upper_bound = at_least_min({cpu_at(hi, upper), memory_at(hi, upper)});
    return r;
}

std::optional<Allocation> VpaRecommender::recommend(const Sample*) {
    const auto r = recommendation();
    if (!r) return std::nullopt;
    return guaranteed(r->target);
}

VpaUpdater::VpaUpdater(VpaOptions recommender, VpaUpdaterOptions updater)
    : recommender_(recommender), options_(updater) {
    if (!(options_.interval_s > 0))
        throw model::InputError("VPA updater: the loop interval must be positive");
}

void VpaUpdater::observe(const Sample& s) {
    recommender_.observe(s);
    if (!started_) {
        started_ = true;
        pod_start_ = container_start_ = s.timestamp;
        next_loop_ = s.timestamp + options_.interval_s;
    }
    now_ = s.timestamp;
    request_ = s.allocated;
    if (s.oom_killed) {
        // The killed container ran since its (re)start; the kubelet restarts it at once.
        if (now_ - container_start_ < options_.evict_after_oom_s) quick_oom_at_ = now_;
        container_start_ = now_;
    }
}

std::optional<Allocation> VpaUpdater::recommend(const Sample*) {
    if (!started_ || now_ < next_loop_) return std::nullopt;
    while (next_loop_ <= now_) next_loop_ += options_.interval_s;
    const auto r = recommender_.recommendation();
    if (!r || !should_update(*r)) return std::nullopt;
    quick_oom_at_.reset();  // the update answers it
    return guaranteed(r->target);
}

// UpdatePriorityCalculator.AddPod and defaultPriorityProcessor.GetUpdatePriority for one
// container with CPU and memory requests.
bool VpaUpdater::should_update(const VpaRecommendation& r) const {
    const auto outside = [](double request, double lower, double upper) {
        return request < lower || request > upper;
    };
    const bool outside_range = outside(request_.cpu, r.lower_bound.cpu, r.upper_bound.cpu) ||
                               outside(request_.memory, r.lower_bound.memory, r.upper_bound.memory);
    const auto diff = [](double request, double target) {
        const double base = std::max(request, 1e-3);  // upstream: at least one milli-unit
        return std::abs(base - target) / base;
    };
    const double resource_diff =
        diff(request_.cpu, r.target.cpu) + diff(request_.memory, r.target.memory);
    const bool quick_oom = quick_oom_at_ && now_ - *quick_oom_at_ < options_.evict_after_oom_s;
    if (quick_oom) return resource_diff > 0;
    if (outside_range) return true;
    return now_ - pod_start_ >= options_.pod_lifetime_threshold_s &&
           resource_diff >= options_.min_change_priority;
}

}  // namespace phasescale::policy
