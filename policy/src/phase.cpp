#include <phasescale/model/error.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/phase.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace phasescale::policy {
namespace {

double statistic(const model::Summary& s, double q) {
    if (q == 0.5) return s.p50;
    if (q == 0.9) return s.p90;
    if (q == 0.95) return s.p95;
    if (q == 0.99) return s.p99;
    if (q == 1.0) return s.max;
    throw model::InputError("phase policy: quantile " + std::to_string(q) +
                            " is not kept in phase statistics (use 0.5, 0.9, 0.95, 0.99 or 1)");
}

std::size_t usage_column(const model::PhaseStatistics& stats, const std::string& name) {
    const auto at = std::find(stats.usage_columns.begin(), stats.usage_columns.end(), name);
    if (at == stats.usage_columns.end()) {
        throw model::InputError("phase policy: the model has no statistics of column \"" + name +
                                "\"");
    }
    return static_cast<std::size_t>(at - stats.usage_columns.begin());
}

// The online update's reach: margins stay within these, whatever a container does.
constexpr double kLowestAdaptedMargin = -0.5, kHighestAdaptedMargin = 4;
// A phase's rise from the model's statistics never multiplies memory by more than this.
constexpr double kLargestPhaseStep = 4;
// Once a container has shown its working set, its phase's rise is at most this quantile of the
// rises of the model's samples that had shown theirs, where at least kSettledSamples did.
constexpr double kSettledRiseQuantile = 0.99;
constexpr std::size_t kSettledSamples = 100;
// A container throttled in at least this share of its CPU periods wants more than its limit
// throughout, not in bursts.
constexpr double kMostPeriods = 0.5;
// A flat demand right at a request (a job using every core of its node) is throttled there by a
// hair, in some of its samples: this share above that request serves it.
constexpr double kAboveFlatDemand = 0.1;
// Samples within this share of the limit are at it: the noise of a flat demand's samples.
constexpr double kNearLimit = 0.05;

// The quantile q of one resource over a container's own samples (0 without any).
double own_quantile(const Ring<Amount>& seen, double Amount::*resource, double q) {
    std::vector<double> values;
    for (const Amount& a : seen.values()) values.push_back(a.*resource);
    return model::quantile(std::move(values), q);
}

const model::PhaseStatistics& statistics_of(const model::PhaseModel& model) {
    if (!model.statistics) {
        throw model::InputError(
            "phase policy: the model has no phase statistics (an AI4DL model?): "
            "train one with `phasescale train`");
    }
    return *model.statistics;
}

}  // namespace

PhaseRecommender::PhaseRecommender(const model::PhaseModel& model, PhaseOptions options)
    : model_(&model),
      options_(std::move(options)),
      cpu_column_(usage_column(statistics_of(model), options_.cpu_column)),
      memory_column_(usage_column(statistics_of(model), options_.memory_column)) {
    // Check the quantiles now rather than at the first sample.
    statistic({}, options_.cpu_quantile);
    statistic({}, options_.memory_quantile);
    if (options_.rise_quantile != 0) statistic({}, options_.rise_quantile);
    if (options_.debounce < 1) throw model::InputError("phase policy: debounce must be at least 1");
    if (options_.adapt_samples < 0)
        throw model::InputError("phase policy: adapt samples must not be negative");
    if (!(options_.cpu_target >= 0 && options_.cpu_target < 1))
        throw model::InputError("phase policy: the CPU target fulfilment must be in [0, 1)");
    if (!(options_.cpu_step >= 0) || !(options_.memory_step >= 0))
        throw model::InputError("phase policy: adaptation steps must not be negative");
    if (!(options_.throttled_seconds >= 0))
        throw model::InputError("phase policy: the throttled seconds must not be negative");
    if (options_.recent_samples < 1)
        throw model::InputError("phase policy: the recent samples must be at least 1");
    if (!(options_.max_growth == 0 || options_.max_growth >= 1))
        throw model::InputError(
            "phase policy: the largest growth per step must be 0 (none) or at least 1");
    if (!(options_.cpu_keep >= 0 && options_.cpu_keep <= 1) ||
        !(options_.memory_keep >= 0 && options_.memory_keep <= 1))
        throw model::InputError(
            "phase policy: the share of a request kept per step must be in [0, 1]");
    if (!(options_.busy_cpu >= 0))
        throw model::InputError("phase policy: the busy CPU must not be negative");
    if (!(options_.memory_next_step >= 0))
        throw model::InputError("phase policy: the memory's next step must not be negative");
    // Bounded, so that a long-running container keeps a fixed footprint: an operator tracking
    // 5,000 containers of 8 phases keeps at most 20 MB of them (256 per phase would be 80 MB,
    // for allocations within 0.4% of these on the savings benchmarks).
    constexpr std::size_t kSeenPerPhase = 64;
    seen_in_phase_.assign(static_cast<std::size_t>(model.phases()), Ring<Amount>(kSeenPerPhase));
    settled_in_phase_.assign(static_cast<std::size_t>(model.phases()), Ring<Amount>(kSeenPerPhase));
    seen_recently_ = Ring<Amount>(options_.recent_samples);
    demand_seen_ = Ring<double>(options_.recent_samples);
    recent_memory_ = Ring<std::pair<double, double>>(options_.trend_samples);
    if (!options_.oracle && !options_.no_model) stream_.emplace(model);
}

