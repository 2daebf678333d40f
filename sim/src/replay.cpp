#include <phasescale/policy/simple.hpp>
#include <phasescale/sim/replay.hpp>

#include <algorithm>
#include <deque>

namespace phasescale::sim {

void ResourceScore::add(const ResourceScore& o) {
    allocated += o.allocated;
    used += o.used;
    shortfall += o.shortfall;
    samples += o.samples;
    fulfilled += o.fulfilled;
    over_limit += o.over_limit;
}

void Score::add(const Score& o) {
    cpu.add(o.cpu);
    memory.add(o.memory);
    oom_events += o.oom_events;
    oom_kills += o.oom_kills;
    resizes += o.resizes;
    unknown_phase_samples += o.unknown_phase_samples;
    jobs += o.jobs;
    jobs_oom_killed += o.jobs_oom_killed;
    seconds += o.seconds;
}

std::vector<double> sample_durations(const std::vector<double>& timestamps) {
    std::vector<double> d(timestamps.size(), 0.0);
    for (std::size_t i = 0; i + 1 < timestamps.size(); ++i)
        d[i] = timestamps[i + 1] - timestamps[i];
    if (d.size() >= 2) d.back() = d[d.size() - 2];
    return d;
}

namespace {

// A limit of 0 is no limit. Returns whether usage went over the limit.
bool score_sample(ResourceScore& s, double usage, double request, double limit, double duration) {
    s.allocated += request * duration;
    s.used += usage * duration;
    if (usage > request) s.shortfall += (usage - request) * duration;
    ++s.samples;
    s.fulfilled += usage <= request;
    const bool over = limit > 0 && usage > limit;
    s.over_limit += over;
    return over;
}

// While memory usage stays over the limit, the kubelet restarts the killed container after a
// CrashLoopBackOff of 10 s doubling up to 300 s (its defaults), and the restarted container, whose
// usage the trace still shows over the limit, is killed again.
constexpr double kRestartBackoffInitial = 10, kRestartBackoffMax = 300;

bool same(const policy::Allocation& a, const policy::Allocation& b) {
    return a.request.cpu == b.request.cpu && a.request.memory == b.request.memory &&
           a.limit.cpu == b.limit.cpu && a.limit.memory == b.limit.memory;
}

}  // namespace

// The OOM kills of one container: one when usage crosses the limit, one more at each restart.
bool Scorer::killed(double t, bool over) {
    if (!over) {
        looping_ = false;
        return false;
    }
    if (!looping_) {
        looping_ = true;
        backoff_ = kRestartBackoffInitial;
        next_kill_ = t + backoff_;
        return true;
    }
    if (t < next_kill_) return false;
    backoff_ = std::min(2 * backoff_, kRestartBackoffMax);
    next_kill_ += backoff_;
    return true;
}

Scorer::Scorer(const policy::Allocation& initial) : previous_(initial) {
    score_.jobs = 1;
}

bool Scorer::add(double timestamp, const policy::Amount& usage, const policy::Allocation& in_force,
                 double duration) {
    score_sample(score_.cpu, usage.cpu, in_force.request.cpu, in_force.limit.cpu, duration);
    const bool over = score_sample(score_.memory, usage.memory, in_force.request.memory,
                                   in_force.limit.memory, duration);
    score_.seconds += duration;
    score_.oom_events += over;
    const bool oom_killed = killed(timestamp, over);
    score_.oom_kills += oom_killed;
    score_.jobs_oom_killed = score_.oom_kills > 0;
    score_.resizes += !same(in_force, previous_);
    previous_ = in_force;
    return oom_killed;
}

namespace {

// `s` with its features copied into `features` and their CPU column (if the model reads one)
// set to the CPU usage the policy observes, where that is not the trace's `demand`.
policy::Sample with_observed_cpu_feature(policy::Sample s, double demand, const Container& c,
                                         std::vector<double>& features) {
    if (s.features == nullptr || !c.cpu_feature || s.usage.cpu == demand) return s;
    features.assign(s.features, s.features + c.features.cols());
    features[static_cast<std::size_t>(*c.cpu_feature)] = s.usage.cpu;
    s.features = features.data();
    return s;
}

// What the policy sees of sample `s` of `c`: CPU usage up to the limit, the rest throttled (the
// demand above the limit in throttled CPU-seconds per second), as the kubelet and cAdvisor report
// a container with a CPU limit (the trace holds demand).
policy::Sample as_observed(policy::Sample s, bool cpu_capped_at_limit) {
    s.cpu_throttled_cores = 0;
    if (!cpu_capped_at_limit || !(s.limit.cpu > 0) || s.usage.cpu <= s.limit.cpu) return s;
    s.cpu_throttled_cores = s.usage.cpu - s.limit.cpu;
    s.usage.cpu = s.limit.cpu;
    s.cpu_throttled = 1;
    return s;
}

// What the policy observes at a tick, as Prometheus reports it to the operator: CPU usage, the
// throttled share and throttled seconds averaged over the `rate` seconds before it (rates), the
// share judged under the limits in force over the `window` its samples may lie in, as the
// operator's tracker judges it (policy::CpuLimitHistory), memory at the tick (a gauge: a spike
// between two ticks goes unseen, though it kills), and an OOM kill if one happened since the tick
// before (the container's last termination).
class AtTick {
public:
    AtTick(double rate, double window) : rate_(rate), window_(window) {}
    void add(const policy::Sample& observed) {
        seen_.push_back(observed);
        oom_killed_ = oom_killed_ || observed.oom_killed;
    }
    policy::Sample observe(policy::Sample latest) {
        while (seen_.size() > 1 && seen_.front().timestamp <= latest.timestamp - rate_)
            seen_.pop_front();
        double cpu = 0, throttled = 0, throttled_cores = 0;
        for (const policy::Sample& s : seen_) {
            cpu += s.usage.cpu;
            throttled += s.cpu_throttled;
            throttled_cores += s.cpu_throttled_cores;
        }
        const auto n = static_cast<double>(seen_.size());
        latest.usage.cpu = cpu / n;
        latest.cpu_throttled_cores = throttled_cores / n;
        // The replay's limit is applied as soon as it is asked for.
        limits_.observe(latest.timestamp, latest.limit.cpu, latest.limit.cpu, window_);
        latest.cpu_throttled = limits_.judge(throttled / n, latest.usage.cpu);
        latest.oom_killed = oom_killed_;
        oom_killed_ = false;
        return latest;
    }

private:
    double rate_, window_;
    std::deque<policy::Sample> seen_;  // the observed samples of the rates
    policy::CpuLimitHistory limits_;   // the latest limits, and when last raised
    bool oom_killed_ = false;
};

}  // namespace

Replay replay(const Container& c, policy::Recommender& recommender, bool causal,
              const policy::ActuationOptions& actuation) {
    policy::ActuationOptions options = actuation;
    // The bounds see the sample they allocate for, and resize for any change.
    if (!causal) {
        options.delay = 0;
        options.min_change = 0;
        options.cooldown_s = 0;
    }
    const policy::Allocation initial = policy::guaranteed(c.original);
    policy::Actuator actuator(initial, options);
    const std::vector<double> durations = sample_durations(c.timestamps);
    const bool has_features = c.features.rows() == static_cast<Eigen::Index>(c.usage.size());

    Replay r;
    r.allocations.reserve(c.usage.size());
    r.asked.reserve(c.usage.size());
    policy::Amount asked = initial.request;
    const auto remember_ask = [&](const std::optional<policy::Allocation>& wanted) {
        if (wanted) asked = wanted->request;
        return wanted;
    };
    Scorer scorer(initial);
    std::vector<double> observed_features;
    // Every sample observed: rates of one sample, which observe() leaves as they are.
    const bool at_ticks = options.tick_s > 0 && causal;
    const double rate = !at_ticks                   ? 0
                        : options.rate_window_s > 0 ? options.rate_window_s
                                                    : options.tick_s;
    AtTick at_tick(rate, at_ticks ? policy::rate_window(options.tick_s, rate) : 0);
    double next_tick = c.timestamps.empty() ? 0 : c.timestamps.front();
    for (std::size_t t = 0; t < c.usage.size(); ++t) {
        policy::Sample s;
        s.timestamp = c.timestamps[t];
        s.usage = c.usage[t];
        s.features = has_features ? c.features.row(static_cast<Eigen::Index>(t)).data() : nullptr;
        s.known_phase = t < c.known_phases.size() ? c.known_phases[t] : -1;

        if (!causal) actuator.decide(remember_ask(recommender.recommend(&s)));
        const policy::Allocation& in_force = actuator.advance(s.timestamp);
        r.allocations.push_back(in_force);
        r.asked.push_back(asked);
        s.allocated = in_force.request;
        s.limit = in_force.limit;
        s.oom_killed = scorer.add(s.timestamp, s.usage, in_force, durations[t]);
        if (s.oom_killed) r.oom_kills.push_back(t);

        // The actuator, as the operator's tracker, sees what the kubelet reports too, once a
        // tick (the recommenders that see the future, every sample).
        at_tick.add(as_observed(s, options.cpu_capped_at_limit));
        if (at_ticks) {
            if (s.timestamp < next_tick) continue;
            while (next_tick <= s.timestamp) next_tick += options.tick_s;
        }
        const policy::Sample observed =
            with_observed_cpu_feature(at_tick.observe(s), s.usage.cpu, c, observed_features);
        recommender.observe(observed);
        if (causal) actuator.decide(remember_ask(recommender.recommend(nullptr)), observed);
    }
    r.score = scorer.score();
    r.score.unknown_phase_samples = recommender.unknown_phase_samples();
    return r;
}

}  // namespace phasescale::sim
