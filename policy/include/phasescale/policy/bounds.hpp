#pragma once
// What a container may be given: a PhaseAutoscaler container policy's bounds and controlled
// values, applied to a recommendation the same way by the operator and by the replay. Limits
// follow the pod's QoS: a limit keeps its ratio to the request (a Guaranteed pod stays
// Guaranteed), or stays where it is when only requests are controlled.

#include <phasescale/policy/recommender.hpp>

#include <optional>

namespace phasescale::policy {

// The most a container is ever given, and the most usage believed, wherever its node is not known
// (the replay; a pod the operator has no node for): above any node sold today (896 vCPUs,
// 32 TiB) and far below what overflows whole millicores or bytes. The operator bounds a
// container by its node's allocatable too (operator/control, NodeRoom).
inline constexpr double kMaxCpuCores = 2048;
inline constexpr double kMaxMemoryBytes = 64.0 * 1024 * 1024 * 1024 * 1024;  // 64 TiB

struct ContainerBounds {
    std::optional<double> min_cpu, min_memory;  // minAllowed (cores, bytes)
    std::optional<double> max_cpu, max_memory;  // maxAllowed
    bool control_cpu = true;
    bool control_memory = true;
    bool requests_and_limits = true;  // controlledValues RequestsAndLimits (false: RequestsOnly)
};

// One resource after a recommendation.
struct SizedResource {
    double request = 0;
    std::optional<double> limit;
};

// `wanted` clamped to [lo, min(hi, ceiling)] and rounded; with `limits_controlled` the limit keeps
// its ratio to the request (equal stays equal), else the limit stays and the request never exceeds
// it. No limit stays no limit.
SizedResource size_resource(double wanted, std::optional<double> lo, std::optional<double> hi,
                            double ceiling, bool limits_controlled,
                            std::optional<double> current_request,
                            std::optional<double> current_limit, double (*round)(double));

// The allocation a container gets when `wanted`'s requests are asked for and `current` is in
// force. In an Allocation a limit of 0 means none.
Allocation constrain(const Allocation& current, const Amount& wanted,
                     const ContainerBounds& bounds);

}  // namespace phasescale::policy