Amount PhaseRecommender::model_amount(int phase) const {
    const model::PhaseStats& s = model_->statistics->phases[static_cast<std::size_t>(phase)];
    return {statistic(s.usage[cpu_column_], options_.cpu_quantile),
            statistic(s.usage[memory_column_], options_.memory_quantile)};
}

// The phase's statistics: the model's until this container has `adapt_samples` samples in it, then
// its own quantiles there; while a visit has fewer than `first_resize_samples` (too few for a
// quantile), those of its recent samples, whatever their phase.
Amount PhaseRecommender::phase_amount(int phase) const {
    const Ring<Amount>& own = seen_in_phase_[static_cast<std::size_t>(phase)];
    const bool own_enough = options_.adapt_samples > 0 &&
                            own.size() >= static_cast<std::size_t>(options_.adapt_samples);
    if (!options_.no_model && !own_enough) return model_amount(phase);
    const bool too_few = own.size() < options_.first_resize_samples;
    return own_quantiles(too_few ? seen_recently_ : own).value_or(Amount{});
}

// This container's CPU and memory quantiles over samples of its own; none without samples.
// Memory that spiked and came back down is provisioned for a higher spike (memory_spike_factor).
std::optional<Amount> PhaseRecommender::own_quantiles(const Ring<Amount>& seen) const {
    if (seen.empty()) return std::nullopt;
    double memory = own_quantile(seen, &Amount::memory, options_.memory_quantile);
    if (options_.memory_spike_factor > 1 &&
        usage_floor(latest_usage_.memory, 0, memory_margin()) < memory) {
        const double median = own_quantile(seen, &Amount::memory, 0.5);
        memory = median + options_.memory_spike_factor * (memory - median);
    }
    return Amount{own_quantile(seen, &Amount::cpu, options_.cpu_quantile), memory};
}

void PhaseRecommender::enter(int phase) {
    if (stable_ != phase) {
        stable_ = phase;
        visit_samples_ = 0;
        oom_floor_ = 0;  // an OOM bump holds for the visit in which it happened
    }
}

void PhaseRecommender::remember(int phase, Amount usage) {
    seen_in_phase_[static_cast<std::size_t>(phase)].push(usage);
    if (working_set_shown_) settled_in_phase_[static_cast<std::size_t>(phase)].push(usage);
}

// Moves the container's margins toward its risk targets. CPU is judged against what the policy
// last recommended, not the allocation in force: while a cooldown holds an old allocation, its
// misses say nothing about the margin.
void PhaseRecommender::adapt(const Sample& s, bool throttled) {
    if (options_.cpu_target > 0 && last_cpu_) {
        const double missed = throttled || s.usage.cpu > *last_cpu_ ? 1.0 : 0.0;
        adapted_.cpu =
            std::clamp(adapted_.cpu + options_.cpu_step * (missed - (1 - options_.cpu_target)),
                       kLowestAdaptedMargin, kHighestAdaptedMargin);
    }
    if (s.oom_killed)
        adapted_.memory = std::min(adapted_.memory + options_.memory_step, kHighestAdaptedMargin);
}

