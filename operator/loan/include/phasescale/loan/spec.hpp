// A CapacityLoan's spec, typed and validated, and the label selectors it (and the scale
// subresource) uses. parse_loan never throws: what it cannot honour becomes a message
// ("spec.field: what") for the Ready condition, and the CRD's defaults fill the rest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>
#include <phasescale/kube/resource.hpp>
#include <phasescale/kube/selector.hpp>

namespace phasescale::loan {

// Where elastic training jobs are: objects of one resource that has a scale subresource (a
// Deployment, a StatefulSet, a custom resource), selected by labels, with the defaults their
// annotations may override (see decision.hpp, kMinReplicasAnnotation...).
struct JobSource {
    kube::Resource resource;  // group, version, plural; namespaced
    std::string ns;           // empty: all namespaces
    kube::LabelSelector selector;
    int min_replicas = 1;
    int max_replicas = 4;
    int gpus_per_worker = 1;
    double remaining_seconds = 3600;  // at min_replicas, when the job does not say
};

struct LoanSpec {
    kube::LabelSelector inference_nodes;
    kube::LabelSelector training_nodes;
    int required_servers = 0;                          // inference servers inference needs now
    int headroom_servers = 0;                          // kept idle on top of them, never loaned
    std::optional<kube::LabelSelector> training_pods;  // inelastic training pods (any namespace)
    std::vector<JobSource> jobs;
    std::string gpu_resource = "nvidia.com/gpu";
};

struct ParsedLoan {
    LoanSpec spec;
    std::vector<std::string> errors;  // empty: valid
    bool ok() const { return errors.empty(); }
    std::string message() const;  // the errors joined with "; "
};

// `object` is a whole CapacityLoan as the API returns it (or just its spec).
ParsedLoan parse_loan(const json& object);

}  // namespace phasescale::loan
