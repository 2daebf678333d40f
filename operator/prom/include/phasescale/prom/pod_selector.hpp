// Selecting containers by their pod's labels in PromQL. cAdvisor's series carry namespace, pod
// and container but not the pod's labels; kube-state-metrics exports those as the series
// kube_pod_labels{namespace, pod, label_<key>="<value>"} (value 1), and keeps them for pods that
// are gone, which a look back over days needs. A label selector becomes matchers on that
// series, and every feature query is joined with it on (namespace, pod).
#pragma once

#include <string>
#include <string_view>

#include <phasescale/kube/selector.hpp>

#include "phasescale/prom/features.hpp"

namespace phasescale::prom {

// kube-state-metrics' label for a pod label key: "label_" + the key with every character
// outside [a-zA-Z0-9_] replaced by "_" ("app.kubernetes.io/name" -> label_app_kubernetes_io_name).
std::string kube_state_label_name(std::string_view key);

// PromQL matchers on kube_pod_labels for a selector: "app=train,tier in (a,b),!canary" ->
// label_app="train", label_tier=~"a|b", label_canary="". Empty for an empty selector.
std::string pod_label_matchers(const kube::LabelSelector& selector);

// `queries` restricted to the containers of pods that `selector` selects (the same queries for
// an empty selector).
FeatureQueries select_pods(const FeatureQueries& queries, const kube::LabelSelector& selector);

}  // namespace phasescale::prom
