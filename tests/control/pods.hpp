// Hand-made pods for the control loop's tests: Guaranteed containers, Running, in namespace "ml".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace control_test {

inline constexpr double MiB = 1024.0 * 1024;
inline constexpr double GiB = 1024 * MiB;

// A container whose requests equal its limits.
inline nlohmann::json container(const std::string& name, const std::string& cpu,
                                const std::string& memory) {
    return {{"name", name},
            {"image", "trainer"},
            {"resources",
             {{"requests", {{"cpu", cpu}, {"memory", memory}}},
              {"limits", {{"cpu", cpu}, {"memory", memory}}}}}};
}

inline nlohmann::json make_pod(
    const std::string& name,
    nlohmann::json containers = nlohmann::json::array({container("main", "1", "2Gi")})) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "ml"},
              {"uid", "uid-" + name},
              {"labels", {{"app", "train"}}}}},
            {"spec", {{"containers", containers}}},
            {"status", {{"phase", "Running"}}}};
}

}  // namespace control_test
