// Selecting containers by their pod's labels in PromQL. cAdvisor's series carry namespace, pod
// and container but not the pod's labels; kube-state-metrics exports those as the series
// kube_pod_labels{namespace, pod, label_<key>="<value>"} (value 1), and keeps them for pods that
// are gone, which a look back over days needs. A Kubernetes label selector becomes matchers on
// that series, and every feature query is joined with it on (namespace, pod).
#pragma once

#include <string>
#include <string_view>

#include "phasescale/prom/features.hpp"

namespace phasescale::prom {

// kube-state-metrics' label for a pod label key: "label_" + the key with every character
// outside [a-zA-Z0-9_] replaced by "_" ("app.kubernetes.io/name" -> label_app_kubernetes_io_name).
std::string kube_state_label_name(std::string_view key);

// PromQL matchers for a Kubernetes label selector: "key=value" ("=="), "key!=value",
// "key in (a,b)", "key notin (a,b)", "key" (has it), "!key" (has it not), comma-separated.
// "app=train,tier in (a,b)" -> label_app="train", label_tier=~"a|b". Empty for an empty
// selector. Throws ConfigError naming the term that is not one of these.
std::string pod_label_matchers(std::string_view selector);

// `queries` restricted to the containers of pods whose labels match `selector` (the same
// queries for an empty selector).
FeatureQueries select_pods(const FeatureQueries& queries, std::string_view selector);

}  // namespace phasescale::prom
