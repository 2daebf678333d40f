#pragma once
// When a recommendation takes effect, and as what: after an actuation delay, only when it changes
// a request in force by more than a minimum fraction, never within the cooldown of the last
// resize (unless memory was at risk since then and the change gives more memory, cutting no CPU: a
// container that crash-loops cannot wait, nor one whose usage has used up its margin), within the
// container's bounds and controlled values (limits follow the pod's QoS). Counts the resizes. The
// operator applies the same rules to live pods.

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
    // The memory safetyMargin: usage within it of the OOM line puts memory at risk.
    double memory_margin = 0.1;
    ContainerBounds bounds;
};

class Actuator {
public:
    Actuator(Allocation initial, ActuationOptions options);
    // The allocation in force at the next sample, taken at time `now`. Call once per sample,
    // before decide().
    const Allocation& advance(double now);
    // A decision made now (after `sample`, scored against the allocation in force); nothing
    // keeps the allocation in force.
    void decide(const std::optional<Allocation>& wanted, const Sample& sample);
    void decide(const std::optional<Allocation>& wanted);  // no risk seen
    const Allocation& in_force() const { return in_force_; }
    std::size_t resizes() const { return resizes_; }

private:
    void apply(const Allocation& wanted, double now);

    ActuationOptions options_;
    Allocation in_force_;
    std::deque<std::optional<Allocation>> pending_;
    std::size_t resizes_ = 0;
    std::optional<double> last_resize_;
    bool memory_at_risk_ = false;  // since the last resize
};

// True when `wanted` differs from `current` by more than `min_change` in either request.
bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change);

// True when a sample puts memory at risk: the container was OOM-killed, or its memory usage is
// within `margin` (the memory safetyMargin) of the OOM line, i.e. at or above the limit (the
// request where none is set) / (1 + margin). A ramp that has used up the margin is one step from
// a kill; the next resize cannot wait a cooldown.
bool memory_at_risk(const Sample& sample, double margin);

// True within `cooldown_s` of the last resize (unix or trace seconds).
bool in_cooldown(std::optional<double> last_resize, double now, double cooldown_s);

// True while a resize must wait for the cooldown of the last one; a resize that gives more memory
// after memory was at risk since the last resize does not wait. Such a resize within the cooldown
// must cut no CPU (the cooldown holds back all but what the risk calls for): the Actuator and
// control::decide_pod keep CPU then.
bool cooling_down(std::optional<double> last_resize, double now, double cooldown_s,
                  bool memory_at_risk, bool more_memory);

}  // namespace phasescale::policy
