#pragma once
// When a recommendation takes effect, and as what: after an actuation delay, only when it changes
// a request in force by more than a minimum fraction, never within the cooldown of the last
// resize (unless it grows memory, or gives more to a resource at risk since then, and cuts
// nothing: a container that crash-loops cannot wait, nor one whose usage has used up its margin,
// nor one whose memory the policy expects to grow before the next resize; such a raise does not
// restart the cooldown), within the
// container's bounds and controlled values (limits follow the pod's QoS). Counts the resizes. The
// operator applies the same rules to live pods.

#include <phasescale/policy/bounds.hpp>
#include <phasescale/policy/recommender.hpp>

#include <deque>
#include <limits>
#include <optional>
#include <utility>

namespace phasescale::policy {

struct ActuationOptions {
    // The allocation in force at sample t is the one decided after sample t - delay (delay >= 1
    // for causal policies; 0 only for the bounds that see the future).
    int delay = 1;
    // Smaller relative changes of both requests are not worth a resize (minChange).
    double min_change = 0.05;
    // Seconds (of trace time) after a resize before the next one (cooldownSeconds).
    double cooldown_s = 0;
    // The safetyMargins: usage that has used up its margin puts the resource at risk (at_risk).
    Margins safety_margins{0.1, 0.1};
    ContainerBounds bounds;
    // As the kubelet runs a container: CPU usage stops at the CPU limit and the rest is throttled,
    // so a replayed policy observes usage capped there and the throttled share. false: it observes
    // the trace's demand above the limit (KWOK nodes, which run no cgroups, report it).
    bool cpu_capped_at_limit = true;
    // Seconds between the samples a replayed policy observes and decides on, as the operator
    // reads Prometheus once per --tick (15 s by default); 0: every sample of the trace. Every
    // sample is scored all the same: memory over the limit between two ticks is an OOM kill.
    double tick_s = 0;
    // With a tick: the seconds before it that CPU usage and the throttled share are averaged over,
    // as rates (what the operator's cover: a scrape interval, prom::rate_span); 0: the tick.
    double rate_window_s = 0;
};

// The cooldown a resize starts. One outside the cooldown starts the pod's (Cooldown), but one that
// only raises CPU (only_raises_cpu) starts one of CPU cuts alone (CpuCuts: for cooldown seconds its
// CPU is not cut, its memory may be). A raise let through within the cooldown (cooling_down)
// starts none, or each throttled sample's CPU raise would put off every cut: a PyTorch job at a
// flat 0.27 GiB of memory held the 2 GiB of its first resize for 104 s, not 60, while its CPU was
// raised three times; and a raise of CPU alone after the cooldown put off the cut of memory to the
// working set the same way, on short runs of other programs at the operator's tick
// (docs/savings.md). A resize that moves memory, if only a little, starts the pod's: memory is
// raised for what the cooldown may bring, and a cut right after it undoes that (a generated job
// raised by 0.2%, to 30.3 GiB, and cut at the next sample to 20.9, was killed at 21.3). Cuts
// still come at most once per cooldown.
enum class Restarts { Nothing, CpuCuts, Cooldown };
Restarts restarts(bool within_cooldown, bool only_cpu_raised);

// When a pod's cooldowns began (unix or trace seconds), as restarts says: the Actuator and the
// operator's PodGate keep one each.
struct Cooldowns {
    std::optional<double> start;       // the last resize outside a cooldown
    std::optional<double> cpu_raised;  // the last one of those that only raised CPU
    // Records a resize made at `now` that starts `r`.
    void record(Restarts r, double now);
    // True where only cuts of CPU are held back at `now`: after a resize that only raised CPU,
    // outside the pod's cooldown.
    bool holds_cpu_cuts(double now, double cooldown_s) const;
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
    Cooldowns cooldowns_;
    PerResource at_risk_;       // since the last resize
    double memory_before_ = 0;  // the memory usage of the sample before (at_risk)
};

// True when a request moved from `from` to `to` by more than `min_change` of it (from nothing:
// at all): the one rule of minChange, for resizes and for what the operator publishes alike.
bool changed(double from, double to, double min_change);

// True when `wanted` differs from `current` by more than `min_change` in either request.
bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change);

// `wanted` with no request or limit below `current`'s.
Allocation no_cut(const Allocation& current, Allocation wanted);
// `wanted` with no CPU request or limit below `current`'s.
Allocation no_cpu_cut(const Allocation& current, Allocation wanted);
// True when `wanted` asks for more CPU than `current` and the same memory.
bool only_raises_cpu(const Amount& current, const Amount& wanted);

