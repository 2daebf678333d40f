// JSON as the operator's code reads it: one name for the type, and fields read without
// exceptions, since what a server, a proxy or a user sends may have any shape.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace phasescale {

// The one alias of nlohmann::json for kube, prom, control and loan: scoped to phasescale, so
// including a header never adds a `json` to the global namespace.
using json = nlohmann::json;

}  // namespace phasescale

namespace phasescale::kube {

// j[key] when j is an object holding a string there; "" when it is absent or of another type.
inline std::string string_field(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
    return j[key].get<std::string>();
}

// j[outer][key], likewise ("" when j[outer] is not an object).
inline std::string string_field(const json& j, const char* outer, const char* key) {
    return j.is_object() && j.contains(outer) ? string_field(j[outer], key) : std::string();
}

}  // namespace phasescale::kube
