// Which API resource a request is about: enough to build its URL. Works the same for core
// objects and custom resources.
#pragma once

#include <string>
#include <string_view>

namespace phasescale::kube {

struct Resource {
    std::string group;    // "" for the core group
    std::string version;  // "v1", "v1alpha1", ...
    std::string plural;   // "pods", "phaseautoscalers"
    std::string kind;     // "Pod", for bodies we build (Eviction, Lease, Event)
    bool namespaced = true;

    // "v1" or "group/version".
    std::string api_version() const;
    // /api/v1[/namespaces/NS]/PLURAL[/NAME[/SUBRESOURCE]] or /apis/GROUP/VERSION/...; an empty
    // namespace means all namespaces (list, watch); cluster-scoped resources ignore it.
    std::string path(std::string_view ns, std::string_view name = {},
                     std::string_view subresource = {}) const;
};

namespace resources {
inline const Resource pods{"", "v1", "pods", "Pod", true};
inline const Resource nodes{"", "v1", "nodes", "Node", false};
inline const Resource namespaces{"", "v1", "namespaces", "Namespace", false};
inline const Resource events{"", "v1", "events", "Event", true};
inline const Resource service_accounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
inline const Resource config_maps{"", "v1", "configmaps", "ConfigMap", true};
inline const Resource leases{"coordination.k8s.io", "v1", "leases", "Lease", true};
inline const Resource deployments{"apps", "v1", "deployments", "Deployment", true};
inline const Resource custom_resource_definitions{
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
inline const Resource phase_autoscalers{"phasescale.io", "v1alpha1", "phaseautoscalers",
                                        "PhaseAutoscaler", true};
}  // namespace resources

// "namespace/name", or "name" for cluster-scoped objects: the key of informer stores.
std::string object_key(std::string_view ns, std::string_view name);

}  // namespace phasescale::kube
