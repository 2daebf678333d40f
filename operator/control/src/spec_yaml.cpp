#include <cmath>
#include <cstdlib>
#include <string>

#include <yaml-cpp/yaml.h>

#include "phasescale/control/spec.hpp"

namespace phasescale::control {
namespace {

// A plain YAML scalar as JSON: null, a boolean, a number, else a string. Quoted scalars
// (tag "!") stay strings, as YAML 1.2's core schema reads them.
json scalar_json(const YAML::Node& node) {
    const std::string& text = node.Scalar();
    if (node.Tag() == "!") return text;
    if (text == "null" || text == "~" || text.empty()) return nullptr;
    if (text == "true" || text == "True") return true;
    if (text == "false" || text == "False") return false;
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && *end == '\0' && std::isfinite(x)) {
        if (x == std::floor(x) && std::abs(x) < 9e15) return static_cast<long long>(x);
        return x;
    }
    return text;
}

json to_json(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Map: {
            json out = json::object();
            for (const auto& kv : node) out[kv.first.as<std::string>()] = to_json(kv.second);
            return out;
        }
        case YAML::NodeType::Sequence: {
            json out = json::array();
            for (const auto& item : node) out.push_back(to_json(item));
            return out;
        }
        case YAML::NodeType::Scalar: return scalar_json(node);
        default: return nullptr;
    }
}

}  // namespace

ParsedSpec parse_spec_yaml(const std::string& text, const std::string& origin) {
    std::vector<YAML::Node> documents;
    try {
        documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
        ParsedSpec out;
        out.errors.push_back(origin + ": not valid YAML: " + e.what());
        return out;
    }
    for (const YAML::Node& d : documents) {
        if (d.IsMap() && d["kind"] && d["kind"].IsScalar() && d["kind"].Scalar() == "PhaseAutoscaler")
            return parse_spec(to_json(d));
    }
    ParsedSpec out;
    out.errors.push_back(origin + ": no document of kind PhaseAutoscaler");
    return out;
}

}  // namespace phasescale::control
