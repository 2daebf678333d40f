#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

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
            for (const auto& kv : node) {
                if (!kv.first.IsScalar())
                    throw std::invalid_argument("a map key that is not a plain value");
                out[kv.first.Scalar()] = to_json(kv.second);
            }
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

// The documents of a YAML stream, split at "---" lines. YAML::LoadAll of Debian's yaml-cpp 0.7
// loops forever on some inputs (a lone ","; jbeder/yaml-cpp#1040), YAML::Load does not.
std::vector<std::string> documents_of(const std::string& text) {
    std::vector<std::string> documents(1);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        const bool marker =
            line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\r');
        if (marker)
            documents.emplace_back();
        else
            documents.back() += line + "\n";
        start = end + 1;
    }
    return documents;
}

ParsedSpec error(const std::string& message) {
    ParsedSpec out;
    out.errors.push_back(message);
    return out;
}

}  // namespace

ParsedSpec parse_spec_yaml(const std::string& text, const std::string& origin) {
    try {
        for (const std::string& document : documents_of(text)) {
            const YAML::Node d = YAML::Load(document);
            if (d.IsMap() && d["kind"] && d["kind"].IsScalar() &&
                d["kind"].Scalar() == "PhaseAutoscaler")
                return parse_spec(to_json(d));
        }
    } catch (const std::exception& e) {  // YAML::Exception, or a key to_json cannot name
        return error(origin + ": not valid YAML: " + e.what());
    }
    return error(origin + ": no document of kind PhaseAutoscaler");
}

}  // namespace phasescale::control
