// Label selectors (metav1.LabelSelector): the structure, matching, and the string form of a
// labelSelector query ("app=train,tier in (a,b),!canary"), for every part of phasescale that
// selects pods, nodes or jobs by their labels.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace phasescale::kube {

struct SelectorRequirement {
    std::string key;
    std::string op;  // In, NotIn, Exists, DoesNotExist
    std::vector<std::string> values;
};

// An empty selector selects everything.
struct LabelSelector {
    std::map<std::string, std::string> match_labels;
    std::vector<SelectorRequirement> match_expressions;

    bool empty() const { return match_labels.empty() && match_expressions.empty(); }
    bool matches(const std::map<std::string, std::string>& labels) const;
    bool matches(const nlohmann::json& object) const;  // its metadata.labels
    // The labelSelector string; parse_label_selector reads it back.
    std::string to_string() const;
};

// The labels of an object's metadata (string values only).
std::map<std::string, std::string> labels_of(const nlohmann::json& object);

// A labelSelector string: comma-separated "k=v" (or "k==v"), "k!=v", "k in (a,b)",
// "k notin (a,b)", "k" (has the label), "!k" (has it not); "" selects everything. Keys are
// [prefix/]name, values up to 63 of [A-Za-z0-9._-] (Kubernetes' rules). Throws
// std::invalid_argument naming the term that is not one of these.
LabelSelector parse_label_selector(std::string_view text);

}  // namespace phasescale::kube