void PhaseRecommender::observe(const Sample& sample) {
    // Before its first resize of its own, a container runs on the request it started with, not on
    // an estimate whose misses the CPU target allows: one throttled sample says it started low.
    const bool on_starting_request = young();
    seen_recently_.push(sample.usage);
    ++observed_;
    if (observed_ == 1) first_time_ = sample.timestamp;
    const double interval = sample.timestamp - (observed_ == 1 ? sample.timestamp : latest_time_);
    latest_time_ = sample.timestamp;
    const double memory_before = latest_usage_.memory;
    latest_usage_ = sample.usage;
    remember_cut(sample.allocated.cpu);
    cpu_in_force_ = sample.allocated.cpu;
    memory_in_force_ = sample.allocated.memory;
    // Throttled in more periods than the CPU target allows: its usage is less than it wants.
    const bool throttled =
        sample.cpu_throttled > (options_.cpu_target > 0 ? 1 - options_.cpu_target : 0);
    throttled_for_ = throttled ? throttled_for_ + interval : 0;
    throttled_ = throttled;
    // Its usage is what it wants where it was neither throttled in any period nor within its
    // margin of the limit (where a phase that wants more may have begun): throttled_floor's demand.
    demand_seen_.push(at_risk(sample, {cpu_margin(), 0}, 0).cpu ? 0 : sample.usage.cpu);
    // Or OOM-killed, or memory within its margin of the OOM line or ramping to it: the Actuator's
    // memory risk.
    constrained_ = throttled || at_risk(sample, {0, memory_margin()}, memory_before).memory;
    if (recent_memory_.size() == options_.trend_samples && options_.trend_samples > 0)
        earlier_peak_memory_ =
            std::max(earlier_peak_memory_, recent_memory_.values().front().second);
    recent_memory_.push({sample.timestamp, sample.usage.memory});
    adapt(sample, throttled);
    working_set_shown_ = working_set_shown_ || shows_working_set();
    follow_phase(sample);
    // After the phase: a visit that begins with a kill keeps its bump.
    if (sample.oom_killed) {
        oom_floor_ = std::max(oom_floor_, options_.oom_bump.after(oom_line(sample)));
    }
    const bool grows =
        throttled && (on_starting_request || throttled_for_ >= options_.throttled_seconds);
    throttle_floor_ = grows ? throttled_floor(std::max(sample.allocated.cpu, sample.limit.cpu),
                                              sample.cpu_throttled, sample.cpu_throttled_cores,
                                              on_starting_request)
                            : 0;
}

// Where a cut of the CPU request (to `allocated`) came from, if the container was not throttled
// there: its demand was below that request then.
void PhaseRecommender::remember_cut(double allocated) {
    if (allocated < cpu_in_force_)
        cpu_before_cut_ = throttled_ ? 0 : cpu_in_force_;
    else if (allocated > cpu_in_force_)
        cpu_before_cut_ = 0;
}

