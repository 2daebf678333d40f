// One container under a PhaseAutoscaler: a phase recommender (the one `phasescale simulate`
// runs) fed one sample per tick, its stable phase and what it recommends.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <phasescale/model/model.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/phase.hpp>

#include "phasescale/control/spec.hpp"

namespace phasescale::control {

// The recommender's options for a spec: quantiles, margins, debounce, proactive.
policy::PhaseOptions phase_options(const AutoscalerSpec& spec);

// The spec's safetyMargins (CPU, memory): what the estimates are multiplied by, and how near the
// line usage puts a resource at risk (policy::at_risk).
policy::Margins safety_margins(const AutoscalerSpec& spec);

// Why usage read from Prometheus cannot be real, or "" when it can: infinite ("non_finite"),
// zero or negative ("not_positive"), more than any node has ("too_large"), more than the
// container's node has (`node_capacity`, when known: "above_node"). NaN is missing data, not a
// rejection.
std::string implausible_usage(const policy::Amount& usage,
                              const std::optional<policy::Amount>& node_capacity = std::nullopt);

// The phase's name in the model (phasescale.io/phase shows it), or "unknown" for none.
std::string phase_name(const model::PhaseModel& model, std::optional<int> phase);

// The phase a pod shows (its phasescale.io/phase label and phase annotations): the stable phase
// once it has held for `hold` seconds, so that the label does not follow every short visit of the
// stable phase (with the default model a visit often lasts a tick or two). The first phase shows
// at once: a pod is not left "unknown" for the hold.
class ShownPhase {
public:
    explicit ShownPhase(double hold_seconds) : hold_(hold_seconds) {}
    // The stable phase after a sample at time t (unix seconds).
    void observe(std::optional<int> stable, double t);
    // What a pod showed before an operator restart.
    void restore(int phase, double since);
    std::optional<int> phase() const { return shown_; }
    // When the shown phase began as the stable phase (unix seconds; 0 before the first).
    double since() const { return since_; }

private:
    double hold_;
    std::optional<int> shown_;
    double since_ = 0;
    std::optional<int> candidate_;  // a stable phase other than the shown one, and since when
    double candidate_since_ = 0;
};

struct TrackerInput {
    double timestamp = 0;          // unix seconds
    std::vector<double> features;  // the model's features in its order; empty or NaN: missing
    policy::Amount usage;          // NaN: missing
    policy::Amount allocated;      // the container's current requests
    policy::Amount limits;         // and limits (0: none)
    double cpu_throttled = 0;      // share of CPU periods throttled at the limit (NaN: missing)
    double cpu_throttled_cores = std::numeric_limits<double>::quiet_NaN();  // s/s (NaN: missing)
    double rate_window = 0;        // the seconds its rates' samples lie in (policy::rate_window)
    double applied_cpu_limit = 0;  // the CPU limit the kubelet reports applied (0: not reported)
    int restart_count = 0;
    bool last_oom_killed = false;  // lastState.terminated.reason == OOMKilled
    // The capacity of the pod's node (none: not known); usage beyond it is rejected.
    std::optional<policy::Amount> node_capacity;
};

struct TrackerStep {
    bool observed = false;  // false: the sample was skipped (missing or stale metrics)
    // Why a sample that was there was not believed (skipped like a missing one): "non_finite",
    // "not_positive", "too_large", "above_node"; empty otherwise.
    std::string rejected;
    bool oom_killed = false;  // a new OOM kill was seen in this sample
    // The resources this sample put at risk (policy::at_risk: that kill, usage within the safety
    // margin of the OOM line or of the CPU request, or memory whose growth since the sample before,
    // once more, reaches the OOM line): more of them need not wait for the cooldown.
    policy::PerResource at_risk;
    bool phase_changed = false;
    std::optional<int> phase;                          // the stable phase after this sample
    std::optional<policy::Allocation> recommendation;  // nothing when skipped or not known yet
};

class ContainerTracker {
public:
    // Throws model::InputError when the model cannot drive the phase policy (no statistics).
    // The shown phase holds `label_hold_seconds` (ShownPhase).
    ContainerTracker(std::shared_ptr<const model::PhaseModel> model, const AutoscalerSpec& spec,
                     double label_hold_seconds = 0);

    TrackerStep step(const TrackerInput& input);

    std::optional<int> phase() const { return recommender_.phase(); }
    // When the stable phase began (unix seconds; 0 before the first phase).
    double phase_since() const { return phase_since_; }
    // The phase the pod shows, and when it began (ShownPhase).
    const ShownPhase& shown() const { return shown_; }
    std::size_t samples() const { return samples_; }
    std::size_t skipped() const { return skipped_; }
    const model::PhaseModel& model() const { return *model_; }
    // Restores the shown phase across operator restarts (from the pod's label and annotations).
    void restore_shown(int phase, double since) { shown_.restore(phase, since); }
    // Takes the CPU limits before `timestamp` as not known (history replayed without the limits
    // it had): a throttled share counts only once its rate window lies wholly after it
    // (cpu_throttled).
    void cpu_limits_unknown_before(double timestamp) { cpu_limits_.unknown_before(timestamp); }

private:
    double cpu_throttled(const TrackerInput& in);

    std::shared_ptr<const model::PhaseModel> model_;
    policy::PhaseRecommender recommender_;
    std::optional<int> last_restart_count_;
    policy::Margins safety_margins_;  // the spec's
    double memory_before_ = 0;        // the memory usage of the latest sample observed (at_risk)
    policy::CpuLimitHistory cpu_limits_;  // the latest limits, and when last raised
    double phase_since_ = 0;
    ShownPhase shown_;
    std::size_t samples_ = 0;
    std::size_t skipped_ = 0;
};

}  // namespace phasescale::control
