#pragma once
// When a recommendation takes effect, and as what: after an actuation delay, only when it changes
// a request in force by more than a minimum fraction, never within the cooldown of the last
// resize (unless an OOM kill since then calls for more memory: a container that crash-loops
// cannot wait), within the container's bounds and controlled values (limits follow the pod's
// QoS). Counts the resizes. The operator applies the same rules to live pods.

#include <phasescale/policy/bounds.hpp>
#include <phasescale/policy/recommender.hpp>

#include <deque>
#include <optional>

namespace phasescale::policy {

struct ActuationOptions {
    // The allocation in force at sample t is the one decided after sample t - delay (delay >= 1
    // for causal policies; 0 only for the bounds that see the future).
    int delay = 1;
    // Smaller relative changes of both requests are not worth a resize (minChange).
    double min_change = 0.05;
    // Seconds (of trace time) after a resize before the next one (cooldownSeconds).
    double cooldown_s = 0;
    ContainerBounds bounds;
};

class Actuator {
public:
    Actuator(Allocation initial, ActuationOptions options);
    // The allocation in force at the next sample, taken at time `now`. Call once per sample,
    // before decide().
    const Allocation& advance(double now);
    // A decision made now (after the current sample); nothing keeps the allocation in force.
    // `oom_killed`: the container was OOM-killed in the current sample.
    void decide(const std::optional<Allocation>& wanted, bool oom_killed = false);
    const Allocation& in_force() const { return in_force_; }
    std::size_t resizes() const { return resizes_; }

private:
    void apply(const Allocation& wanted, double now);

    ActuationOptions options_;
    Allocation in_force_;
    std::deque<std::optional<Allocation>> pending_;
    std::size_t resizes_ = 0;
    std::optional<double> last_resize_;
    bool oom_since_resize_ = false;
};

// True when `wanted` differs from `current` by more than `min_change` in either request.
bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change);

// True while a resize must wait for the cooldown of the last one (unix or trace seconds); a
// resize that gives more memory after an OOM kill since the last resize does not wait.
bool cooling_down(std::optional<double> last_resize, double now, double cooldown_s,
                  bool oom_since_resize, bool more_memory);

}  // namespace phasescale::policy
