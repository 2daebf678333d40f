#include "phasescale/kube/selector.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace phasescale::kube {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool is_alnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool valid_key(std::string_view key) {
    if (key.empty() || key.size() > 317 || std::count(key.begin(), key.end(), '/') > 1)
        return false;
    const auto slash = key.find('/');
    const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
    if (name.empty() || !is_alnum(name.front()) || !is_alnum(name.back())) return false;
    return std::all_of(key.begin(), key.end(), [](char c) {
        return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
    });
}

bool valid_value(std::string_view value) {
    if (value.empty()) return true;
    if (value.size() > 63 || !is_alnum(value.front()) || !is_alnum(value.back())) return false;
    return std::all_of(value.begin(), value.end(),
                       [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

[[noreturn]] void bad(std::string_view term, const std::string& why) {
    throw std::invalid_argument("label selector term \"" + std::string(term) + "\": " + why);
}

std::string key_of(std::string_view term, std::string_view key) {
    key = trim(key);
    if (!valid_key(key)) bad(term, "\"" + std::string(key) + "\" is not a label key");
    return std::string(key);
}

std::string value_of(std::string_view term, std::string_view value) {
    value = trim(value);
    if (!valid_value(value)) bad(term, "\"" + std::string(value) + "\" is not a label value");
    return std::string(value);
}

// "(a, b)" -> {a, b}
std::vector<std::string> values_of(std::string_view term, std::string_view set) {
    set = trim(set);
    if (set.size() < 2 || set.front() != '(' || set.back() != ')')
        bad(term, "the values must be in parentheses");
    std::vector<std::string> out;
    set = set.substr(1, set.size() - 2);
    for (std::size_t begin = 0;;) {
        const std::size_t comma = set.find(',', begin);
        // An empty value is a value, as Kubernetes reads it: "k notin ()" is what to_string (and
        // the API server) write for NotIn [""].
        const std::string_view v = trim(set.substr(
            begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
        out.push_back(value_of(term, v));
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }
    return out;
}

// Commas inside "( )" belong to a set, not between terms.
std::vector<std::string_view> split_terms(std::string_view text) {
    std::vector<std::string_view> terms;
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || (text[i] == ',' && depth == 0)) {
            terms.push_back(trim(text.substr(begin, i - begin)));
            begin = i + 1;
        } else if (text[i] == '(') {
            ++depth;
        } else if (text[i] == ')') {
            --depth;
        }
    }
    if (depth != 0)
        throw std::invalid_argument("label selector \"" + std::string(text) +
                                    "\": unbalanced parentheses");
    return terms;
}

}  // namespace

bool LabelSelector::matches(const std::map<std::string, std::string>& labels) const {
    for (const auto& [k, v] : match_labels) {
        auto it = labels.find(k);
        if (it == labels.end() || it->second != v) return false;
    }
    for (const SelectorRequirement& r : match_expressions) {
        auto it = labels.find(r.key);
        const bool has = it != labels.end();
        const bool in =
            has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
        if (r.op == "In" && !in) return false;
        if (r.op == "NotIn" && in) return false;
        if (r.op == "Exists" && !has) return false;
        if (r.op == "DoesNotExist" && has) return false;
    }
    return true;
}

bool LabelSelector::matches(const nlohmann::json& object) const {
    return matches(labels_of(object));
}

std::string LabelSelector::to_string() const {
    std::string out;
    auto add = [&out](const std::string& term) { out += (out.empty() ? "" : ",") + term; };
    for (const auto& [k, v] : match_labels) add(k + "=" + v);
    for (const SelectorRequirement& r : match_expressions) {
        std::string values;
        for (const std::string& v : r.values) values += (values.empty() ? "" : ",") + v;
        if (r.op == "In")
            add(r.key + " in (" + values + ")");
        else if (r.op == "NotIn")
            add(r.key + " notin (" + values + ")");
        else if (r.op == "Exists")
            add(r.key);
        else if (r.op == "DoesNotExist")
            add("!" + r.key);
    }
    return out;
}

std::map<std::string, std::string> labels_of(const nlohmann::json& object) {
    std::map<std::string, std::string> labels;
    if (!object.is_object() || !object.contains("metadata")) return labels;
    const nlohmann::json& md = object["metadata"];
    if (!md.is_object() || !md.contains("labels") || !md["labels"].is_object()) return labels;
    for (auto it = md["labels"].begin(); it != md["labels"].end(); ++it)
        if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
    return labels;
}

LabelSelector parse_label_selector(std::string_view text) {
    LabelSelector sel;
    if (trim(text).empty()) return sel;
    for (std::string_view term : split_terms(text)) {
        if (term.empty())
            throw std::invalid_argument("label selector \"" + std::string(text) +
                                        "\" has an empty term");
        const std::size_t op = term.find_first_of("=!");
        if (term.front() == '!') {
            sel.match_expressions.push_back({key_of(term, term.substr(1)), "DoesNotExist", {}});
        } else if (op != std::string_view::npos &&
                   trim(term.substr(0, op)).find(' ') == std::string_view::npos) {
            const std::string key = key_of(term, term.substr(0, op));
            const bool negated = term[op] == '!';
            if (negated && (op + 1 >= term.size() || term[op + 1] != '='))
                bad(term, "expected != after the key");
            std::size_t at = op + 1;
            if (negated || (at < term.size() && term[at] == '=')) ++at;  // "!=" or "=="
            const std::string value = value_of(term, term.substr(at));
            if (negated)
                sel.match_expressions.push_back({key, "NotIn", {value}});
            else if (sel.match_labels.count(key) != 0)
                sel.match_expressions.push_back({key, "In", {value}});  // both must hold
            else
                sel.match_labels[key] = value;
        } else if (const std::size_t space = term.find(' '); space != std::string_view::npos) {
            const std::string key = key_of(term, term.substr(0, space));
            const std::string_view rest = trim(term.substr(space));
            auto word = [&](std::string_view w) {
                return rest.starts_with(w) &&
                       (rest.size() == w.size() || rest[w.size()] == ' ' || rest[w.size()] == '(');
            };
            if (word("in"))
                sel.match_expressions.push_back({key, "In", values_of(term, rest.substr(2))});
            else if (word("notin"))
                sel.match_expressions.push_back({key, "NotIn", values_of(term, rest.substr(5))});
            else
                bad(term, "expected =, ==, !=, in or notin after the key");
        } else {
            sel.match_expressions.push_back({key_of(term, term), "Exists", {}});
        }
    }
    return sel;
}

}  // namespace phasescale::kube
