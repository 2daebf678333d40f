// A CapacityLoan's spec, typed and validated, and the label selectors it (and the scale
// subresource) uses. parse_loan never throws: what it cannot honour becomes a message
// ("spec.field: what") for the Ready condition, and the CRD's defaults fill the rest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/resource.hpp>

namespace phasescale::loan {

using nlohmann::json;

struct SelectorRequirement {
    std::string key;
    std::string op;  // In, NotIn, Exists, DoesNotExist
    std::vector<std::string> values;
};

// A label selector (metav1.LabelSelector); an empty one selects everything.
struct LabelSelector {
    std::map<std::string, std::string> match_labels;
    std::vector<SelectorRequirement> match_expressions;

    bool empty() const { return match_labels.empty() && match_expressions.empty(); }
    bool matches(const std::map<std::string, std::string>& labels) const;
    bool matches(const json& object) const;  // its metadata.labels
    // The selector as a labelSelector query string ("a=b,c in (x,y),!d").
    std::string to_string() const;
};

// Parses a labelSelector string (the form a Scale's status.selector has): "k=v", "k==v", "k!=v",
// "k in (a,b)", "k notin (a,b)", "k", "!k", comma-separated. nullopt if it is not one.
std::optional<LabelSelector> parse_selector_string(const std::string& text);

// The labels of an object's metadata.
std::map<std::string, std::string> labels_of(const json& object);

// Where elastic training jobs are: objects of one resource that has a scale subresource (a
// Deployment, a StatefulSet, a custom resource), selected by labels, with the defaults their
// annotations may override (see decision.hpp, kMinReplicasAnnotation...).
struct JobSource {
    kube::Resource resource;  // group, version, plural; namespaced
    std::string ns;           // empty: all namespaces
    LabelSelector selector;
    int min_replicas = 1;
    int max_replicas = 4;
    int gpus_per_worker = 1;
    double remaining_seconds = 3600;  // at min_replicas, when the job does not say
};

struct LoanSpec {
    LabelSelector inference_nodes;
    LabelSelector training_nodes;
    int required_servers = 0;  // inference servers inference needs now
    int headroom_servers = 0;  // kept idle on top of them, never loaned
    std::optional<LabelSelector> training_pods;  // inelastic training pods (any namespace)
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
