#include "phasescale/control/pod.hpp"

#include "phasescale/control/quantity.hpp"

#include <initializer_list>

namespace phasescale::control {
namespace {

using kube::string_field;

ResourceValues values(const json& r, const char* key) {
    ResourceValues v;
    if (!r.is_object() || !r.contains(key) || !r[key].is_object()) return v;
    const json& m = r[key];
    if (m.contains("cpu")) v.cpu = quantity_of(m["cpu"]);
    if (m.contains("memory")) v.memory = quantity_of(m["memory"]);
    return v;
}

const json& containers_of(const json& pod) {
    static const json empty = json::array();
    if (pod.contains("spec") && pod["spec"].contains("containers") &&
        pod["spec"]["containers"].is_array())
        return pod["spec"]["containers"];
    return empty;
}

// Keeps only `keys` of an object (nothing if it is not one).
void keep_only(json& object, std::initializer_list<const char*> keys) {
    if (!object.is_object()) return;
    json kept = json::object();
    for (const char* k : keys) {
        auto it = object.find(k);
        if (it != object.end()) kept[k] = std::move(*it);
    }
    object = std::move(kept);
}

void keep_only_each(json& parent, const char* array, std::initializer_list<const char*> keys) {
    if (!parent.is_object() || !parent.contains(array) || !parent[array].is_array()) return;
    for (json& item : parent[array]) keep_only(item, keys);
}

}  // namespace

void trim_pod(json& pod) {
    keep_only(pod, {"apiVersion", "kind", "metadata", "spec", "status"});
    if (pod.contains("metadata")) {
        json& md = pod["metadata"];
        keep_only(md, {"name", "namespace", "uid", "resourceVersion", "generation", "labels",
                       "annotations", "ownerReferences", "deletionTimestamp"});
        // Other annotations (last-applied-configuration, ...) can be large and are never read.
        if (md.contains("annotations") && md["annotations"].is_object()) {
            json& a = md["annotations"];
            for (auto it = a.begin(); it != a.end();) {
                if (it.key().starts_with("phasescale.io/"))
                    ++it;
                else
                    it = a.erase(it);
            }
        }
        keep_only_each(md, "ownerReferences", {"kind", "name", "controller"});
    }
    if (pod.contains("spec")) {
        keep_only(pod["spec"], {"containers", "nodeName"});  // nodeName: the loan controller's
        keep_only_each(pod["spec"], "containers", {"name", "resources", "resizePolicy"});
    }
    if (pod.contains("status")) {
        keep_only(pod["status"], {"phase", "conditions", "containerStatuses"});
        keep_only_each(pod["status"], "conditions", {"type", "status", "reason", "message"});
        keep_only_each(pod["status"], "containerStatuses",
                       {"name", "restartCount", "lastState", "resources"});
    }
}

bool pod_running(const json& pod) {
    if (pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp") &&
        !pod["metadata"]["deletionTimestamp"].is_null())
        return false;
    return string_field(pod, "status", "phase") == "Running";
}

std::string pod_name(const json& pod) {
    return string_field(pod, "metadata", "name");
}
std::string pod_namespace(const json& pod) {
    return string_field(pod, "metadata", "namespace");
}
std::string pod_uid(const json& pod) {
    return string_field(pod, "metadata", "uid");
}

std::vector<ContainerResources> container_resources(const json& pod) {
    std::vector<ContainerResources> out;
    for (const json& c : containers_of(pod)) {
        ContainerResources r;
        r.name = string_field(c, "name");
        if (c.contains("resources")) {
            r.requests = values(c["resources"], "requests");
            r.limits = values(c["resources"], "limits");
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::optional<ContainerResources> container_resources(const json& pod,
                                                      const std::string& container) {
    for (ContainerResources& r : container_resources(pod))
        if (r.name == container) return r;
    return std::nullopt;
}

std::string qos_class(const std::vector<ContainerResources>& containers) {
    bool any = false, guaranteed = !containers.empty();
    for (const ContainerResources& c : containers) {
        if (c.requests.cpu || c.requests.memory || c.limits.cpu || c.limits.memory) any = true;
        // A missing request defaults to the limit.
        const auto req_cpu = c.requests.cpu ? c.requests.cpu : c.limits.cpu;
        const auto req_mem = c.requests.memory ? c.requests.memory : c.limits.memory;
        if (!c.limits.cpu || !c.limits.memory || req_cpu != c.limits.cpu ||
            req_mem != c.limits.memory)
            guaranteed = false;
    }
    if (!any) return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

std::string resize_policy(const json& pod, const std::string& container,
                          const std::string& resource) {
    for (const json& c : containers_of(pod)) {
        if (string_field(c, "name") != container || !c.contains("resizePolicy") ||
            !c["resizePolicy"].is_array())
            continue;
        for (const json& p : c["resizePolicy"])
            if (string_field(p, "resourceName") == resource) {
                const std::string r = string_field(p, "restartPolicy");
                return r.empty() ? "NotRequired" : r;
            }
    }
    return "NotRequired";
}

std::optional<ResizeCondition> resize_condition(const json& pod) {
    if (!pod.contains("status") || !pod["status"].contains("conditions") ||
        !pod["status"]["conditions"].is_array())
        return std::nullopt;
    for (const json& c : pod["status"]["conditions"]) {
        const std::string type = string_field(c, "type");
        if ((type == "PodResizePending" || type == "PodResizeInProgress") &&
            string_field(c, "status") == "True")
            return ResizeCondition{type, string_field(c, "reason"), string_field(c, "message")};
    }
    return std::nullopt;
}

ContainerStatus container_status(const json& pod, const std::string& container) {
    ContainerStatus r;
    if (!pod.contains("status") || !pod["status"].contains("containerStatuses")) return r;
    for (const json& s : pod["status"]["containerStatuses"]) {
        if (string_field(s, "name") != container) continue;
        if (s.contains("restartCount") && s["restartCount"].is_number_integer())
            r.restart_count = s["restartCount"].get<int>();
        if (s.contains("lastState") && s["lastState"].contains("terminated"))
            r.last_oom_killed = string_field(s["lastState"]["terminated"], "reason") == "OOMKilled";
        if (s.contains("resources")) r.applied_cpu_limit = values(s["resources"], "limits").cpu;
    }
    return r;
}

}  // namespace phasescale::control

namespace phasescale::control {

std::vector<WorkloadRef> pod_workloads(const json& pod) {
    std::vector<WorkloadRef> out;
    if (!pod.is_object() || !pod.contains("metadata") || !pod["metadata"].is_object() ||
        !pod["metadata"].contains("ownerReferences") ||
        !pod["metadata"]["ownerReferences"].is_array())
        return out;
    for (const json& o : pod["metadata"]["ownerReferences"]) {
        if (!o.is_object() || !o.contains("controller") || o["controller"] != true) continue;
        const std::string kind = string_field(o, "kind"), name = string_field(o, "name");
        out.push_back({kind, name});
        if (kind == "ReplicaSet") {
            const auto dash = name.rfind('-');
            if (dash != std::string::npos && dash > 0)
                out.push_back({"Deployment", name.substr(0, dash)});
        }
    }
    return out;
}

bool vpa_controls(const json& vpa, const json& pod) {
    if (!vpa.contains("spec") || !vpa["spec"].is_object()) return false;
    const json& spec = vpa["spec"];
    if (spec.contains("updatePolicy") && string_field(spec["updatePolicy"], "updateMode") == "Off")
        return false;
    if (!spec.contains("targetRef") || !spec["targetRef"].is_object()) return false;
    const std::string kind = string_field(spec["targetRef"], "kind"),
                      name = string_field(spec["targetRef"], "name");
    for (const WorkloadRef& w : pod_workloads(pod))
        if (w.kind == kind && w.name == name) return true;
    return false;
}

}  // namespace phasescale::control
