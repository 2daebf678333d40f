#include "phasescale/control/decision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/bounds.hpp>

#include "phasescale/control/quantity.hpp"

namespace phasescale::control {
namespace {

// One resource of a target: request, and limit when limits are controlled (policy's rules).
void size(double recommended, const std::optional<double>& lo, const std::optional<double>& hi,
          double ceiling, double (*round)(double), bool limits_controlled,
          const std::optional<double>& current_request, const std::optional<double>& current_limit,
          std::optional<double>& request, std::optional<double>& limit) {
    const policy::SizedResource s = policy::size_resource(
        recommended, lo, hi, ceiling, limits_controlled, current_request, current_limit, round);
    request = s.request;
    limit = s.limit;
}

std::string describe(const ContainerResources& r) {
    auto q = [](const std::optional<double>& v, bool cpu) {
        return v ? (cpu ? format_cpu(*v) : format_memory(*v)) : std::string("-");
    };
    return "cpu " + q(r.requests.cpu, true) + "/" + q(r.limits.cpu, true) + ", memory " +
           q(r.requests.memory, false) + "/" + q(r.limits.memory, false);
}

std::string node_of(const json& pod) {
    return kube::string_field(pod, "spec", "nodeName");
}

// No request or limit below the current one.
void not_lower(std::optional<double>& wanted, const std::optional<double>& current) {
    if (wanted && current && *wanted < *current) wanted = current;
}

void cut_no_cpu(ContainerTarget& t) {
    not_lower(t.wanted.requests.cpu, t.current.requests.cpu);
    not_lower(t.wanted.limits.cpu, t.current.limits.cpu);
}

void cut_nothing(ContainerTarget& t) {
    cut_no_cpu(t);
    not_lower(t.wanted.requests.memory, t.current.requests.memory);
    not_lower(t.wanted.limits.memory, t.current.limits.memory);
}

// Why a resize goes ahead within the cooldown, for its message: the resources at risk, or the
// memory it grows.
std::string why_now(policy::PerResource at_risk, bool memory_grows) {
    if (at_risk.cpu && at_risk.memory) return "CPU and memory at risk";
    if (at_risk.memory) return "memory at risk";
    if (memory_grows) return at_risk.cpu ? "CPU at risk, memory grows" : "memory grows";
    return "CPU at risk";
}

// The resources the pod's resize raises (policy::raises) in any container worth resizing.
policy::PerResource raised_by(const std::vector<ContainerTarget>& targets,
                              policy::Margins safety_margins) {
    const auto amount = [](const ResourceValues& v) {
        return policy::Amount{v.cpu.value_or(0), v.memory.value_or(0)};
    };
    policy::PerResource raised;
    for (const ContainerTarget& t : targets)
        if (t.worth_resizing)
            raised |= policy::raises(amount(t.current.requests), amount(t.wanted.requests),
                                     safety_margins);
    return raised;
}

// Whether the pod's resize grows a container's memory by more than minChange.
bool memory_grown_by(const std::vector<ContainerTarget>& targets) {
    return std::any_of(targets.begin(), targets.end(),
                       [](const ContainerTarget& t) { return t.worth_resizing && t.memory_grows; });
}

// Why a pod waits for its cooldown, or for its cooldown of CPU cuts.
std::string cooldown_message(const PodGate& gate, double cooldown_seconds, double now) {
    const auto seconds = [](double s) { return std::to_string(static_cast<int>(s)) + " s"; };
    if (gate.cooldowns.holds_cpu_cuts(now, cooldown_seconds))
        return "CPU raised " + seconds(now - *gate.cooldowns.cpu_raised) +
               " ago: no CPU cut within the cooldown of " + seconds(cooldown_seconds);
    return "last resize outside a cooldown " + seconds(now - *gate.cooldowns.start) +
           " ago, cooldown " + seconds(cooldown_seconds);
}

// Whether a target is worth resizing (by more than its minChange), also once part of it is held
// back.
bool worth(const ContainerTarget& t) {
    return (t.cpu_changed() || t.memory_changed()) &&
           policy::worth_resizing(allocation_of(t.current), allocation_of(t.wanted), t.min_change);
}

// Whether a resize of `targets` only raises CPU: it raises the CPU of each and keeps its memory.
bool only_cpu_raised_by(const std::vector<ContainerTarget>& targets) {
    return std::all_of(targets.begin(), targets.end(), [](const ContainerTarget& t) {
        return policy::only_raises_cpu(requested(t.current), requested(t.wanted));
    });
}

}  // namespace

const char* to_string(Action action) {
    switch (action) {
        case Action::None: return "None";
        case Action::Resize: return "Resize";
        case Action::Wait: return "Wait";
        case Action::Blocked: return "Blocked";
    }
    return "?";
}

bool ContainerTarget::cpu_changed() const {
    return wanted.requests.cpu != current.requests.cpu || wanted.limits.cpu != current.limits.cpu;
}
bool ContainerTarget::memory_changed() const {
    return wanted.requests.memory != current.requests.memory ||
           wanted.limits.memory != current.limits.memory;
}

policy::ContainerBounds container_bounds(const ContainerPolicy& policy) {
    policy::ContainerBounds b;
    b.min_cpu = policy.min_allowed.cpu;
    b.min_memory = policy.min_allowed.memory;
    b.max_cpu = policy.max_allowed.cpu;
    b.max_memory = policy.max_allowed.memory;
    b.control_cpu = policy.enabled && policy.control_cpu;
    b.control_memory = policy.enabled && policy.control_memory;
    b.requests_and_limits = policy.requests_and_limits;
    return b;
}

ContainerTarget target_for(const ContainerResources& current, const policy::Allocation& rec,
                           const ContainerPolicy& policy, double min_change,
                           const std::optional<policy::Amount>& room) {
    const policy::ContainerBounds b = container_bounds(policy);
    ContainerTarget t;
    t.name = current.name;
    t.current = current;
    t.wanted = current;
    t.cpu_controlled = b.control_cpu;
    t.memory_controlled = b.control_memory;
    t.limits_controlled = b.requests_and_limits;
    // The node's room caps the recommendation and minAllowed alike, so the request stays within
    // it; the limit keeps its ratio to that request.
    auto below = [](const std::optional<double>& bound, std::optional<double> cap) {
        return bound && cap ? std::optional<double>(std::min(*bound, *cap)) : bound;
    };
    // Rounded down, so that what is written (whole millicores and mebibytes) stays within it.
    const std::optional<double> room_cpu =
        room ? std::optional<double>(floor_cpu(room->cpu)) : std::nullopt;
    const std::optional<double> room_memory =
        room ? std::optional<double>(floor_memory(room->memory)) : std::nullopt;
    if (t.cpu_controlled) {
        size(std::min(rec.request.cpu, room_cpu.value_or(policy::kMaxCpuCores)),
             below(b.min_cpu, room_cpu), b.max_cpu, policy::kMaxCpuCores, &round_cpu,
             t.limits_controlled, current.requests.cpu, current.limits.cpu, t.wanted.requests.cpu,
             t.wanted.limits.cpu);
        std::optional<double> free_request, free_limit;  // without the node
        size(rec.request.cpu, b.min_cpu, b.max_cpu, policy::kMaxCpuCores, &round_cpu,
             t.limits_controlled, current.requests.cpu, current.limits.cpu, free_request,
             free_limit);
        t.node_capped = free_request > t.wanted.requests.cpu;
    }
    if (t.memory_controlled) {
        size(std::min(rec.request.memory, room_memory.value_or(policy::kMaxMemoryBytes)),
             below(b.min_memory, room_memory), b.max_memory, policy::kMaxMemoryBytes, &round_memory,
             t.limits_controlled, current.requests.memory, current.limits.memory,
             t.wanted.requests.memory, t.wanted.limits.memory);
        std::optional<double> free_request, free_limit;
        size(rec.request.memory, b.min_memory, b.max_memory, policy::kMaxMemoryBytes, &round_memory,
             t.limits_controlled, current.requests.memory, current.limits.memory, free_request,
             free_limit);
        t.node_capped = t.node_capped || free_request > t.wanted.requests.memory;
    }
    t.min_change = min_change;
    t.worth_resizing = worth(t);
    t.memory_grows = policy::grows_memory(requested(current), requested(t.wanted), min_change);
    return t;
}

policy::Amount requested(const ContainerResources& c) {
    return {c.requests.cpu.value_or(c.limits.cpu.value_or(0)),
            c.requests.memory.value_or(c.limits.memory.value_or(0))};
}

policy::Allocation allocation_of(const ContainerResources& c) {
    policy::Allocation a;
    a.request = requested(c);
    a.limit = {c.limits.cpu.value_or(0), c.limits.memory.value_or(0)};
    return a;
}

NodeRoom::NodeRoom(const NodeSize& node, const std::vector<ContainerResources>& containers)
    : node_(node) {
    for (const ContainerResources& c : containers) current_.push_back(requested(c));
    held_ = current_;
}

policy::Amount NodeRoom::room(std::size_t i) const {
    policy::Amount others{0, 0};
    for (std::size_t j = 0; j < held_.size(); ++j)
        if (j != i) {
            others.cpu += held_[j].cpu;
            others.memory += held_[j].memory;
        }
    const policy::Amount mine = i < current_.size() ? current_[i] : policy::Amount{0, 0};
    return {std::max(node_.allocatable.cpu - others.cpu, mine.cpu),
            std::max(node_.allocatable.memory - others.memory, mine.memory)};
}

void NodeRoom::reserve(std::size_t i, const ResourceValues& wanted) {
    if (i >= held_.size()) return;
    held_[i] = {std::max(current_[i].cpu, wanted.cpu.value_or(0)),
                std::max(current_[i].memory, wanted.memory.value_or(0))};
}

void back_off(PodGate& gate, double now) {
    gate.backoff_until = now + std::min(kBackoffMaxSeconds,
                                        kBackoffInitialSeconds * std::pow(2.0, gate.backoff_level));
    gate.backoff_level = std::min(gate.backoff_level + 1, kBackoffMaxLevel);
}

PodDecision decide_pod(const json& pod, const std::vector<ContainerTarget>& targets,
                       double cooldown_seconds, policy::Margins safety_margins, PodGate& gate,
                       double now) {
    PodDecision d;
    const bool wanted = std::any_of(targets.begin(), targets.end(),
                                    [](const ContainerTarget& t) { return t.worth_resizing; });
    if (!wanted) {
        for (const ContainerTarget& t : targets)
            if (t.node_capped) d.message += (d.message.empty() ? "" : ", ") + t.name;
        if (!d.message.empty()) {
            d.action = Action::Blocked;
            d.reason = "NodeCapacity";
            d.message = "container(s) " + d.message + " want more than node " + node_of(pod) +
                        " can give (its allocatable, less the pod's other containers)";
        }
        return d;
    }

    if (const auto cond = resize_condition(pod)) {
        if (cond->type == "PodResizeInProgress")
            d.reason = "ResizeInProgress";
        else if (cond->reason == "Infeasible")
            d.reason = "ResizeInfeasible";
        else if (cond->reason == "Deferred")
            d.reason = "ResizeDeferred";
        else
            d.reason = "ResizePending";
        d.action = d.reason == "ResizeInfeasible" ? Action::Blocked : Action::Wait;
        d.message = cond->type + (cond->reason.empty() ? "" : " (" + cond->reason + ")") +
                    (cond->message.empty() ? "" : ": " + cond->message);
        if (now >= gate.backoff_until) back_off(gate, now);
        return d;
    }
    if (now < gate.backoff_until) {
        d.action = Action::Wait;
        d.reason = "Backoff";
        d.message = "backing off after a pending resize for " +
                    std::to_string(static_cast<int>(std::ceil(gate.backoff_until - now))) + " s";
        return d;
    }
    const bool memory_grows = memory_grown_by(targets);
    if (policy::cooling_down(gate.cooldowns.start, now, cooldown_seconds, gate.at_risk,
                             raised_by(targets, safety_margins), memory_grows)) {
        d.action = Action::Wait;
        d.reason = "Cooldown";
        d.message = cooldown_message(gate, cooldown_seconds, now);
        return d;
    }

    // Within the cooldown only what the risk calls for goes ahead: nothing is cut. Within one of
    // CPU cuts (after a resize that only raised CPU), no CPU is cut.
    const bool in_cooldown = policy::in_cooldown(gate.cooldowns.start, now, cooldown_seconds);
    const bool cpu_held = gate.cooldowns.holds_cpu_cuts(now, cooldown_seconds);
    for (ContainerTarget t : targets) {
        if (!t.worth_resizing) continue;
        if (in_cooldown) cut_nothing(t);
        if (cpu_held) cut_no_cpu(t);
        // Too little left once its cuts are held back (minChange), as the replay's Actuator judges.
        if (!worth(t)) continue;
        const bool restart =
            (t.cpu_changed() && resize_policy(pod, t.name, "cpu") == "RestartContainer") ||
            (t.memory_changed() && resize_policy(pod, t.name, "memory") == "RestartContainer");
        if (restart)
            d.skipped.push_back(t.name);
        else
            d.resized.push_back(t);
    }
    if (d.resized.empty() && d.skipped.empty()) {  // too little left once cuts are held back
        d.action = Action::Wait;
        d.reason = "Cooldown";
        d.message = cooldown_message(gate, cooldown_seconds, now);
        return d;
    }
    if (d.resized.empty()) {
        d.action = Action::Blocked;
        d.reason = "RestartRequired";
        d.message = "resizePolicy RestartContainer for a changed resource of container(s)";
        for (const std::string& s : d.skipped) d.message += " " + s;
        return d;
    }

    std::vector<ContainerResources> before = container_resources(pod), after = before;
    for (ContainerResources& c : after)
        for (const ContainerTarget& t : d.resized)
            if (t.name == c.name) c = t.wanted;
    const std::string qos_before = qos_class(before), qos_after = qos_class(after);
    if (qos_before != qos_after) {
        d.action = Action::Blocked;
        d.reason = "QoSChange";
        d.message =
            "the resize would change the pod's QoS class from " + qos_before + " to " + qos_after;
        d.resized.clear();
        return d;
    }
    d.action = Action::Resize;
    d.reason = "Resized";
    d.restarts = policy::restarts(in_cooldown, only_cpu_raised_by(d.resized));
    for (const ContainerTarget& t : d.resized)
        d.message += (d.message.empty() ? "" : "; ") + t.name + ": " + describe(t.current) +
                     " -> " + describe(t.wanted);
    if (std::any_of(d.resized.begin(), d.resized.end(),
                    [](const ContainerTarget& t) { return t.node_capped; }))
        d.message += " (cut to what node " + node_of(pod) + " can give)";
    if (!d.skipped.empty()) {
        d.message += " (left alone, resizePolicy RestartContainer:";
        for (const std::string& s : d.skipped) d.message += " " + s;
        d.message += ")";
    }
    if (in_cooldown)
        d.message += " (within the cooldown: " + why_now(gate.at_risk, memory_grows) + ")";
    return d;
}

namespace {

json quantities(const ResourceValues& v, bool cpu, bool memory) {
    json q = json::object();
    if (cpu && v.cpu) q["cpu"] = format_cpu(*v.cpu);
    if (memory && v.memory) q["memory"] = format_memory(*v.memory);
    return q;
}

}  // namespace

json resize_body(const std::vector<ContainerTarget>& targets) {
    json containers = json::array();
    for (const ContainerTarget& t : targets) {
        json resources = json::object();
        json requests = quantities(t.wanted.requests, t.cpu_controlled, t.memory_controlled);
        if (!requests.empty()) resources["requests"] = requests;
        if (t.limits_controlled) {
            json limits = quantities(t.wanted.limits, t.cpu_controlled, t.memory_controlled);
            if (!limits.empty()) resources["limits"] = limits;
        }
        containers.push_back({{"name", t.name}, {"resources", resources}});
    }
    return {{"spec", {{"containers", containers}}}};
}

json recommendation_json(const std::vector<ContainerTarget>& targets) {
    json out = json::object();
    for (const ContainerTarget& t : targets) {
        json r = json::object();
        r["requests"] = quantities(t.wanted.requests, true, true);
        r["limits"] = quantities(t.wanted.limits, true, true);
        out[t.name] = r;
    }
    return out;
}

bool recommendation_moved(const std::optional<std::string>& annotated,
                          const std::vector<ContainerTarget>& targets, double min_change) {
    if (!annotated) return true;
    const json old = json::parse(*annotated, nullptr, false);
    if (!old.is_object() || old.size() != targets.size()) return true;
    for (const ContainerTarget& t : targets) {
        if (!old.contains(t.name) || !old[t.name].is_object() || !old[t.name].contains("requests"))
            return true;
        const json& requests = old[t.name]["requests"];
        auto annotated_request = [&](const char* resource) -> double {
            if (!requests.is_object() || !requests.contains(resource)) return 0;
            return quantity_of(requests[resource]).value_or(0);
        };
        ContainerResources was;
        was.requests = {annotated_request("cpu"), annotated_request("memory")};
        if (policy::worth_resizing(allocation_of(was), allocation_of(t.wanted), min_change))
            return true;
    }
    return false;
}

json marks_patch(const json& pod, const PodMarks& marks) {
    auto current = [&](const char* section, const char* key) -> std::optional<std::string> {
        if (!pod.contains("metadata") || !pod["metadata"].contains(section)) return std::nullopt;
        const json& m = pod["metadata"][section];
        if (!m.is_object() || !m.contains(key) || !m[key].is_string()) return std::nullopt;
        return m[key].get<std::string>();
    };
    json labels = json::object(), annotations = json::object();
    if (current("labels", kPhaseLabel) != marks.phase_label)
        labels[kPhaseLabel] = marks.phase_label;
    const std::pair<const char*, const std::optional<std::string>*> ann[] = {
        {kPhaseNameAnnotation, &marks.phase_name},
        {kPhaseSinceAnnotation, &marks.phase_since},
        {kRecommendationAnnotation, &marks.recommendation}};
    for (const auto& [key, value] : ann)
        if (*value && current("annotations", key) != **value) annotations[key] = **value;
    if (labels.empty() && annotations.empty()) return nullptr;
    json patch = {{"metadata", json::object()}};
    if (!labels.empty()) patch["metadata"]["labels"] = labels;
    if (!annotations.empty()) patch["metadata"]["annotations"] = annotations;
    return patch;
}

}  // namespace phasescale::control