// CPU after samples throttled at `limit` (the latest in `share` of its periods, for `excess`
// throttled CPU-seconds per second, NaN where not measured).
//
// Throttled in most periods, as a flat demand above the limit is, with its throttled seconds
// measured: its demand times (1 + margin). CFS throttles, in each period past the quota, the run
// queue of every CPU the container runs on, and sums their throttled time, so a demand of D cores
// under a limit of L is throttled for about D - L of them. The demand of its throttled periods is
// then the limit plus the excess per throttled period, and no more than all it used and missed
// over them (the bound where the limit was raised within the window). Grown 1.5x per tick
// instead, training jobs started at 0.5 cores met 74.7% of their CPU demand at the operator's
// tick, and jobs of up to 8 cores started at 2 met 79.9% (88.4% and 89.4% with the measured
// demand; docs/savings.md). Throttled in fewer periods, it bursts above the limit within the
// window, and the mean excess understates the highest burst: there, and where the throttled
// seconds are not measured, the rules below (at the tick, the thirteen programs of
// bench/programs met 94.4% of their CPU demand with the measured demand there too, 95.4% so).
//
// Else throttle_growth times the limit, since a throttled container's demand cannot be seen. But
// where it ran unthrottled above this limit lately (a cut below a flat demand: at a margin of 0, a
// 2-core LSTM cut to 1.93 cores and held at 2.9 for a cooldown), that demand is known, and it times
// (1 + margin) suffices (at equal risk, 7% less CPU on the torch runs of bench/savings.sh, at 95.5%
// of demand met instead of 96.2%: docs/savings.md). Never more than the growth: the demand of an
// earlier, busier phase is no reason to give more. And only where it was throttled in most of its
// periods, as a flat demand above the limit is: throttled in fewer, it bursts above the limit
// within the averages that demand was read from, and they do not say how far (a learner waiting
// 0.5-3 s for data between bursts of two cores showed 1.4 cores over 15 s; docs/savings.md). The
// demand itself must exceed the limit, not only with its margin: a limit set at that demand plus
// its margin and throttled wants more than it ever showed (a tokenizer that had shown one core, cut
// to 1.1, then training at two: its demand plus its margin, 1.12, was a growth of 2%, less than a
// resize's minChange). Nor, throttled so right after a cut, more than kAboveFlatDemand above the
// request it ran unthrottled at before: a flat job cut from 2 to 1.97 cores held 2.96 for a
// cooldown (at equal risk, 9.8% more CPU on six train.py runs, 4.6% more on torch, at the same
// fulfilment: docs/savings.md). On the request it started with, throttled in fewer than most
// periods but at that request in the rest (flat_at_limit): kAboveFlatDemand above it.
double PhaseRecommender::throttled_floor(double limit, double share, double excess,
                                         bool on_starting_request) const {
    if (share >= kMostPeriods && std::isfinite(excess) && excess > 0) {
        const double demand =
            std::min(limit + excess / share, (latest_usage_.cpu + excess) / share);
        return usage_floor(demand, 0, cpu_margin());
    }
    double grown = options_.throttle_growth * limit;
    if (share < kMostPeriods) {
        const bool flat = on_starting_request && flat_at_limit(limit, share);
        return flat ? std::min(grown, limit * (1 + kAboveFlatDemand)) : grown;
    }
    if (cpu_before_cut_ > limit) grown = std::min(grown, cpu_before_cut_ * (1 + kAboveFlatDemand));
    const std::vector<double> seen = demand_seen_.values();
    if (seen.empty()) return grown;
    const double demand = *std::max_element(seen.begin(), seen.end());
    return demand > limit ? std::min(usage_floor(demand, 0, cpu_margin()), grown) : grown;
}

// Whether the part of the latest observation that was not throttled (all but `share` of it, the
// rest at the limit) used the limit within kNearLimit: a flat demand right at the limit, whose
// throttled samples are its noise, not bursts above it. A 2-core job on the 2 cores it started
// with, averaged over a 15 s tick, showed 1.96 cores, one 2 s sample of seven at 2.005, and was
// held at 3 cores for a cooldown (the torch runs at the operator's tick: 4.4% more CPU for the
// same 99.6% of demand met; docs/savings.md). Only on the request it started with: a request the
// policy sized is its estimate times its margin, and a throttle there is the estimate's miss (on
// every request, at equal risk at the tick torch met 92.9% of demand held out).
bool PhaseRecommender::flat_at_limit(double limit, double share) const {
    if (!(share < 1)) return false;
    const double unthrottled = (latest_usage_.cpu - share * limit) / (1 - share);
    return unthrottled >= (1 - kNearLimit) * limit;
}

// The raw phase of the sample, and the stable phase after the debounce.
void PhaseRecommender::follow_phase(const Sample& sample) {
    if (options_.no_model) {  // one phase, entered at the first sample, never left
        unknown_ = false;
        remember(0, sample.usage);
        enter(0);
        return;
    }
    if (options_.oracle) {  // the oracle is told phases in recommend(); it learns levels alike
        if (sample.known_phase >= 0) remember(sample.known_phase, sample.usage);
        return;
    }
    if (sample.features == nullptr)
        throw model::InputError("phase policy: a sample without the model's features");
    const std::optional<int> raw = stream_->push(sample.features);
    if (!raw) {  // history not yet full
        unknown_ = true;
        return;
    }
    unknown_ = model_->statistics->unknown(*raw, stream_->distance(), options_.unknown_distance);
    if (unknown_) {
        ++unknown_samples_;
        candidate_run_ = 0;
        return;
    }
    remember(*raw, sample.usage);
    if (*raw == candidate_) {
        ++candidate_run_;
    } else {
        candidate_ = *raw;
        candidate_run_ = 1;
    }
    if (!stable_ || candidate_run_ >= options_.debounce) enter(candidate_);
    ++visit_samples_;
}

