// What the control loop asks of the API server beyond the informers' caches: a model's
// ConfigMap, the VerticalPodAutoscalers, and its writes. Narrow, so that unit tests drive
// Reconciler::tick with an in-memory cluster; the operator uses kube_cluster_api().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/events.hpp>

namespace phasescale::control {

class ClusterApi {
public:
    virtual ~ClusterApi() = default;

    // The ConfigMap; throws (with a message for the ModelLoaded condition) when it cannot be read.
    virtual nlohmann::json config_map(const std::string& ns, const std::string& name) = 0;
    // Whether the VerticalPodAutoscaler CRD is installed; throws when that cannot be told.
    virtual bool vpa_installed() = 0;
    virtual std::vector<nlohmann::json> vpas(const std::string& ns) = 0;

    // The writes; each throws on failure. They run on the write queue's workers.
    virtual void resize(const std::string& ns, const std::string& pod,
                        const nlohmann::json& body) = 0;
    virtual void patch_pod(const std::string& ns, const std::string& pod,
                           const nlohmann::json& merge_patch) = 0;
    virtual void patch_status(const std::string& ns, const std::string& autoscaler,
                              const nlohmann::json& status) = 0;
    virtual void record_event(const kube::ObjectReference& pod, kube::EventType type,
                              const std::string& reason, const std::string& message) = 0;
};

// The API server, through `client`; writes carry `field_manager`.
std::unique_ptr<ClusterApi> kube_cluster_api(kube::Client client, const std::string& field_manager);

}  // namespace phasescale::control
