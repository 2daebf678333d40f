#include "phasescale/control/tracker.hpp"

#include <algorithm>
#include <cmath>

#include <phasescale/model/phase_names.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/bounds.hpp>

namespace phasescale::control {

policy::Margins safety_margins(const AutoscalerSpec& spec) {
    return {spec.cpu.safety_margin, spec.memory.safety_margin};
}

policy::PhaseOptions phase_options(const AutoscalerSpec& spec) {
    policy::PhaseOptions o;
    o.cpu_quantile = spec.cpu.quantile;
    o.memory_quantile = spec.memory.quantile;
    o.margins = safety_margins(spec);
    o.cpu_target = spec.cpu.target_fulfilment;
    o.memory_min_headroom = spec.memory.min_headroom;
    o.debounce = spec.debounce_samples;
    o.proactive = spec.proactive;
    o.horizon_s = spec.cooldown_seconds;  // an allocation holds at least until the next resize
    return o;
}

std::string implausible_usage(const policy::Amount& usage,
                              const std::optional<policy::Amount>& node_capacity) {
    const auto implausible = [](double value, double ceiling,
                                std::optional<double> node) -> std::string {
        if (std::isinf(value)) return "non_finite";
        if (value <= 0) return "not_positive";
        if (value > ceiling) return "too_large";
        if (node && value > *node) return "above_node";
        return "";
    };
    const std::string cpu =
        implausible(usage.cpu, policy::kMaxCpuCores,
                    node_capacity ? std::optional<double>(node_capacity->cpu) : std::nullopt);
    return cpu.empty() ? implausible(usage.memory, policy::kMaxMemoryBytes,
                                     node_capacity ? std::optional<double>(node_capacity->memory)
                                                   : std::nullopt)
                       : cpu;
}

std::string phase_name(const model::PhaseModel& model, std::optional<int> phase) {
    return phase ? model.phase_name(*phase) : model::kNoPhaseName;
}

void ShownPhase::observe(std::optional<int> stable, double t) {
    if (!stable) return;
    if (!shown_) {
        restore(*stable, t);
        return;
    }
    if (stable == shown_) {
        candidate_.reset();  // back before the hold ran out: nothing changes
        return;
    }
    if (stable != candidate_) {
        candidate_ = stable;
        candidate_since_ = t;
    }
    if (t - candidate_since_ >= hold_) restore(*candidate_, candidate_since_);
}

void ShownPhase::restore(int phase, double since) {
    shown_ = phase;
    since_ = since;
    candidate_.reset();
}

ContainerTracker::ContainerTracker(std::shared_ptr<const model::PhaseModel> model,
                                   const AutoscalerSpec& spec, double label_hold_seconds)
    : model_(std::move(model)),
      recommender_(*model_, phase_options(spec)),
      safety_margins_(safety_margins(spec)),
      shown_(label_hold_seconds) {}

// The throttled share of the input, as the policy judges it under the CPU limit in force
// (policy::CpuLimitHistory, from the tick that saw the latest raise and its rates' window).
double ContainerTracker::cpu_throttled(const TrackerInput& in) {
    cpu_limits_.observe(in.timestamp, in.limits.cpu, in.applied_cpu_limit, in.rate_window);
    // No answer, or none that makes sense (0/0 without CFS periods): not known to be throttled.
    if (!std::isfinite(in.cpu_throttled)) return 0;
    return cpu_limits_.judge(std::clamp(in.cpu_throttled, 0.0, 1.0), in.usage.cpu);
}

TrackerStep ContainerTracker::step(const TrackerInput& in) {
    TrackerStep out;
    // NaN marks what Prometheus did not answer; anything else it answered is judged.
    bool complete = in.features.size() == model_->features.size() && !std::isnan(in.usage.cpu) &&
                    !std::isnan(in.usage.memory);
    bool finite_features = true;
    for (double f : in.features) {
        complete = complete && !std::isnan(f);
        finite_features = finite_features && std::isfinite(f);
    }
    if (complete)
        out.rejected =
            finite_features ? implausible_usage(in.usage, in.node_capacity) : "non_finite";
    if (!complete || !out.rejected.empty()) {
        // Missing, stale or impossible metrics: no observation and no decision, so nothing
        // shrinks to 1m or grows to a petabyte on a bad answer.
        ++skipped_;
        out.phase = recommender_.phase();
        shown_.observe(out.phase, in.timestamp);
        return out;
    }
    policy::Sample s;
    s.timestamp = in.timestamp;
    s.usage = in.usage;
    s.allocated = in.allocated;
    s.limit = in.limits;
    s.cpu_throttled = cpu_throttled(in);
    // Counted only with a share that counts (the policy's throttled_floor).
    s.cpu_throttled_cores = std::isfinite(in.cpu_throttled_cores)
                                ? std::max(0.0, in.cpu_throttled_cores)
                                : std::nan("");
    s.features = in.features.data();
    // An OOM kill counts once: when the restart count grows and the last termination says so.
    // What happened before the container was first seen is not ours to react to.
    if (last_restart_count_ && in.restart_count > *last_restart_count_ && in.last_oom_killed)
        s.oom_killed = true;
    last_restart_count_ = in.restart_count;

    const std::optional<int> before = recommender_.phase();
    recommender_.observe(s);
    ++samples_;
    out.observed = true;
    out.oom_killed = s.oom_killed;
    out.at_risk = policy::at_risk(s, safety_margins_, memory_before_);
    memory_before_ = s.usage.memory;
    out.phase = recommender_.phase();
    if (out.phase && out.phase != before) {
        out.phase_changed = true;
        phase_since_ = in.timestamp;
    }
    shown_.observe(out.phase, in.timestamp);
    out.recommendation = recommender_.recommend(nullptr);
    return out;
}

}  // namespace phasescale::control
