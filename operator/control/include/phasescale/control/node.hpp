// What the controller reads from a node: its size. A pod's recommendation is clamped to what its
// node can give it (NodeRoom, decision.hpp), and usage beyond the node's capacity is rejected
// as impossible (implausible_usage, tracker.hpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>
#include <phasescale/policy/recommender.hpp>

namespace phasescale::control {

// cpu in cores, memory in bytes.
struct NodeSize {
    policy::Amount allocatable;  // what pods may request on it
    policy::Amount capacity;     // what it has (allocatable plus the system's reserve)
};

// Reduces a node to its name, resourceVersion and the cpu and memory of status.allocatable and
// status.capacity: the informer's cache holds nodes in this form. With loans on, the nodes'
// cache is the loan controller's (loan::trim_node keeps all this does).
void trim_node(json& node);

// The node's size; none when its allocatable or capacity lacks cpu or memory (a node not yet
// reported by its kubelet). A capacity missing a value counts as the allocatable one.
std::optional<NodeSize> node_size(const json& node);

// The size of each node of a cache that has one, by name.
std::map<std::string, NodeSize> node_sizes(const std::vector<std::shared_ptr<const json>>& nodes);

}  // namespace phasescale::control
