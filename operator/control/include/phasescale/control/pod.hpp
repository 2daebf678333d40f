// What the controller reads from a pod (core/v1 JSON as the API returns it): container
// resources, QoS class, resize policy and conditions, OOM kills.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>

namespace phasescale::control {

// CPU in cores, memory in bytes; unset when the pod does not say.
struct ResourceValues {
    std::optional<double> cpu;
    std::optional<double> memory;
    bool operator==(const ResourceValues&) const = default;
};

struct ContainerResources {
    std::string name;
    ResourceValues requests;
    ResourceValues limits;
};

// Reduces a pod to what the functions here and the controller read: identity, labels, owner,
// the phasescale.io annotations, containers' resources and resize policies, node, phase,
// conditions and container statuses. The informer stores pods in this form (a tenth of their
// size); with loans on, the loan controller reads the same cache (it keeps all loan::trim_pod
// does).
void trim_pod(json& pod);

// Running and not being deleted.
bool pod_running(const json& pod);
std::string pod_name(const json& pod);
std::string pod_namespace(const json& pod);
std::string pod_uid(const json& pod);

// spec.containers[].resources, in spec order.
std::vector<ContainerResources> container_resources(const json& pod);
std::optional<ContainerResources> container_resources(const json& pod,
                                                      const std::string& container);

// The QoS class Kubernetes gives these containers: "Guaranteed", "Burstable" or "BestEffort".
std::string qos_class(const std::vector<ContainerResources>& containers);

// The container's resizePolicy for "cpu" or "memory": "NotRequired" (the default) or
// "RestartContainer".
std::string resize_policy(const json& pod, const std::string& container,
                          const std::string& resource);

// A pod condition that says a resize is still under way or cannot be done now.
struct ResizeCondition {
    std::string type;    // PodResizePending or PodResizeInProgress
    std::string reason;  // Infeasible, Deferred, ...
    std::string message;
};
std::optional<ResizeCondition> resize_condition(const json& pod);

// status.containerStatuses[]: restartCount, whether the last termination was an OOM kill, and
// the CPU limit the kubelet reports applied (resources.limits.cpu; none on older kubelets).
struct ContainerStatus {
    int restart_count = 0;
    bool last_oom_killed = false;
    std::optional<double> applied_cpu_limit;
};
ContainerStatus container_status(const json& pod, const std::string& container);

}  // namespace phasescale::control

namespace phasescale::control {

// The pod's controller (ownerReferences with controller: true) as the workload a
// VerticalPodAutoscaler's targetRef names: a ReplicaSet "web-5d4f9c7b8" counts as its
// Deployment "web" too. Empty kind when the pod has no controller.
struct WorkloadRef {
    std::string kind;
    std::string name;
};
std::vector<WorkloadRef> pod_workloads(const json& pod);

// True when a VerticalPodAutoscaler (autoscaling.k8s.io) acts on this pod: its targetRef names
// the pod's workload and its updatePolicy.updateMode is not "Off" (Off only recommends).
bool vpa_controls(const json& vpa, const json& pod);

}  // namespace phasescale::control
