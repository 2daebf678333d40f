#include "phasescale/prom/pod_selector.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "phasescale/prom/error.hpp"

namespace phasescale::prom {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A label key: [prefix/]name, of letters, digits, '-', '_', '.' (Kubernetes' rules, loosely).
bool valid_key(std::string_view key) {
    if (key.empty() || key.size() > 317) return false;
    const auto slash = key.find('/');
    const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
    if (name.empty() || !is_alnum(name.front()) || !is_alnum(name.back())) return false;
    for (char c : key)
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.' && c != '/') return false;
    return std::count(key.begin(), key.end(), '/') <= 1;
}

// A label value: empty, or up to 63 letters, digits, '-', '_', '.', alphanumeric at both ends.
bool valid_value(std::string_view value) {
    if (value.empty()) return true;
    if (value.size() > 63 || !is_alnum(value.front()) || !is_alnum(value.back())) return false;
    for (char c : value)
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
    return true;
}

// Commas inside "( )" belong to a set, not between terms.
std::vector<std::string_view> split_terms(std::string_view selector) {
    std::vector<std::string_view> terms;
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= selector.size(); ++i) {
        if (i == selector.size() || (selector[i] == ',' && depth == 0)) {
            terms.push_back(trim(selector.substr(begin, i - begin)));
            begin = i + 1;
        } else if (selector[i] == '(') {
            ++depth;
        } else if (selector[i] == ')') {
            --depth;
        }
    }
    return terms;
}

[[noreturn]] void bad(std::string_view term, const std::string& why) {
    throw ConfigError("label selector term \"" + std::string(term) + "\": " + why);
}

std::string matcher(std::string_view term, std::string_view key, const char* op, const std::string& value) {
    if (!valid_key(key)) bad(term, "\"" + std::string(key) + "\" is not a label key");
    return kube_state_label_name(key) + op + "\"" + value + "\"";
}

// "a|b" for a regex matcher; the values' dots are escaped (a PromQL string holding "\.").
std::string alternatives(std::string_view term, std::string_view set) {
    set = trim(set);
    if (set.size() < 2 || set.front() != '(' || set.back() != ')') bad(term, "the values must be in parentheses");
    std::string out;
    std::size_t begin = 1;
    for (std::size_t i = 1; i < set.size(); ++i) {
        if (set[i] != ',' && i + 1 != set.size()) continue;
        const std::string_view v = trim(set.substr(begin, i - begin));
        if (v.empty()) bad(term, "empty value in the set");
        if (!valid_value(v)) bad(term, "\"" + std::string(v) + "\" is not a label value");
        if (!out.empty()) out += '|';
        for (char c : v) {
            if (c == '.') out += "\\\\";
            out += c;
        }
        begin = i + 1;
    }
    return out;
}

}  // namespace

std::string kube_state_label_name(std::string_view key) {
    std::string out = "label_";
    for (char c : key) out += is_alnum(c) || c == '_' ? c : '_';
    return out;
}

std::string pod_label_matchers(std::string_view selector) {
    std::string out;
    if (trim(selector).empty()) return out;
    for (std::string_view term : split_terms(selector)) {
        if (term.empty()) throw ConfigError("label selector \"" + std::string(selector) + "\" has an empty term");
        std::string m;
        const std::size_t op = term.find_first_of("=!");
        const std::size_t space = term.find(' ');
        if (term.front() == '!') {
            m = matcher(term, trim(term.substr(1)), "=", "");
        } else if (op != std::string_view::npos && trim(term.substr(0, op)).find(' ') == std::string_view::npos) {
            const std::string_view key = trim(term.substr(0, op));
            const bool negated = term[op] == '!';
            if (negated && (op + 1 >= term.size() || term[op + 1] != '=')) bad(term, "expected != after the key");
            std::size_t value_at = op + 1;
            if (negated || (value_at < term.size() && term[value_at] == '=')) ++value_at;  // "!=" or "=="
            const std::string_view value = trim(term.substr(value_at));
            if (!valid_value(value)) bad(term, "\"" + std::string(value) + "\" is not a label value");
            m = matcher(term, key, negated ? "!=" : "=", std::string(value));
        } else if (space != std::string_view::npos) {
            const std::string_view key = trim(term.substr(0, space));
            std::string_view rest = trim(term.substr(space));
            if (rest.starts_with("in") && (rest.size() == 2 || rest[2] == ' ' || rest[2] == '(')) {
                m = matcher(term, key, "=~", alternatives(term, rest.substr(2)));
            } else if (rest.starts_with("notin") && (rest.size() == 5 || rest[5] == ' ' || rest[5] == '(')) {
                m = matcher(term, key, "!~", alternatives(term, rest.substr(5)));
            } else {
                bad(term, "expected =, ==, !=, in or notin after the key");
            }
        } else {
            m = matcher(term, term, "!=", "");
        }
        if (!out.empty()) out += ", ";
        out += m;
    }
    return out;
}

FeatureQueries select_pods(const FeatureQueries& queries, std::string_view selector) {
    const std::string matchers = pod_label_matchers(selector);
    if (matchers.empty()) return queries;
    std::vector<FeatureQuery> selected;
    for (const FeatureQuery& q : queries.queries()) {
        selected.push_back({q.feature, "(" + q.promql_template +
                                           ") * on (namespace, pod) group_left () max by (namespace, pod) "
                                           "(kube_pod_labels{namespace=\"${namespace}\", " + matchers + "})"});
    }
    return FeatureQueries(std::move(selected));
}

}  // namespace phasescale::prom