std::optional<Allocation> PhaseRecommender::recommend(const Sample* next) {
    std::optional<Amount> want = estimate(next);
    const bool early = !want || young();
    // Throttled, OOM-killed or within its memory margin of the OOM line before its first resize
    // (it started below what it uses), a container does not wait for samples or a phase: its own
    // samples are the estimate, and nothing is cut on so few.
    if (early && !constrained_) return early_memory_raise();
    if (early) want = own_quantiles(seen_recently_);
    if (!want) return std::nullopt;  // nothing observed yet
    const Amount sized = size(*want);
    // The CPU margin adapts to what the estimate missed, not to what the step bound held back:
    // else a bounded step would count as a miss and inflate the margin for good.
    last_cpu_ = sized.cpu;
    const Allocation a = provision(sized);
    // Memory that stepped up at its latest reading is mid-change, whatever it did before, and may
    // take the same step again before the next resize: where memory would be cut below that
    // (step_hold), nothing is cut at this reading, CPU neither (a CPU cut alone would start the
    // cooldown and hold memory for it). A job that waited idle for its peers at 0.22 GiB read 0.99
    // at the operator's fourth tick and was cut from 4 GiB to 2.53; its next 2 s brought the
    // optimizer's buffers, 2.6 GiB, and an OOM kill (docs/savings.md#step-hold). The next reading
    // that does not step lets the cut through.
    const bool mid_step = a.request.memory < step_hold();
    return early || mid_step ? no_cut(guaranteed({cpu_in_force_, memory_in_force_}), a) : a;
}

// Before its first resize, a container not at risk keeps the requests it started with, but for
// memory that its own samples, sized as any estimate (its growth carried over the horizon), put
// above the request in force: that is raised at once, as it would be after the first resize. A
// dataset decoded into memory read 1.1, 4 and 5.5 GiB at the operator's first three ticks, under
// a request raised to 7.6 at the second, and was OOM-killed at the fourth (7.7 GiB), which would
// have been its first resize (docs/savings.md#five-programs-63).
std::optional<Allocation> PhaseRecommender::early_memory_raise() const {
    const std::optional<Amount> own = own_quantiles(seen_recently_);
    if (!own) return std::nullopt;
    const double memory = provision(size(*own)).request.memory;
    if (!(memory > memory_in_force_)) return std::nullopt;
    return guaranteed({cpu_in_force_, memory});
}

// What the container is expected to use next, before margins and floors.
std::optional<Amount> PhaseRecommender::estimate(const Sample* next) {
    if (options_.oracle) {
        if (next == nullptr)
            throw model::InputError("oracle policy: needs the next sample's phase");
        unknown_ = next->known_phase < 0;
        if (!unknown_) {
            enter(next->known_phase);
            ++visit_samples_;
        }
    }
    // Before the first phase (the history is not full yet) the allocation in force stays: the
    // model's sizes come from other executions, of other sizes, and a container is first resized
    // from samples of its own.
    if (!stable_ && unknown_ && unknown_samples_ == 0) return std::nullopt;
    if (unknown_ || !stable_) return own_quantiles(seen_recently_);

    Amount want = phase_amount(*stable_);
    if (options_.proactive) {
        const model::PhaseStatistics& stats = *model_->statistics;
        const model::PhaseStats& s = stats.phases[static_cast<std::size_t>(*stable_)];
        if (static_cast<double>(visit_samples_) > s.visit_samples.p50) {
            Eigen::Index next_phase;
            if (stats.transitions.row(*stable_).maxCoeff(&next_phase) > 0) {
                const Amount upcoming = phase_amount(static_cast<int>(next_phase));
                want = {std::max(want.cpu, upcoming.cpu), std::max(want.memory, upcoming.memory)};
            }
        }
    }
    if (options_.horizon_s > 0 && !options_.no_model)
        want.memory = std::max(want.memory, upcoming_memory());
    return want;
}

