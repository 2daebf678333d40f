#pragma once
// Replaying one container's trace through one recommender, causally, and scoring what it
// allocated against what the container used.

#include <phasescale/model/types.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/recommender.hpp>

#include <optional>
#include <string>
#include <vector>

namespace phasescale::sim {

// One execution, ready for replay.
struct Container {
    std::string id;
    std::string source;
    std::vector<double> timestamps;
    std::vector<policy::Amount> usage;
    // The allocation it ran with (requests equal to limits), where every policy starts, and the
    // `static` policy; without one in the trace, the first sample's usage (has_original false).
    policy::Amount original;
    bool has_original = true;
    model::Matrix features;  // the phase model's features, raw, one row per sample
    // The column of `features` that is CPU usage, if the model reads it: capped at the limit with
    // the usage a policy observes, as the operator reads it.
    std::optional<Eigen::Index> cpu_feature;
    std::vector<int> known_phases;  // phases with the whole trace known, for `oracle`
};

struct ResourceScore {
    double allocated = 0;  // request integrated over time (core-seconds, byte-seconds)
    double used = 0;       // usage integrated over time
    double shortfall = 0;  // integral of max(0, usage - request)
    std::size_t samples = 0;
    std::size_t fulfilled = 0;   // samples whose usage is at most the request
    std::size_t over_limit = 0;  // samples whose usage exceeds the limit (CPU: throttled)
    double fulfilment() const { return samples ? static_cast<double>(fulfilled) / samples : 1.0; }
    double over_limit_share() const {
        return samples ? static_cast<double>(over_limit) / samples : 0.0;
    }
    void add(const ResourceScore& other);
};

// What a policy cost and risked. Memory over the limit is an OOM kill (the job loses its
// progress): one when usage crosses the limit, and one at each restart while it stays over (the
// kubelet's CrashLoopBackOff: after 10 s, then 20, 40, ... up to 300 s between restarts).
struct Score {
    ResourceScore cpu, memory;
    std::size_t oom_events = 0;  // samples whose memory usage exceeds the memory limit
    std::size_t oom_kills = 0;   // kills: crossings of the limit and restarts while over it
    std::size_t resizes = 0;
    std::size_t unknown_phase_samples = 0;
    std::size_t jobs = 0;             // executions scored
    std::size_t jobs_oom_killed = 0;  // of those, with at least one OOM kill
    double seconds = 0;               // container time scored
    double oom_kills_per_job() const { return jobs ? static_cast<double>(oom_kills) / jobs : 0.0; }
    double jobs_oom_killed_share() const {
        return jobs ? static_cast<double>(jobs_oom_killed) / jobs : 0.0;
    }
    double resizes_per_pod_hour() const { return seconds > 0 ? resizes / (seconds / 3600) : 0.0; }
    void add(const Score& other);
};

struct Replay {
    Score score;
    std::vector<policy::Allocation> allocations;  // in force at each sample
    // The requests the policy had last asked for at each sample (those it started with until it
    // first asks): where they are below the allocation in force, the cooldown, minChange or the
    // actuation delay holds what the policy no longer wants.
    std::vector<policy::Amount> asked;
    std::vector<std::size_t> oom_kills;  // samples where an OOM kill happened
};

// Each sample stands for the time until the next one; the last for the interval before it.
std::vector<double> sample_durations(const std::vector<double>& timestamps);

// The accounting of one container, sample by sample: what replay() scores for a policy, and
// what `phasescale score-live` scores for the allocations of a live cluster. A resize is a
// sample whose allocation differs from the one before (at the first: from `initial`).
class Scorer {
public:
    explicit Scorer(const policy::Allocation& initial);
    // Scores one sample held for `duration` seconds under `in_force`; returns whether the
    // container was OOM-killed at it (memory over the limit: at the crossing and at each
    // CrashLoopBackOff restart while it stays over).
    bool add(double timestamp, const policy::Amount& usage, const policy::Allocation& in_force,
             double duration);
    const Score& score() const { return score_; }

private:
    bool killed(double t, bool over);

    Score score_;
    policy::Allocation previous_;
    bool looping_ = false;  // over the memory limit, restarting under CrashLoopBackOff
    double backoff_ = 0, next_kill_ = 0;
};

// Replays `container` through `recommender`. Causal recommenders decide after each sample and
// their decision takes effect `actuation.delay` samples later; the others (`oracle`, `perfect`)
// decide for each sample just before it, seeing it.
Replay replay(const Container& container, policy::Recommender& recommender, bool causal,
              const policy::ActuationOptions& actuation);

}  // namespace phasescale::sim
