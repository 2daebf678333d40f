// The workload generator. Each job is a timeline of segments (one archetype, maybe one event,
// deterministic CPU and memory levels that move linearly or concavely between two values), then
// sampled at jittered instants with AR(1) and measurement noise on top. docs/generator.md is the
// reference for every range below.

#include <phasescale/sim/generator.hpp>

#include <phasescale/model/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>

namespace phasescale::sim {

std::string_view archetype_name(Archetype archetype) {
    switch (archetype) {
        case Archetype::startup: return "startup";
        case Archetype::loading: return "loading";
        case Archetype::warmup: return "warmup";
        case Archetype::training: return "training";
        case Archetype::growth: return "growth";
        case Archetype::tail: return "tail";
    }
    return "unknown";
}

std::string_view event_name(Event event) {
    switch (event) {
        case Event::none: return "";
        case Event::evaluation: return "eval";
        case Event::checkpoint: return "checkpoint";
        case Event::reload: return "reload";
        case Event::cache: return "cache";
        case Event::leak: return "leak";
        case Event::dropout: return "dropout";
    }
    return "unknown";
}

namespace {

using model::Random;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kHour = 3600.0;
constexpr double kPageBytes = 4096;          // working sets are whole pages
constexpr double kIntervalJitter = 0.2;      // each step is interval × U(1 - j, 1 + j)
constexpr double kMeanArrivalGapS = 180;     // jobs arrive as a Poisson process
constexpr double kMemoryNoiseSigma = 0.004;  // AR(1) log-multiplier on memory
constexpr double kMemoryNoisePhi = 0.9;
constexpr double kMemoryMeasurementSigma = 0.002;
// What users ask for: the smallest of these at least the peak times their over-provisioning.
constexpr int kCoreRequests[] = {2, 4, 8, 16, 32, 64};
constexpr int kMemoryRequestsGiB[] = {4, 8, 16, 32, 64, 128};

// ---- random helpers on top of model::Random (uniform and normal only, never std:: ones)

double uniform(Random& r, double low, double high) {
    return low + (high - low) * r.uniform();
}
double log_uniform(Random& r, double low, double high) {
    return low * std::exp(std::log(high / low) * r.uniform());
}
bool chance(Random& r, double p) {
    return r.uniform() < p;
}
template <typename T, std::size_t N>
T pick(Random& r, const T (&items)[N]) {
    return items[r.below(N)];
}

// Decorrelates the per-job seeds (SplitMix64 finaliser).
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// ---- the timeline

// How memory moves from `from` to `to` within a segment; u in [0, 1].
// linear: straight; concave(k): fast then slowing, (1 - e^{-ku}) / (1 - e^{-k}).
struct Shape {
    double k = 0;  // 0: linear
    double at(double u) const {
        if (k <= 0) return u;
        return (1 - std::exp(-k * u)) / (1 - std::exp(-k));
    }
};

struct Segment {
    Archetype phase = Archetype::training;
    Event event = Event::none;
    double begin = 0, end = 0;  // seconds since the job started
    double cpu_from = 0, cpu_to = 0;
    double mem_from = 0, mem_to = 0;
    Shape mem_shape;
    double mem_hump = 0;           // extra memory peaking mid-segment, sin(pi u)
    double cpu_sigma_scale = 1;    // AR(1) noise relative to the job's
    double spike_probability = 0;  // per sample: add spike_cores × U(0.6, 1.4)
    double spike_cores = 0;

