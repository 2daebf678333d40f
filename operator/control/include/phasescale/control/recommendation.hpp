// A PhaseAutoscaler's status.recommendation, as the VPA's: per container name, over the pods it
// selects. Each pod's container has its own recommendation (its own phase); one name's target is
// the largest of them, so that a pod template sized to it serves every pod (docs/crd.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/policy/recommender.hpp>

#include "phasescale/control/decision.hpp"
#include "phasescale/control/spec.hpp"

namespace phasescale::control {

// One container name of an autoscaler over its pods, in a tick.
struct ContainerSummary {
    std::string name;
    std::size_t pods = 0;                   // pods with this container
    std::size_t recommended = 0;            // of which have a recommendation
    policy::Amount requested;               // the current requests, summed over the pods
    policy::Amount target_sum;              // the recommended requests, summed over the pods
    policy::Amount target_min, target_max;  // over the pods that have one
    policy::Amount uncapped_max;            // the same before the policy's minAllowed / maxAllowed
};

// Adds one pod's container: its current requests and, once it has one, its target (the clamped
// recommendation) and the recommendation before the bounds. Summaries keep the order in which
// names come (the first pod's container order).
void add_container(std::vector<ContainerSummary>& summaries, const ContainerResources& current,
                   const std::optional<ContainerTarget>& target,
                   const std::optional<policy::Amount>& uncapped);

// status.recommendation: {"containerRecommendations": [{containerName, target, lowerBound,
// upperBound, uncappedTarget}]} for the names that have a recommendation, quantities as strings.
// target: the largest pod's; lowerBound: the smallest pod's x (1 - minChange), not below
// minAllowed; upperBound: the largest x (1 + minChange), not above maxAllowed; uncappedTarget:
// the largest before the bounds.
nlohmann::json recommendation_status(const std::vector<ContainerSummary>& summaries,
                                     const AutoscalerSpec& spec);

// Whether a new recommendation differs from the published one by more than `min_change` in
// some target, or in its containers: only then is it published (a status write per tick for
// every small move would cost API writes for nothing).
bool recommendation_status_moved(const nlohmann::json& published, const nlohmann::json& fresh,
                                 double min_change);

}  // namespace phasescale::control
