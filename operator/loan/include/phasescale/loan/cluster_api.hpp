// What the CapacityLoan controller asks of the API server beyond its informers' caches: the
// CapacityLoans, the elastic jobs and their scale subresources, and its writes. Narrow, so that
// unit tests drive Controller::reconcile with an in-memory cluster; the operator uses
// kube_cluster_api().
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/events.hpp>

namespace phasescale::loan {

class ClusterApi {
public:
    virtual ~ClusterApi() = default;

    // Each read throws when it fails (the message goes into a condition or a log line).
    // The CapacityLoans, as a List.
    virtual nlohmann::json capacity_loans() = 0;
    // The objects of an elastic job source, as a List (its kind names the items' kind).
    virtual nlohmann::json jobs(const kube::Resource& resource, const std::string& ns,
                                const std::string& label_selector) = 0;
    // A job's scale subresource (autoscaling/v1 Scale).
    virtual nlohmann::json scale(const kube::Resource& resource, const std::string& ns,
                                 const std::string& name) = 0;

    // The writes; each throws on failure (evict: kube::TooManyRequests when a disruption budget
    // forbids it, kube::NotFound when the pod is gone).
    // patch_node returns the node as the patch left it.
    virtual nlohmann::json patch_node(const std::string& node,
                                      const nlohmann::json& merge_patch) = 0;
    virtual void evict(const std::string& ns, const std::string& pod) = 0;
    virtual void set_scale(const kube::Resource& resource, const std::string& ns,
                           const std::string& name, int replicas) = 0;
    // A merge patch of the status subresource.
    virtual void patch_status(const std::string& loan, const nlohmann::json& status) = 0;
    virtual void record_event(const kube::ObjectReference& object, kube::EventType type,
                              const std::string& reason, const std::string& message) = 0;
};

// The API server, through `client`; writes and Events carry `field_manager`.
std::unique_ptr<ClusterApi> kube_cluster_api(kube::Client client, const std::string& field_manager);

}  // namespace phasescale::loan