    double cpu_at(double u) const { return cpu_from + (cpu_to - cpu_from) * u; }
    double mem_at(double u) const {
        return mem_from + (mem_to - mem_from) * mem_shape.at(u) +
               mem_hump * std::sin(3.14159265358979323846 * u);
    }
};

class Timeline {
public:
    Segment& add(Archetype phase, Event event, double duration) {
        Segment s;
        s.phase = phase;
        s.event = event;
        s.begin = end_;
        s.end = end_ + duration;
        end_ = s.end;
        segments_.push_back(s);
        return segments_.back();
    }
    double end() const { return end_; }
    const std::vector<Segment>& segments() const { return segments_; }

private:
    std::vector<Segment> segments_;
    double end_ = 0;
};

// ---- one job

struct Plan {
    JobProfile profile;
    Timeline timeline;
};

// Draws a job's profile and lays out its timeline. The order of the draws is part of the output:
// changing it changes every trace.
Plan plan_job(Random& r) {
    Plan plan;
    JobProfile& p = plan.profile;
    Timeline& tl = plan.timeline;

    // Between jobs: the model sets memory, the data pipeline CPU, the dataset the epoch length.
    const double W = log_uniform(r, 1 * kGiB, 24 * kGiB);
    p.memory_working_bytes = W;
    constexpr int kWorkers[] = {2, 3, 4, 6, 8, 12};
    p.loader_workers = pick(r, kWorkers);
    const double per_worker = uniform(r, 0.55, 0.9);  // cores one loader worker keeps busy
    const double busy = uniform(r, 0.2, 0.55);        // share of that while the GPU trains
    p.has_loading = chance(r, 0.85);
    const double pipeline = p.loader_workers * per_worker;
    p.cpu_loading_cores = p.has_loading ? 0.3 + pipeline : 0;
    double C = 0.4 + pipeline * busy;
    p.cpu_training_cores = C;

    p.epoch_s = log_uniform(r, 150, 1500);
    p.training_s = std::clamp(std::exp(std::log(2700.0) + 0.7 * r.normal()), 720.0, 14400.0);
    p.epochs = std::max(2, static_cast<int>(std::lround(p.training_s / p.epoch_s)));
    p.epoch_s = p.training_s / p.epochs;

    constexpr int kEvalEvery[] = {1, 1, 1, 2, 3, 5};
    p.eval_every = chance(r, 0.85) ? pick(r, kEvalEvery) : 0;
    p.eval_cpu_factor = chance(r, 0.5) ? uniform(r, 0.25, 0.6) : uniform(r, 1.3, 1.8);
    const double eval_s = std::clamp(uniform(r, 0.05, 0.15) * p.epoch_s, 30.0, 300.0);
    const double eval_bump = uniform(r, 0.04, 0.15) * W;
    constexpr int kCheckpointEvery[] = {0, 1, 1, 2, 5};
    p.checkpoint_every = pick(r, kCheckpointEvery);
    const double checkpoint_s = uniform(r, 20, 75);
    const double checkpoint_cpu_factor = uniform(r, 1.3, 1.8);
    const double checkpoint_cpu_add = uniform(r, 0.6, 1.2);  // serialisation, one busy core
    const double checkpoint_spike = uniform(r, 0.1, 0.35) * W;
    p.reload_dips = chance(r, 0.6);
    const double reload_s = uniform(r, 10, 40);
    const double reload_factor = uniform(r, 0.15, 0.45);
    p.memory_drift_per_hour = chance(r, 0.4) ? uniform(r, 0.01, 0.06) : 0.0;

    const double g = r.uniform();
    p.growth = g < 0.2 ? Event::cache : g < 0.4 ? Event::leak : Event::none;
    const double cache_bytes = uniform(r, 0.3, 0.8) * W;
    const double cache_epoch_factor = uniform(r, 1.1, 1.4);  // the caching epoch runs slower
    const double cache_cpu_factor = uniform(r, 1.15, 1.4);
    const double cached_cpu_factor = uniform(r, 0.65, 0.85);  // later epochs read the cache
    const double leak_bytes = uniform(r, 0.2, 0.5) * W;
    const double leak_s = std::clamp(uniform(r, 0.1, 0.25) * p.training_s, 240.0, 2400.0);
    const double leak_cpu_factor = uniform(r, 1.0, 1.12);
    const int leak_after_epoch = 1 + static_cast<int>(r.below(p.epochs - 1));
    p.growth_bytes = p.growth == Event::cache  ? cache_bytes
                     : p.growth == Event::leak ? leak_bytes
                                               : 0.0;

    p.cpu_ar_coefficient = uniform(r, 0.6, 0.92);
    p.cpu_ar_sigma = uniform(r, 0.03, 0.08);
    p.cpu_measurement_sigma = uniform(r, 0.03, 0.07);
    p.dropout_probability = uniform(r, 0.001, 0.006);

    // 1. start-up: imports, pulling data; low CPU with spikes, memory from almost nothing.
    double mem = uniform(r, 2, 24) * kMiB;
    {
        Segment& s = tl.add(Archetype::startup, Event::none, uniform(r, 30, 180));
        s.cpu_from = s.cpu_to = uniform(r, 0.05, 0.3);
        s.spike_probability = 0.3;
        s.spike_cores = uniform(r, 0.5, 1.5);
        s.cpu_sigma_scale = 2;
        s.mem_from = mem;
        s.mem_to = mem = uniform(r, 250, 900) * kMiB;
        s.mem_shape.k = 3;
    }
    // 2. data loading and preprocessing: the loader workers busy, buffers filling.
    {
        const double duration = std::clamp(uniform(r, 0.3, 0.8) * p.epoch_s, 60.0, 900.0);
        const double buffers = uniform(r, 0.15, 0.45) * W;
        if (p.has_loading) {
            Segment& s = tl.add(Archetype::loading, Event::none, duration);
            s.cpu_from = p.cpu_loading_cores;
            s.cpu_to = 0.9 * p.cpu_loading_cores;
            s.cpu_sigma_scale = 1.5;
            s.mem_from = mem;
            s.mem_to = mem = mem + buffers;
            s.mem_shape.k = 2;
        }
    }
    // 3. warm-up: first iterations, compilation, autotuning; medium CPU with bursts, memory up to
    // the working level.
    {
        Segment& s = tl.add(Archetype::warmup, Event::none, uniform(r, 60, 300));
        s.cpu_from = s.cpu_to = C * uniform(r, 0.4, 0.65);
        s.spike_probability = 0.25;
        s.spike_cores = C * uniform(r, 0.4, 0.8);
        s.cpu_sigma_scale = 2;
        s.mem_from = mem;
        s.mem_to = std::max(mem, W);
        s.mem_shape.k = 4;
    }
    // 4 and 5. Steady training epochs, with evaluations, checkpoints, reload dips, and maybe a
    // growth phase. Memory: `level` plus the slow drift since training began.
    const double training_start = tl.end();
    double level = W;
    auto base = [&](double t) {
        return level + W * p.memory_drift_per_hour * (t - training_start) / kHour;
    };
    auto flat = [&](Segment& s) {
        s.mem_from = base(s.begin);
        s.mem_to = base(s.end);
    };
    for (int epoch = 1; epoch <= p.epochs; ++epoch) {
        if (epoch > 1 && p.reload_dips) {
            Segment& s = tl.add(Archetype::training, Event::reload, reload_s);
            s.cpu_from = s.cpu_to = C * reload_factor;
            flat(s);
        }
        if (epoch == 1 && p.growth == Event::cache) {
            Segment& s = tl.add(Archetype::growth, Event::cache, p.epoch_s * cache_epoch_factor);
            s.cpu_from = s.cpu_to = C * cache_cpu_factor;
            flat(s);
            s.mem_to += cache_bytes;
            s.mem_shape.k = 2.5;
            level += cache_bytes;
            C *= cached_cpu_factor;
        } else {
            Segment& s = tl.add(Archetype::training, Event::none, p.epoch_s);
            s.cpu_from = s.cpu_to = C;
            flat(s);
        }
        if (epoch == leak_after_epoch && p.growth == Event::leak) {
            Segment& s = tl.add(Archetype::growth, Event::leak, leak_s);
            s.cpu_from = s.cpu_to = C * leak_cpu_factor;
            flat(s);
            s.mem_to += leak_bytes;
            level += leak_bytes;
        }
        if (p.eval_every > 0 && (epoch % p.eval_every == 0 || epoch == p.epochs)) {
            Segment& s = tl.add(Archetype::training, Event::evaluation, eval_s);
            s.cpu_from = s.cpu_to = C * p.eval_cpu_factor;
            flat(s);
            s.mem_hump = eval_bump;
        }
        const bool save =
            epoch == p.epochs || (p.checkpoint_every > 0 && epoch % p.checkpoint_every == 0);
        if (save) {
            Segment& s = tl.add(Archetype::training, Event::checkpoint, checkpoint_s);
            s.cpu_from = s.cpu_to = C * checkpoint_cpu_factor + checkpoint_cpu_add;
            flat(s);
            s.mem_hump = checkpoint_spike;
        }
    }
    // 6. tail: shutting down; CPU falls, memory is released.
    {
        const double from = base(tl.end());
        Segment& s = tl.add(Archetype::tail, Event::none, uniform(r, 45, 240));
        s.cpu_from = C * uniform(r, 0.15, 0.35);
        s.cpu_to = uniform(r, 0.005, 0.03);
        s.mem_from = from;
        s.mem_to = from * uniform(r, 0.08, 0.25);
        s.mem_shape.k = 5;
    }
    return plan;
}

// Samples the timeline: jittered instants, AR(1) CPU noise (correlated from one sample to the
// next), lognormal measurement noise, spikes, dropouts; then the allocation the user asked for.
GeneratedJob sample_job(Random& r, Plan plan, double start, double interval) {
    GeneratedJob job;
    job.profile = plan.profile;
    const JobProfile& p = job.profile;
    const std::vector<Segment>& segments = plan.timeline.segments();
    const double total = plan.timeline.end();

    const double phi = p.cpu_ar_coefficient;
    const double innovation = std::sqrt(1 - phi * phi);
    const double memory_innovation = std::sqrt(1 - kMemoryNoisePhi * kMemoryNoisePhi);
    double a = r.normal();  // stationary from the start
    double b = r.normal();
    std::size_t k = 0;
    std::int64_t previous = 0;

    for (double clock = 0; clock < total;
         clock += interval * uniform(r, 1 - kIntervalJitter, 1 + kIntervalJitter)) {
        while (k + 1 < segments.size() && clock >= segments[k].end) ++k;
        const Segment& s = segments[k];
        const double u = std::clamp((clock - s.begin) / (s.end - s.begin), 0.0, 1.0);

        Sample sample;
        sample.timestamp = std::llround(start + clock);
        if (!job.samples.empty()) sample.timestamp = std::max(sample.timestamp, previous + 1);
        previous = sample.timestamp;
        sample.phase = s.phase;
        sample.event = s.event;

        a = phi * a + innovation * r.normal();
        const double sigma = p.cpu_ar_sigma * s.cpu_sigma_scale;
        double cpu = s.cpu_at(u) * std::exp(sigma * a - 0.5 * sigma * sigma);
        if (s.spike_probability > 0 && chance(r, s.spike_probability)) {
            cpu += s.spike_cores * uniform(r, 0.6, 1.4);
        }
        const double m = p.cpu_measurement_sigma;
        cpu *= std::exp(m * r.normal() - 0.5 * m * m);

        b = kMemoryNoisePhi * b + memory_innovation * r.normal();
        double memory = s.mem_at(u) * std::exp(kMemoryNoiseSigma * b) *
                        std::exp(kMemoryMeasurementSigma * r.normal());

        if (chance(r, p.dropout_probability)) {
            cpu = uniform(r, 0, 0.004);
            sample.event = Event::dropout;
        }
        sample.cpu_cores = std::max(0.0, std::round(cpu * 1000) / 1000);
        sample.memory_bytes = std::max(1.0, std::round(memory / kPageBytes)) * kPageBytes;
        job.samples.push_back(sample);
    }

    // The request: a round number above the peak, as users over-provision.
    double cpu_peak = 0, memory_peak = 0;
    for (const Sample& s : job.samples) {
        cpu_peak = std::max(cpu_peak, s.cpu_cores);
        memory_peak = std::max(memory_peak, s.memory_bytes);
    }
    const double cpu_want = cpu_peak * uniform(r, 1.1, 1.8);
    const double memory_want = memory_peak * uniform(r, 1.15, 2.0);
    job.cpu_limit_cores = kCoreRequests[std::size(kCoreRequests) - 1];
    for (int cores : kCoreRequests) {
        if (cores >= cpu_want) {
            job.cpu_limit_cores = cores;
            break;
        }
    }
    job.memory_limit_bytes = kMemoryRequestsGiB[std::size(kMemoryRequestsGiB) - 1] * kGiB;
    for (int gib : kMemoryRequestsGiB) {
        if (gib * kGiB >= memory_want) {
            job.memory_limit_bytes = gib * kGiB;
            break;
        }
    }
    // A container cannot use more CPU than its limit (throttling) or more memory (OOM kill).
    for (Sample& s : job.samples) {
        s.cpu_cores = std::min(s.cpu_cores, static_cast<double>(job.cpu_limit_cores));
        s.memory_bytes = std::min(s.memory_bytes, job.memory_limit_bytes - kPageBytes);
    }
    return job;
}

void validate(const GeneratorOptions& options) {
    if (options.jobs < 1) {
        throw std::invalid_argument("jobs must be at least 1, not " + std::to_string(options.jobs));
    }
    if (!std::isfinite(options.interval_s) || options.interval_s < 1) {
        throw std::invalid_argument(
            "interval must be at least 1 s (timestamps are whole seconds), "
            "not " +
            std::to_string(options.interval_s));
    }
    if (!std::isfinite(options.start_time) || options.start_time < 0) {
        throw std::invalid_argument("start time must be a unix time in seconds, not " +
                                    std::to_string(options.start_time));
    }
}

std::string job_id(int index, int jobs) {
    const int width = std::max(4, static_cast<int>(std::to_string(jobs).size()));
    std::string number = std::to_string(index + 1);
    return "job-" + std::string(width - std::min<int>(width, number.size()), '0') + number;
}

// Generates the jobs one at a time, each from its own random stream, and hands them to `sink`.
template <typename Sink>
void for_each_job(const GeneratorOptions& options, Sink&& sink) {
    validate(options);
    double offset = 0;
    for (int i = 0; i < options.jobs; ++i) {
        Random r(mix(mix(options.seed) ^ static_cast<std::uint64_t>(i)));
        const double gap = -kMeanArrivalGapS * std::log(1 - r.uniform());
        if (i > 0) offset += gap;
        Plan plan = plan_job(r);
        plan.profile.start_offset_s = offset;
        GeneratedJob job =
            sample_job(r, std::move(plan), options.start_time + offset, options.interval_s);
        job.id = job_id(i, options.jobs);
        sink(std::move(job));
    }
}

constexpr const char* kHeader =
    "timestamp,pod.id,cpu.usage.cores,mem.working.set,cpu.num.cores,mem.limit,phase,event\n";

// Integers only, so the text is the same with any locale or library.
void write_rows(const GeneratedJob& job, std::ostream& csv) {
    char line[256];
    const long long limit = std::llround(job.memory_limit_bytes);
    for (const Sample& s : job.samples) {
        const long long millicores = std::llround(s.cpu_cores * 1000);
        const int n =
            std::snprintf(line, sizeof line, "%lld,%s,%lld.%03lld,%lld,%d,%lld,%s,%s\n",
                          static_cast<long long>(s.timestamp), job.id.c_str(), millicores / 1000,
                          millicores % 1000, std::llround(s.memory_bytes), job.cpu_limit_cores,
                          limit, archetype_name(s.phase).data(), event_name(s.event).data());
        csv.write(line, n);
    }
}

}  // namespace

std::vector<GeneratedJob> generate_jobs(const GeneratorOptions& options) {
    std::vector<GeneratedJob> jobs;
    for_each_job(options, [&](GeneratedJob job) { jobs.push_back(std::move(job)); });
    return jobs;
}

void write_traces_csv(const std::vector<GeneratedJob>& jobs, std::ostream& csv) {
    csv << kHeader;
    for (const GeneratedJob& job : jobs) write_rows(job, csv);
}

GeneratorSummary generate_traces(const GeneratorOptions& options, std::ostream& csv) {
    GeneratorSummary summary;
    summary.first_timestamp = std::numeric_limits<std::int64_t>::max();
    summary.last_timestamp = std::numeric_limits<std::int64_t>::min();
    validate(options);
    csv << kHeader;
    for_each_job(options, [&](GeneratedJob job) {
        write_rows(job, csv);
        ++summary.jobs;
        summary.rows += job.samples.size();
        if (!job.samples.empty()) {
            summary.first_timestamp =
                std::min(summary.first_timestamp, job.samples.front().timestamp);
            summary.last_timestamp = std::max(summary.last_timestamp, job.samples.back().timestamp);
        }
    });
    return summary;
}

}  // namespace phasescale::sim