// The latest memory usage times the rise in the model's statistics (its `rise_quantile`) of the
// stable phase, or of the phase the latest sample is in where that rises more (before the
// debounce: a floor errs on the safe side). A phase whose training samples were followed within a
// minute by more memory (a ramp into the next phase, a checkpoint's copy of the state) is
// provisioned for it before it comes, in executions the model never saw too (a ratio carries over
// between sizes). 0 without a known phase of the model, or without such statistics (a model
// written before they were kept).
double PhaseRecommender::rising_memory() const {
    if (options_.rise_quantile <= 0 || options_.no_model || !stable_ || unknown_) return 0;
    const auto rise_of = [&](int phase) {
        const model::PhaseStats& s = model_->statistics->phases[static_cast<std::size_t>(phase)];
        if (s.rise.size() <= memory_column_) return 0.0;
        const double rise = statistic(s.rise[memory_column_], options_.rise_quantile);
        if (!working_set_shown_ || s.settled_rise.size() <= memory_column_ ||
            s.settled_rise[memory_column_].count < kSettledSamples)
            return rise;
        return std::min(rise, statistic(s.settled_rise[memory_column_],
                                        std::max(options_.rise_quantile, kSettledRiseQuantile)));
    };
    const double rise = std::max(rise_of(*stable_), candidate_run_ > 0 ? rise_of(candidate_) : 0);
    return latest_usage_.memory * std::min(rise, kLargestPhaseStep);
}

// The memory of the phases likely to follow the stable one, once its visit may end before the
// next resize; 0 otherwise: what this container used in the likely next phases it has been in. A
// phase it has not been in adds nothing here (the rise of its phase covers the step into it): the
// model's absolute sizes come from other executions, and the ratio between two phases' sizes
// mixes executions of other sizes (it held the torch runs of bench/savings.sh 30% above their
// flat memory for nothing). Once the container has shown its working set, only what it used there
// since counts: a phase it passed through at start-up held its loading, not what the phase needs
// at work (a CNN's preprocessing peak of 4.07 GiB, one sample in another phase, held it at 4.48
// GiB for the last 8 minutes of its training at 2.2-2.6: docs/savings.md#settled-look-ahead).
double PhaseRecommender::upcoming_memory() const {
    const auto from = static_cast<Eigen::Index>(*stable_);
    const std::vector<model::PhaseStats>& phases = model_->statistics->phases;
    if (static_cast<double>(visit_samples_) + horizon_samples() <
        phases[static_cast<std::size_t>(from)].visit_samples.p50)
        return 0;
    const model::Matrix& transitions = model_->statistics->transitions;
    const double visits_from = transitions.row(from).sum();
    if (visits_from <= 0) return 0;  // no training visit ever left this phase
    double most = 0;
    for (Eigen::Index to = 0; to < transitions.cols(); ++to) {
        const Ring<Amount>& seen =
            (working_set_shown_ ? settled_in_phase_ : seen_in_phase_)[static_cast<std::size_t>(to)];
        if (to == from || seen.empty() ||
            transitions(from, to) < options_.likely_next * visits_from)
            continue;
        most = std::max(most, own_quantile(seen, &Amount::memory, options_.memory_quantile));
    }
    return most;
}

// The estimate times (1 + margin), never below the latest usage (memory: plus its growth over the
// horizon) times (1 + headroom) and (1 + margin) (a margin below 0 counts as 0 there). Memory is
// also never below the phase's rise (rising_memory) times (1 + margin), as any estimate: the rise
// is a quantile of other executions, and this one may spike further (without the margin, 26 of
// bench/savings.sh's 100 generated jobs were OOM-killed, most by a spike 1.14-1.25x above a level
// their phase's p95 rise did not cover; with it 8: docs/savings.md).
Amount PhaseRecommender::size(Amount want) const {
    auto sized = [](double estimate, double floor, double margin) {
        return std::max(estimate * (1 + margin), floor);
    };
    const double memory = sized(want.memory, memory_floor(projected_memory()), memory_margin());
    return {sized(want.cpu, usage_floor(latest_usage_.cpu, options_.headroom.cpu, cpu_margin()),
                  cpu_margin()),
            std::max(memory, usage_floor(rising_memory(), 0, memory_margin()))};
}