// The resources a sample puts at risk, by the autoscaler's safety margins (one below 0 counts as
// 0). Memory: the container was OOM-killed, or its usage x (1 + margin) reaches the OOM line (the
// limit, the request where none is set): a ramp that has used up the margin is one step from a
// kill; or its usage grew since the sample before (`memory_before`, its usage then; 0: none) and
// the same growth once more reaches the line: a ramp that climbs faster than the margin is one
// step from a kill too, before it uses the margin up. CPU: it was throttled at its limit, or its
// usage x (1 + margin) reaches the request (the limit, where that is higher): the headroom asked
// for is used up, and a phase that needs more may have begun (usage averaged over a sample can stay
// below a limit that bursts hit). Either way the next resize that raises it (`raises`) cannot wait
// a cooldown.
PerResource at_risk(const Sample& sample, Margins safety_margins, double memory_before);

// The CPU (core-seconds) of a rate window in which the CPU limit was raised, split at the latest
// raise.
struct CpuWindow {
    double used = 0;                  // CPU used over the window
    double allowed_before_raise = 0;  // the most the limits let it use before that raise
    double allowed_since_raise = 0;   // and since
};

// The throttled share measured over a rate window that began before the CPU limit was raised,
// judged under the new limit. Such a window describes the old limit too: counted as it is, it
// would raise the container once more at every tick until the window had passed. So it counts
// only where the container used 95% or more of what the new limit allowed, even if it used all
// the old one allowed: then it was throttled under the new limit too. Else it counts as not
// throttled. (Set aside whatever the usage, as before, a container raised at every tick by its
// own capped usage was never seen throttled: at the operator's tick a generated job wanting 4
// cores took 7 minutes to grow from 0.5, now under 4, docs/savings.md.) A window wholly after
// the raise, or in which the limit was only cut, counts as measured: what was throttled under a
// higher limit is throttled under a lower one too.
double throttled_under_limit(double share, const CpuWindow& window);

// The CPU limits a container ran under at the ticks of its rate window, to judge a throttled share
// measured over the window under the limit in force (throttled_under_limit). The operator's
// tracker and the replay at a tick keep one each. A tick sees a raise made since the tick before
// (as the kubelet's status reports it, after the spec asked for it). So a window lies after the
// raise once it begins at the tick that saw it; within the window the raise is taken to have
// begun at the tick before (or at the window's start, where that tick lies before it), and
// between two ticks the higher of their limits to have held:
// bounds that never take a container for throttled under a new limit where it may not have been.
class CpuLimitHistory {
public:
    // The limit at a tick, as the pod's spec asks it and as the kubelet reports it applied (0: not
    // reported); a rise of either is a raise. `window`: the seconds the tick's rates cover. Once a
    // tick, before judge().
    void observe(double timestamp, double asked, double applied, double window);
    // Takes the limits before `timestamp` as not known (an operator that restarted cannot know
    // those the one before it set): no share whose window began before it is judged throttled.
    void unknown_before(double timestamp);
    // The throttled `share` over the latest tick's window, with the CPU `usage` (cores, a rate
    // over the same window), as it counts under the limit in force.
    double judge(double share, double usage) const;

private:
    double allowed(double from, double to) const;  // core-seconds the ticks' limits allowed

    std::optional<std::pair<double, double>> limit_;  // asked and applied at the latest tick
    double window_ = 0;                               // and the seconds its rates cover
    // The higher of the two at each tick of the window, and one before it.
    std::deque<std::pair<double, double>> ticks_;
    // The latest raise: after the first of these ticks and by the second.
    std::pair<double, double> raised_{-kForever, -kForever};
    double unknown_before_ = -kForever;
    static constexpr double kForever = std::numeric_limits<double>::infinity();
};

// True within `cooldown_s` of the start of the cooldown (unix or trace seconds).
bool in_cooldown(std::optional<double> cooldown_start, double now, double cooldown_s);

// The resources a resize from the `current` requests to the `wanted` ones raises, as far as a risk
// is concerned: memory, any more; CPU, more than its safety margin. A CPU raise within the margin
// is the estimate's own wobble (a quantile times (1 + margin) moves with every sample) and can wait
// for the cooldown; a throttled container whose phase needs more than that cannot.
PerResource raises(const Amount& current, const Amount& wanted, Margins safety_margins);

// Whether a resize from the `current` requests to the `wanted` ones grows memory by more than
// `min_change` of it. A policy asks for more memory only where it expects the container to need
// it before the next resize (its usage, the phase's rise, the trend over the horizon), and an OOM
// kill costs a job its progress: such a raise does not wait for the cooldown (cooling_down).
bool grows_memory(const Amount& current, const Amount& wanted, double min_change);

// True while a resize must wait for the cooldown (restarts): within it, only a resize that
// grows memory (`memory_grows`, grows_memory) or raises (`raises`) a resource at risk since the
// last resize goes ahead. Such a resize cuts nothing (the cooldown holds back all but more): the
// Actuator and control::decide_pod keep every request and limit from going down then.
bool cooling_down(std::optional<double> cooldown_start, double now, double cooldown_s,
                  PerResource at_risk, PerResource raised, bool memory_grows);

}  // namespace phasescale::policy
