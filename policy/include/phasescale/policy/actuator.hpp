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

#include <algorithm>
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
    // as rates (what the operator's irate() covers: a scrape interval); 0: the tick. The share is
    // judged under the limits of rate_window(tick_s, this), where the operator finds its samples.
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

// The seconds before a tick within which the operator finds the samples its rates are taken from:
// a few scrapes, so that a failed scrape or two leaves an answer, and no less than a tick, so that
// a rate() skips no usage. Seconds or a std::chrono duration.
inline constexpr int kScrapesPerWindow = 4;
template <class Duration>
Duration rate_window(Duration tick, Duration scrape_interval) {
    return std::max(Duration(kScrapesPerWindow * scrape_interval), tick);
}

// A tick's throttled share judged under the CPU limit in force, from the tick that saw the latest
// raise of the limit. The operator's tracker and the replay at a tick keep one each. A tick sees a
// raise made since the tick before (as the kubelet's status reports it, after the spec asked for
// it). The share counts as it is once the window its samples lie in (rate_window) begins at or
// after the tick that saw the latest raise; and where the limit was only cut: what was throttled
// under a higher limit is throttled under a lower one too. Before that, the operator's irate() may
// have taken it from two scrapes before the raise, or across it (a late or failed scrape leaves
// the latest two older than one interval), and counted, it would raise the container once more.
// Taken as the latest interval's, such a pair of scrapes grew the e2e's flat pod twice in CI
// (1 -> 1.65 -> 2.475 cores) where its demand of 1.5 cores wanted one growth. So it counts then
// only where the container used 95% or more of the limit in force over the same samples: under
// the old limit it could not have, and throttled so it was throttled under the new one too. (Set
// aside whatever the usage, as before session 39, a container raised at every tick by its own
// capped usage was never seen throttled: at the operator's tick a generated job wanting 4 cores
// took 7 minutes to grow from 0.5, now under 4, docs/savings.md.)
class CpuLimitHistory {
public:
    // The limit at a tick, as the pod's spec asks it and as the kubelet reports it applied (0: not
    // reported); a rise of either is a raise. `window`: the seconds before the tick within which
    // the samples of its rates lie (rate_window). Once a tick, before judge().
    void observe(double timestamp, double asked, double applied, double window);
    // Takes the limits before `timestamp` as not known (an operator that restarted cannot know
    // those the one before it set), as if raised then.
    void unknown_before(double timestamp);
    // The throttled `share` of the latest tick, with the CPU `usage` (cores) of the same samples,
    // as it counts under the limit in force.
    double judge(double share, double usage) const;

private:
    static constexpr double kForever = std::numeric_limits<double>::infinity();
    std::optional<std::pair<double, double>> limit_;  // asked and applied at the latest tick
    double now_ = -kForever, window_ = 0;             // that tick, and its rates' window
    double raise_seen_ = -kForever;                   // the tick that saw the latest raise
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