// The margins in force: the autoscaler's plus what the online risk targets added.
double PhaseRecommender::cpu_margin() const {
    return options_.margins.cpu + adapted_.cpu;
}
double PhaseRecommender::memory_margin() const {
    return options_.margins.memory + adapted_.memory;
}

// Usage times (1 + headroom) and (1 + margin), a margin below 0 counting as 0: no recommendation
// goes below it.
double PhaseRecommender::usage_floor(double usage, double headroom, double margin) {
    return usage * (1 + headroom) * (1 + std::max(0.0, margin));
}

// Memory's floor for this usage: usage_floor, and at least memory_min_headroom above it.
double PhaseRecommender::memory_floor(double usage) const {
    return std::max(usage_floor(usage, options_.headroom.memory, memory_margin()),
                    usage + options_.memory_min_headroom);
}

// One step from the requests in force at most (step_bounded, memory_hold); CPU never below a
// throttled sample's growth; memory never below an OOM bump nor below the most its recent samples
// used plus the margin (and memory_min_headroom): a bound that held memory under what the container
// already uses would kill it for sure. Every recommendation passes here, the operator's and the
// simulator's alike.
Allocation PhaseRecommender::provision(Amount sized) const {
    const double used = memory_floor(recent_peak_memory());
    const double cpu =
        std::max(step_bounded(sized.cpu, cpu_in_force_, options_.cpu_keep), throttle_floor_);
    return guaranteed({cpu, std::max({step_bounded(sized.memory, memory_in_force_, 0),
                                      memory_hold(), oom_floor_, used})});
}

// Where memory that stepped up at its latest reading could take the same step again: that
// reading times the step, never above the request in force; 0 without a step. A step is growth
// by more than memory_noise past the most its other recent readings (trend_samples) used:
// climbing back after a dip is not one.
double PhaseRecommender::step_hold() const {
    const std::vector<double> memory = recent_memory();
    if (options_.memory_next_step <= 0 || memory.size() < 2) return 0;
    const double before = *std::max_element(memory.begin(), memory.end() - 1);
    const double latest = memory.back();
    if (!(before > 0 && latest > before * (1 + options_.memory_noise))) return 0;
    return std::min(memory_in_force_, latest * (latest / before));
}

// The least memory a resize may leave before the container has shown its working set: half the
// request in force (memory_keep), and where memory ramps not below memory_next_step times its
// latest usage either, nor below where the ramp gets if it grows as much again as over its last
// trend_samples (never above the request in force); at work at a level but not yet for a
// horizon, half or down to that step, whichever is lower. 0 once it has shown its working set.
double PhaseRecommender::memory_hold() const {
    const double kept = options_.memory_keep * memory_in_force_;
    const auto stepped = [&](double factor) {
        return options_.memory_next_step > 0
                   ? std::min(memory_in_force_, factor * latest_usage_.memory)
                   : kept;
    };
    if (memory_ramping())
        return std::max(kept, stepped(std::max(options_.memory_next_step, ramp_growth())));
    if (!at_work()) return kept;  // not ramping: at work, it is at a level
    // At work at a level now and shown once (observe's latch): run time only grows, so this is
    // shows_working_set() without reading the samples again.
    if (working_set_shown_) return 0;
    return std::min(kept, stepped(options_.memory_next_step));
}

// At work at a level (not ramping) and run for a horizon: what it uses now is its working set
// (model::shows_working_set, the rule the model's settled rises were kept by).
bool PhaseRecommender::shows_working_set() const {
    return model::shows_working_set(recent_cpu(), recent_memory(), latest_time_ - first_time_,
                                    working_set_rule());
}

