// Reading the spec of a custom resource (JSON as the API returns it) field by field: every
// problem becomes a message "spec.FIELD: what", never an exception, so that a controller can
// report all of them in a condition and go on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "phasescale/kube/selector.hpp"

namespace phasescale::kube {

struct SpecReader {
    std::vector<std::string>& errors;

    void error(const std::string& field, const std::string& what);
    // The key is there and not null.
    static bool present(const nlohmann::json& parent, const char* key);

    // Each returns nothing when the key is absent (or null), or holds the wrong type (a message).
    const nlohmann::json* object(const nlohmann::json& parent, const char* key,
                                 const std::string& field, bool required = false);
    std::optional<std::string> string(const nlohmann::json& parent, const char* key,
                                      const std::string& field);
    // Within [lo, hi]; `integer` refuses fractions.
    std::optional<double> number(const nlohmann::json& parent, const char* key,
                                 const std::string& field, double lo, double hi,
                                 bool integer = false);
    std::optional<int> integer(const nlohmann::json& parent, const char* key,
                               const std::string& field, int lo, int hi);
    std::optional<bool> boolean(const nlohmann::json& parent, const char* key,
                                const std::string& field);
    // A metav1.LabelSelector (matchLabels, matchExpressions with In, NotIn, Exists, DoesNotExist).
    void selector(const nlohmann::json& parent, const char* key, const std::string& field,
                  LabelSelector& out, bool required);
};

}  // namespace phasescale::kube
