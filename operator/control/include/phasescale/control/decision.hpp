// The decision rules, as pure functions of a pod, its trackers' recommendations and the spec:
// what each container should get (bounds, controlled resources and values), whether a pod is
// resized now, and if not, why. Never an eviction, never a restart: a resize that cannot be
// done in place is reported, not forced.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>
#include <phasescale/kube/time.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/bounds.hpp>
#include <phasescale/policy/recommender.hpp>

#include "phasescale/control/node.hpp"
#include "phasescale/control/pod.hpp"
#include "phasescale/control/spec.hpp"

namespace phasescale::control {

// What one container should get: its current resources with the controlled ones replaced by
// the clamped, rounded recommendation.
struct ContainerTarget {
    std::string name;
    ContainerResources current;
    ContainerResources wanted;
    bool cpu_controlled = true;
    bool memory_controlled = true;
    bool limits_controlled = true;  // RequestsAndLimits
    bool worth_resizing = false;    // a request changes by more than minChange
    bool memory_grows = false;      // the memory request grows by more than minChange
    bool node_capped = false;       // a request was cut to what the pod's node can give it
    double min_change = 0;          // the autoscaler's minChange
    bool cpu_changed() const;
    bool memory_changed() const;
};

// What a container requests: its limit where it sets no request, as the API server defaults.
policy::Amount requested(const ContainerResources& c);

// Its requests (requested) and limits (0 where none is set), as a policy reads an allocation.
policy::Allocation allocation_of(const ContainerResources& c);

// A container policy's bounds and controlled values, as policy::constrain applies them.
policy::ContainerBounds container_bounds(const ContainerPolicy& policy);

// Clamps `recommendation` to the policy's bounds and keeps the uncontrolled resources and
// values as they are. With RequestsAndLimits a limit keeps its ratio to the request (limits
// equal to requests stay equal); with RequestsOnly the request never exceeds the limit.
// `room`, when the pod's node is known, is the most its requests may reach there (NodeRoom): it
// wins over minAllowed, and a request it cuts marks the target node_capped. Without it the
// absolute ceiling (policy::kMaxCpuCores, kMaxMemoryBytes) is the only one.
ContainerTarget target_for(const ContainerResources& current,
                           const policy::Allocation& recommendation, const ContainerPolicy& policy,
                           double min_change,
                           const std::optional<policy::Amount>& room = std::nullopt);

// What each container of a pod may request on its node, so that a resize never asks for more
// than the node has: the node's allocatable less the requests of the pod's other containers,
// each counted at the larger of its current request and its target so far (two containers that
// grow in one resize cannot pass the node together; one that does not end up resized still fits).
// A pod whose current requests already fill the node may keep them, never grow.
class NodeRoom {
public:
    NodeRoom(const NodeSize& node, const std::vector<ContainerResources>& containers);
    // For container `i` (in spec order).
    policy::Amount room(std::size_t i) const;
    // Container `i` is targeted at `wanted`.
    void reserve(std::size_t i, const ResourceValues& wanted);

private:
    NodeSize node_;
    std::vector<policy::Amount> current_, held_;
};

// Per pod: when its cooldown started, and the backoff while the kubelet has not finished (or
// cannot do) a resize.
struct PodGate {
    // When its cooldowns began (policy::restarts).
    policy::Cooldowns cooldowns;
    // The resources at risk since (policy::at_risk): more of them skips the cooldown.
    policy::PerResource at_risk;
    int backoff_level = 0;
    double backoff_until = 0;
};

// Backoff while a pod reports a pending or in-progress resize: kBackoffInitial doubling up to
// kBackoffMax.
inline constexpr double kBackoffInitialSeconds = 5;
inline constexpr double kBackoffMaxSeconds = 300;
// Where the level stops counting: the delay reached kBackoffMaxSeconds long before (5 s x 2^6),
// this only keeps 2^level finite and the counter from overflowing.
inline constexpr int kBackoffMaxLevel = 30;

// Starts the gate's next backoff at `now` (unix seconds): kBackoffInitialSeconds x 2^level,
// at most kBackoffMaxSeconds; the next one will be twice as long.
void back_off(PodGate& gate, double now);

enum class Action { None, Resize, Wait, Blocked };
const char* to_string(Action action);

struct PodDecision {
    Action action = Action::None;
    // Why not (Cooldown, Backoff, ResizeInProgress, ResizeInfeasible, ResizeDeferred,
    // ResizePending, RestartRequired, QoSChange, NodeCapacity), or Resized.
    std::string reason;
    std::string message;
    std::vector<ContainerTarget> resized;  // the containers in the resize body
    std::vector<std::string> skipped;      // containers left out (resizePolicy RestartContainer)
    policy::Restarts restarts = policy::Restarts::Nothing;  // the cooldown a resize starts
};

// Decides for a pod whose containers want `targets` (those worth resizing count). Updates the
// gate's backoff when the pod reports a resize under way. Within the cooldown only a resize that
// grows a container's memory, or raises a resource at risk since the last resize, goes ahead,
// cutting nothing, and does not restart the cooldown; after it a resize does, but one that only
// raises CPU starts a cooldown of CPU cuts alone, within which no CPU is cut (restarts:
// policy::restarts; policy::Actuator's rules, `safety_margins` the autoscaler's). A
// resize cut to the node says so in its message; a container that wants more than its node gives
// while nothing is worth resizing is Blocked, NodeCapacity.
PodDecision decide_pod(const json& pod, const std::vector<ContainerTarget>& targets,
                       double cooldown_seconds, policy::Margins safety_margins, PodGate& gate,
                       double now);

// The body for pods/<name>/resize (strategic merge): requests, and limits for RequestsAndLimits,
// of the controlled resources, as quantity strings.
json resize_body(const std::vector<ContainerTarget>& targets);

// The recommendation annotation: {"container": {"requests": {...}, "limits": {...}}}.
json recommendation_json(const std::vector<ContainerTarget>& targets);

// Whether `targets` differ from the recommendation annotation a pod carries (its text, if any)
// by more than `min_change` in a request, or in their containers: only then is the annotation
// rewritten, so that small moves of a recommendation cost no API write.
bool recommendation_moved(const std::optional<std::string>& annotated,
                          const std::vector<ContainerTarget>& targets, double min_change);

inline constexpr const char* kPhaseLabel = "phasescale.io/phase";
inline constexpr const char* kPhaseNameAnnotation = "phasescale.io/phase-name";
inline constexpr const char* kPhaseSinceAnnotation = "phasescale.io/phase-since";
inline constexpr const char* kRecommendationAnnotation = "phasescale.io/recommendation";

struct PodMarks {
    std::string phase_label;  // "0", "1", ... or "unknown"
    std::optional<std::string> phase_name;
    std::optional<std::string> phase_since;     // RFC 3339
    std::optional<std::string> recommendation;  // JSON text
};

// A merge patch of the pod's metadata setting these marks; null when the pod has them already.
json marks_patch(const json& pod, const PodMarks& marks);

}  // namespace phasescale::control