// How many times its memory grew over its last trend_samples samples (from none: without bound).
// A ramp goes on at its pace as often as it stops: an AI4DL container grew 0.02, 0.05, 0.08,
// 0.16 GiB, 8x in three samples, and 0.80 GiB 30 s later, which a cut to 4x its latest usage
// killed (docs/savings.md).
double PhaseRecommender::ramp_growth() const {
    const std::vector<std::pair<double, double>> recent = recent_memory_.values();
    if (recent.empty()) return 1;
    const double first = recent.front().second;
    return first > 0 ? recent.back().second / first : std::numeric_limits<double>::infinity();
}

// Within [keep, max_growth] times the request in force (none in force: anything): a request
// moves gradually, a start-up ramp or a model trained on larger jobs cannot jump it 5x at once.
double PhaseRecommender::step_bounded(double wanted, double in_force, double keep) const {
    if (!(in_force > 0)) return wanted;
    if (options_.max_growth > 0) wanted = std::min(wanted, in_force * options_.max_growth);
    return std::max(wanted, in_force * keep);
}

// Whether the container's last trend_samples samples were all at work (busy_cpu): not the idle
// start of a job about to need far more. At work and not ramping, what it uses is a level; once it
// has also run for a horizon (what it uses then must last until the next resize), that level is
// its working set: a PyTorch job busy at a flat 0.3 GiB for its first 8 s (its imports) needed 2.6
// times that next.
bool PhaseRecommender::at_work() const {
    return model::at_work(recent_cpu(), working_set_rule());
}

// Whether memory grew (by more than memory_noise) at every one of the last trend_samples samples.
bool PhaseRecommender::memory_ramping() const {
    return model::growing(recent_memory(), working_set_rule());
}

model::WorkingSetRule PhaseRecommender::working_set_rule() const {
    return {options_.busy_cpu, options_.trend_samples, options_.memory_noise, options_.horizon_s};
}

// The CPU and the memory its last trend_samples samples used (fewer before it has seen as many),
// oldest first: all the working-set rule reads.
std::vector<double> PhaseRecommender::recent_cpu() const {
    std::vector<double> cpu;
    for (const Amount& a : seen_recently_.latest(options_.trend_samples)) cpu.push_back(a.cpu);
    return cpu;
}
std::vector<double> PhaseRecommender::recent_memory() const {
    std::vector<double> memory;
    for (const auto& [time, used] : recent_memory_.values()) memory.push_back(used);
    return memory;
}

// The horizon in this container's samples (by its recent sampling interval): visits are counted
// in samples, which a replay faster than real time leaves as they are.
double PhaseRecommender::horizon_samples() const {
    if (recent_memory_.size() < 2) return 0;
    const std::vector<std::pair<double, double>> recent = recent_memory_.values();
    const double interval =
        (recent.back().first - recent.front().first) / static_cast<double>(recent.size() - 1);
    return interval > 0 ? options_.horizon_s / interval : 0;
}

// The most memory its last trend_samples samples used (the latest at least). A container that
// swings within its phase is read anywhere in its swing, and at the operator's tick (a gauge read
// every 15 s) mostly between its peaks: a floor from the latest reading alone cut a job swinging
// between 1.42 and 1.84 GiB to 1.81, from a reading of 1.42, and it was OOM-killed at its next
// peak (one of the two kills of the thirteen programs at the tick: docs/savings.md).
double PhaseRecommender::recent_peak_memory() const {
    double peak = latest_usage_.memory;
    for (const auto& [time, memory] : recent_memory_.values()) peak = std::max(peak, memory);
    return peak;
}

// The latest memory usage, plus its recent growth carried over the horizon, but never further
// than the growth was seen for (a jump between two samples is not a trend to extrapolate). Only
// growth beyond what the container used before counts: climbing back after a dip is not a trend.
double PhaseRecommender::projected_memory() const {
    const double latest = latest_usage_.memory;
    if (options_.horizon_s <= 0 || recent_memory_.size() < 2) return latest;
    const std::vector<std::pair<double, double>> recent = recent_memory_.values();
    const double span = recent.back().first - recent.front().first;
    if (span <= 0) return latest;
    const double growth =
        recent.back().second - std::max(recent.front().second, earlier_peak_memory_);
    return latest + std::max(0.0, growth) / span * std::min(options_.horizon_s, span);
}

}  // namespace phasescale::policy
