#include "phasescale/prom/pod_selector.hpp"

#include <cctype>
#include <vector>

namespace phasescale::prom {
namespace {

// The values as one regex of alternatives, their dots escaped. Label values are [A-Za-z0-9._-]
// (parse_label_selector checks), so nothing else needs it.
std::string alternatives(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) {
        if (!out.empty()) out += '|';
        for (char c : v) {
            if (c == '.') out += '\\';
            out += c;
        }
    }
    return out;
}

}  // namespace

std::string kube_state_label_name(std::string_view key) {
    std::string out = "label_";
    for (char c : key)
        out += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ? c : '_';
    return out;
}

std::string pod_label_matchers(const kube::LabelSelector& selector) {
    std::string out;
    auto add = [&out](const std::string& key, const char* op, const std::string& value) {
        if (!out.empty()) out += ", ";
        out += kube_state_label_name(key) + op + "\"" + escape_label_value(value) + "\"";
    };
    for (const auto& [key, value] : selector.match_labels) add(key, "=", value);
    for (const kube::SelectorRequirement& r : selector.match_expressions) {
        if (r.op == "In")
            add(r.key, "=~", alternatives(r.values));
        else if (r.op == "NotIn")
            add(r.key, "!~", alternatives(r.values));
        else if (r.op == "Exists")
            add(r.key, "!=", "");
        else if (r.op == "DoesNotExist")
            add(r.key, "=", "");
    }
    return out;
}

FeatureQueries select_pods(const FeatureQueries& queries, const kube::LabelSelector& selector) {
    const std::string matchers = pod_label_matchers(selector);
    if (matchers.empty()) return queries;
    std::vector<FeatureQuery> selected;
    for (const FeatureQuery& q : queries.queries()) {
        selected.push_back(
            {q.feature, "(" + q.promql_template +
                            ") * on (namespace, pod) group_left () max by (namespace, pod) "
                            "(kube_pod_labels{namespace=\"{namespace}\", " +
                            matchers + "})"});
    }
    return FeatureQueries(std::move(selected));
}

}  // namespace phasescale::prom
