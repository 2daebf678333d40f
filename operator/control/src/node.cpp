#include "phasescale/control/node.hpp"

#include "phasescale/control/quantity.hpp"

#include <algorithm>

namespace phasescale::control {
namespace {

// cpu and memory of status.<section>, each only if it is a quantity.
json cpu_and_memory(const json& node, const char* section) {
    json out = json::object();
    if (!node.contains("status") || !node["status"].is_object() ||
        !node["status"].contains(section) || !node["status"][section].is_object())
        return out;
    const json& values = node["status"][section];
    for (const char* resource : {"cpu", "memory"})
        if (values.contains(resource)) out[resource] = values[resource];
    return out;
}

std::optional<policy::Amount> amount(const json& values) {
    if (!values.contains("cpu") || !values.contains("memory")) return std::nullopt;
    const auto cpu = quantity_of(values["cpu"]), memory = quantity_of(values["memory"]);
    if (!cpu || !memory) return std::nullopt;
    return policy::Amount{*cpu, *memory};
}

}  // namespace

void trim_node(json& node) {
    json out = {{"metadata", json::object()},
                {"status",
                 {{"allocatable", cpu_and_memory(node, "allocatable")},
                  {"capacity", cpu_and_memory(node, "capacity")}}}};
    if (node.contains("metadata") && node["metadata"].is_object())
        for (const char* k : {"name", "resourceVersion"})
            if (node["metadata"].contains(k)) out["metadata"][k] = node["metadata"][k];
    node = std::move(out);
}

std::optional<NodeSize> node_size(const json& node) {
    const auto allocatable = amount(cpu_and_memory(node, "allocatable"));
    if (!allocatable) return std::nullopt;
    NodeSize size{*allocatable, *allocatable};
    const json capacity = cpu_and_memory(node, "capacity");
    // Never below the allocatable: usage up to it is always believed.
    if (capacity.contains("cpu"))
        size.capacity.cpu = std::max(size.capacity.cpu, quantity_of(capacity["cpu"]).value_or(0));
    if (capacity.contains("memory"))
        size.capacity.memory =
            std::max(size.capacity.memory, quantity_of(capacity["memory"]).value_or(0));
    return size;
}

std::map<std::string, NodeSize> node_sizes(const std::vector<std::shared_ptr<const json>>& nodes) {
    std::map<std::string, NodeSize> sizes;
    for (const auto& n : nodes)
        if (const auto size = node_size(*n))
            sizes[kube::string_field(*n, "metadata", "name")] = *size;
    return sizes;
}

}  // namespace phasescale::control
