#include "phasescale/kube/spec_reader.hpp"

namespace phasescale::kube {

using nlohmann::json;

void SpecReader::error(const std::string& field, const std::string& what) {
    errors.push_back("spec." + field + ": " + what);
}

bool SpecReader::present(const json& parent, const char* key) {
    return parent.is_object() && parent.contains(key) && !parent[key].is_null();
}

const json* SpecReader::object(const json& parent, const char* key, const std::string& field,
                               bool required) {
    if (!present(parent, key)) {
        if (required) error(field, "is required");
        return nullptr;
    }
    if (!parent[key].is_object()) {
        error(field, "expected an object");
        return nullptr;
    }
    return &parent[key];
}

std::optional<std::string> SpecReader::string(const json& parent, const char* key,
                                              const std::string& field) {
    if (!present(parent, key)) return std::nullopt;
    if (!parent[key].is_string()) {
        error(field, "expected a string");
        return std::nullopt;
    }
    return parent[key].get<std::string>();
}

std::optional<double> SpecReader::number(const json& parent, const char* key,
                                         const std::string& field, double lo, double hi,
                                         bool integer) {
    if (!present(parent, key)) return std::nullopt;
    const json& v = parent[key];
    if (!v.is_number() || (integer && !v.is_number_integer())) {
        error(field, integer ? "expected an integer" : "expected a number");
        return std::nullopt;
    }
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) {
        error(field, "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " +
                         v.dump());
        return std::nullopt;
    }
    return d;
}

std::optional<int> SpecReader::integer(const json& parent, const char* key,
                                       const std::string& field, int lo, int hi) {
    auto d = number(parent, key, field, lo, hi, true);
    if (!d) return std::nullopt;
    return static_cast<int>(*d);
}

std::optional<bool> SpecReader::boolean(const json& parent, const char* key,
                                        const std::string& field) {
    if (!present(parent, key)) return std::nullopt;
    if (!parent[key].is_boolean()) {
        error(field, "expected true or false");
        return std::nullopt;
    }
    return parent[key].get<bool>();
}

void SpecReader::selector(const json& parent, const char* key, const std::string& field,
                          LabelSelector& out, bool required) {
    const json* sel = object(parent, key, field, required);
    if (sel == nullptr) return;
    if (const json* ml = object(*sel, "matchLabels", field + ".matchLabels")) {
        for (auto it = ml->begin(); it != ml->end(); ++it) {
            if (!it.value().is_string()) {
                error(field + ".matchLabels." + it.key(), "expected a string");
                continue;
            }
            out.match_labels[it.key()] = it.value().get<std::string>();
        }
    }
    if (!present(*sel, "matchExpressions")) return;
    const json& me = (*sel)["matchExpressions"];
    if (!me.is_array()) {
        error(field + ".matchExpressions", "expected a list");
        return;
    }
    for (std::size_t i = 0; i < me.size(); ++i) {
        const std::string f = field + ".matchExpressions[" + std::to_string(i) + "]";
        auto k = string(me[i], "key", f + ".key");
        auto op = string(me[i], "operator", f + ".operator");
        if (!k || k->empty()) {
            error(f + ".key", "is required");
            continue;
        }
        if (!op || (*op != "In" && *op != "NotIn" && *op != "Exists" && *op != "DoesNotExist")) {
            error(f + ".operator", "must be In, NotIn, Exists or DoesNotExist");
            continue;
        }
        SelectorRequirement r{*k, *op, {}};
        if (me[i].contains("values") && me[i]["values"].is_array())
            for (const json& v : me[i]["values"])
                if (v.is_string()) r.values.push_back(v.get<std::string>());
        if ((r.op == "In" || r.op == "NotIn") == r.values.empty()) {
            error(f + ".values",
                  r.values.empty() ? "must not be empty for " + r.op : "must be empty for " + r.op);
            continue;
        }
        out.match_expressions.push_back(std::move(r));
    }
}

}  // namespace phasescale::kube
