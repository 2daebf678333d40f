#include "phasescale/control/recommendation.hpp"

#include <algorithm>

#include <phasescale/policy/actuator.hpp>

#include "phasescale/control/quantity.hpp"

namespace phasescale::control {

namespace {

using nlohmann::json;

json quantities(double cpu, double memory) {
    return {{"cpu", format_cpu(cpu)}, {"memory", format_memory(memory)}};
}

bool moved(const json& published, const json& fresh, const char* resource, double min_change) {
    const auto a = quantity_of(published.value(resource, json())),
               b = quantity_of(fresh.value(resource, json()));
    if (!a || !b) return a.has_value() != b.has_value();
    return policy::changed(*a, *b, min_change);
}

}  // namespace

void add_container(std::vector<ContainerSummary>& summaries, const ContainerResources& current,
                   const std::optional<ContainerTarget>& target,
                   const std::optional<policy::Amount>& uncapped) {
    auto it = std::find_if(summaries.begin(), summaries.end(),
                           [&](const ContainerSummary& s) { return s.name == current.name; });
    if (it == summaries.end()) {
        summaries.push_back(ContainerSummary{});
        it = std::prev(summaries.end());
        it->name = current.name;
    }
    ContainerSummary& s = *it;
    ++s.pods;
    const policy::Amount now = requested(current);
    s.requested.cpu += now.cpu;
    s.requested.memory += now.memory;
    if (!target) return;
    const policy::Amount t = requested(target->wanted);
    const policy::Amount u = uncapped.value_or(t);
    s.target_sum.cpu += t.cpu;
    s.target_sum.memory += t.memory;
    if (s.recommended++ == 0) {
        s.target_min = s.target_max = t;
        s.uncapped_max = u;
        return;
    }
    s.target_min = {std::min(s.target_min.cpu, t.cpu), std::min(s.target_min.memory, t.memory)};
    s.target_max = {std::max(s.target_max.cpu, t.cpu), std::max(s.target_max.memory, t.memory)};
    s.uncapped_max = {std::max(s.uncapped_max.cpu, u.cpu),
                      std::max(s.uncapped_max.memory, u.memory)};
}

json recommendation_status(const std::vector<ContainerSummary>& summaries,
                           const AutoscalerSpec& spec) {
    json list = json::array();
    for (const ContainerSummary& s : summaries) {
        if (s.recommended == 0) continue;
        const ContainerPolicy p = spec.policy_for(s.name);
        const double low = 1 - spec.min_change, high = 1 + spec.min_change;
        const double lower_cpu = std::max(s.target_min.cpu * low, p.min_allowed.cpu.value_or(0));
        const double lower_memory =
            std::max(s.target_min.memory * low, p.min_allowed.memory.value_or(0));
        const double upper_cpu = std::max(
            s.target_max.cpu, std::min(s.target_max.cpu * high, p.max_allowed.cpu.value_or(1e300)));
        const double upper_memory =
            std::max(s.target_max.memory,
                     std::min(s.target_max.memory * high, p.max_allowed.memory.value_or(1e300)));
        list.push_back({{"containerName", s.name},
                        {"target", quantities(s.target_max.cpu, s.target_max.memory)},
                        {"lowerBound", quantities(std::min(lower_cpu, s.target_max.cpu),
                                                  std::min(lower_memory, s.target_max.memory))},
                        {"upperBound", quantities(upper_cpu, upper_memory)},
                        {"uncappedTarget", quantities(s.uncapped_max.cpu, s.uncapped_max.memory)}});
    }
    return {{"containerRecommendations", list}};
}

bool recommendation_status_moved(const json& published, const json& fresh, double min_change) {
    const json none = json::array();
    const json& a =
        published.is_object() ? published.value("containerRecommendations", none) : none;
    const json& b = fresh.value("containerRecommendations", none);
    if (a.size() != b.size()) return true;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].value("containerName", "") != b[i].value("containerName", "")) return true;
        for (const char* field : {"target", "lowerBound", "upperBound", "uncappedTarget"})
            for (const char* r : {"cpu", "memory"})
                if (moved(a[i].value(field, json::object()), b[i].value(field, json::object()), r,
                          min_change))
                    return true;
    }
    return false;
}

}  // namespace phasescale::control
