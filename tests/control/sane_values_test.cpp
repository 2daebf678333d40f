// Sane values or none (issue 12, item 2): impossible usage is skipped and never resizes,
// quantities never overflow, absurd bounds are refused, recommendations stay under the ceiling.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>
#include <phasescale/control/decision.hpp>
#include <phasescale/control/node.hpp>
#include <phasescale/control/quantity.hpp>
#include <phasescale/control/spec.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/policy/bounds.hpp>

#include "fixtures.hpp"

using namespace phasescale;
using namespace phasescale::control;
using Catch::Matchers::Contains;
using nlohmann::json;
using phasescale::testing::GiB;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ParsedSpec spec_with_bounds(json min_allowed, json max_allowed) {
    json policy = {
        {"containerName", "*"}, {"minAllowed", min_allowed}, {"maxAllowed", max_allowed}};
    return parse_spec(
        {{"apiVersion", "phasescale.io/v1alpha1"},
         {"kind", "PhaseAutoscaler"},
         {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"generation", 1}}},
         {"spec", {{"selector", json::object()}, {"containerPolicies", json::array({policy})}}}});
}

TrackerInput input(double t, double cpu, double memory) {
    TrackerInput in;
    in.timestamp = t;
    in.features = {cpu, memory};
    in.usage = {cpu, memory};
    in.allocated = {1, 2 * GiB};
    in.limits = {1, 2 * GiB};
    return in;
}

}  // namespace

TEST_CASE("quantities: negative, non-finite and huge values never overflow", "[unit]") {
    CHECK_FALSE(parse_quantity("1e400"));
    CHECK_FALSE(parse_quantity("1e400Gi"));
    CHECK_FALSE(parse_quantity("-1"));
    CHECK_FALSE(parse_quantity("-500m"));
    CHECK_FALSE(quantity_of(json(-3)));
    CHECK(parse_quantity("1e30").value() == 1e30);  // a number; the bounds judge it
    // Formatting clamps to the ceiling: never -9223372036854775808m.
    CHECK(format_cpu(1e30) == "2048000m");
    CHECK(format_memory(1e30) == "67108864Mi");  // 64 TiB
    CHECK(format_cpu(kInf) == "2048000m");
    CHECK(format_memory(std::numeric_limits<double>::max()) == "67108864Mi");
    CHECK(format_cpu(-5) == "1m");
    CHECK(format_cpu(kNaN) == "1m");
    CHECK(round_cpu(1e300) == policy::kMaxCpuCores);
    CHECK(round_memory(1e300) == policy::kMaxMemoryBytes);
}

TEST_CASE("spec: absurd minAllowed and maxAllowed are refused with a clear message", "[unit]") {
    const ParsedSpec huge = spec_with_bounds({{"cpu", "1e400"}}, {{"memory", "1e30"}});
    CHECK_FALSE(huge.ok());
    CHECK_THAT(huge.message(), Contains("containerPolicies[0].minAllowed.cpu: not a quantity"));
    CHECK_THAT(
        huge.message(),
        Contains(
            "containerPolicies[0].maxAllowed.memory: more than any node has (at most 67108864Mi)"));
    const ParsedSpec negative = spec_with_bounds({{"memory", "-1Gi"}}, {{"cpu", 5000}});
    CHECK_FALSE(negative.ok());
    CHECK_THAT(negative.message(), Contains("minAllowed.memory: not a quantity"));
    CHECK_THAT(negative.message(),
               Contains("maxAllowed.cpu: more than any node has (at most 2048000m)"));
    CHECK(spec_with_bounds({{"cpu", "100m"}}, {{"cpu", "64"}, {"memory", "1Ti"}}).ok());
}

TEST_CASE(
    "tracker: zero, negative, infinite or huge usage is skipped and never changes the allocation",
    "[unit]") {
    const AutoscalerSpec spec = spec_with_bounds(json::object(), json::object()).spec;
    const auto model =
        std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model());
    // `t` sees the bad samples between good ones, `twin` the good ones only.
    ContainerTracker t(model, spec), twin(model, spec);
    for (int i = 0; i < 12; ++i) {
        t.step(input(100 + i, 0.3, 0.5 * GiB));
        twin.step(input(100 + i, 0.3, 0.5 * GiB));
    }
    const std::size_t samples = t.samples();
    const std::pair<policy::Amount, const char*> bad[] = {
        {{0, 0.5 * GiB}, "not_positive"},  {{0.3, 0}, "not_positive"},
        {{-1, 0.5 * GiB}, "not_positive"}, {{0.3, -GiB}, "not_positive"},
        {{kInf, 0.5 * GiB}, "non_finite"}, {{0.3, -kInf}, "non_finite"},
        {{1e30, 0.5 * GiB}, "too_large"},  {{0.3, 1e30}, "too_large"},
        {{0.3, 1e15 * GiB}, "too_large"}};
    for (const auto& [usage, reason] : bad) {
        TrackerInput in = input(200, usage.cpu, usage.memory);
        const TrackerStep s = t.step(in);
        CHECK_FALSE(s.observed);
        CHECK(s.rejected == reason);
        CHECK_FALSE(s.recommendation);
    }
    TrackerInput inf_feature = input(201, 0.3, 0.5 * GiB);
    inf_feature.features[0] = kInf;
    CHECK(t.step(inf_feature).rejected == "non_finite");
    // NaN is missing data, skipped but not counted as rejected.
    const TrackerStep missing = t.step(input(202, kNaN, 0.5 * GiB));
    CHECK_FALSE(missing.observed);
    CHECK(missing.rejected.empty());
    CHECK(t.samples() == samples);
    // The next good sample recommends exactly what the good history alone says.
    const TrackerStep good = t.step(input(203, 0.3, 0.5 * GiB));
    const TrackerStep expected = twin.step(input(203, 0.3, 0.5 * GiB));
    REQUIRE(good.recommendation);
    REQUIRE(expected.recommendation);
    CHECK(good.rejected.empty());
    CHECK(good.recommendation->request.cpu == expected.recommendation->request.cpu);
    CHECK(good.recommendation->request.memory == expected.recommendation->request.memory);
    CHECK(good.phase == expected.phase);
}

TEST_CASE("tracker: a container is first resized after its own samples, not on the model's alone",
          "[unit]") {
    const AutoscalerSpec spec = spec_with_bounds(json::object(), json::object()).spec;
    ContainerTracker t(
        std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model()), spec);
    const policy::PhaseOptions options = phase_options(spec);
    REQUIRE(options.first_resize_samples > 1);
    REQUIRE(options.max_growth > 1);
    // 2.2 cores and 3 GiB in use, a small CPU request in force (0.1 core, no limit), 4 GiB.
    auto sample = [](double t, double memory_in_force) {
        TrackerInput in = input(t, 2.2, 3 * GiB);
        in.allocated = {0.1, memory_in_force};
        in.limits = {0, memory_in_force};
        return in;
    };
    for (std::size_t i = 1; i < options.first_resize_samples; ++i)
        CHECK_FALSE(t.step(sample(100.0 + i, 4 * GiB)).recommendation);
    const TrackerStep s = t.step(sample(200, 4 * GiB));
    REQUIRE(s.recommendation);
    // One step: at most max_growth times what is in force, though usage and the phase want more.
    CHECK(s.recommendation->request.cpu == Approx(0.1 * options.max_growth));

    // Memory at risk does not wait for samples (3 GiB over a 256 MiB limit is a kill for sure),
    // and never goes below what the container already uses plus the margin (or minHeadroom, if
    // more), whatever the bound.
    ContainerTracker at_risk(
        std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model()), spec);
    const TrackerStep first = at_risk.step(sample(100, 0.25 * GiB));
    REQUIRE(first.recommendation);
    CHECK(first.recommendation->request.memory ==
          Approx(std::max(3 * GiB * (1 + spec.memory.safety_margin),
                          3 * GiB + spec.memory.min_headroom)));
    CHECK(first.recommendation->request.cpu >= 0.1);  // nothing cut on one sample
}

TEST_CASE("targets: every recommendation is clamped to the ceiling, limits too", "[unit]") {
    ContainerResources current;
    current.name = "c";
    current.requests = {1.0, 1 * GiB};
    current.limits = {2.0, 2 * GiB};
    policy::Allocation huge;
    huge.request = {1e30, 1e300};
    const ContainerTarget t = target_for(current, huge, ContainerPolicy{}, 0.05);
    CHECK(*t.wanted.requests.cpu == policy::kMaxCpuCores);
    CHECK(*t.wanted.requests.memory == policy::kMaxMemoryBytes);
    CHECK(*t.wanted.limits.cpu == policy::kMaxCpuCores);
    CHECK(*t.wanted.limits.memory == policy::kMaxMemoryBytes);
    const json body = resize_body({t});
    CHECK(body.dump().find("-9223372036854775808") == std::string::npos);
    CHECK(body["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "2048000m");
    CHECK(body["spec"]["containers"][0]["resources"]["limits"]["memory"] == "67108864Mi");
}

TEST_CASE("tracker: usage beyond the node's capacity is rejected as above_node", "[unit]") {
    const policy::Amount node{8, 32 * GiB};
    CHECK(implausible_usage({8, 32 * GiB}, node).empty());
    CHECK(implausible_usage({8.01, GiB}, node) == "above_node");
    CHECK(implausible_usage({1, 33 * GiB}, node) == "above_node");
    CHECK(implausible_usage({1, 33 * GiB}).empty());  // node unknown: the absolute ceiling
    CHECK(implausible_usage({1e30, GiB}, node) == "too_large");
    const AutoscalerSpec spec = spec_with_bounds(json::object(), json::object()).spec;
    ContainerTracker t(
        std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model()), spec);
    TrackerInput in = input(100, 0.3, 40 * GiB);
    in.node_capacity = node;
    const TrackerStep s = t.step(in);
    CHECK_FALSE(s.observed);
    CHECK(s.rejected == "above_node");
    CHECK(t.samples() == 0);
}

TEST_CASE("targets: the node's room caps requests, over minAllowed, limits keep their ratio",
          "[unit]") {
    ContainerResources current;
    current.name = "c";
    current.requests = {1.0, 1 * GiB};
    current.limits = {2.0, 1 * GiB};
    policy::Allocation big;
    big.request = {16, 64 * GiB};
    const policy::Amount room{7.9999, 31.5 * GiB + 1};  // written down: 7999m, 32256Mi
    const ContainerTarget t = target_for(current, big, ContainerPolicy{}, 0.05, room);
    CHECK(t.node_capped);
    CHECK(t.worth_resizing);
    CHECK(*t.wanted.requests.cpu == Approx(7.999));
    CHECK(*t.wanted.limits.cpu == Approx(2 * 7.999));  // the limit keeps its ratio
    CHECK(*t.wanted.requests.memory == 31.5 * GiB);
    CHECK(*t.wanted.limits.memory == 31.5 * GiB);
    // minAllowed above the room: the node wins.
    ContainerPolicy floor_high;
    floor_high.min_allowed = {12.0, 40 * GiB};
    policy::Allocation small;
    small.request = {0.5, 0.5 * GiB};
    const ContainerTarget f = target_for(current, small, floor_high, 0.05, room);
    CHECK(f.node_capped);
    CHECK(*f.wanted.requests.cpu == Approx(7.999));
    CHECK(*f.wanted.requests.memory == 31.5 * GiB);
    // Within the room nothing is capped; without a room only the absolute ceiling is.
    CHECK_FALSE(target_for(current, small, ContainerPolicy{}, 0.05, room).node_capped);
    const ContainerTarget free = target_for(current, big, ContainerPolicy{}, 0.05);
    CHECK_FALSE(free.node_capped);
    CHECK(*free.wanted.requests.cpu == 16);
}

TEST_CASE("node room: a pod's requests after a resize never exceed its node's allocatable",
          "[unit]") {
    const NodeSize node{{8, 32 * GiB}, {8, 32 * GiB}};
    auto container = [](const char* name, double cpu, double memory) {
        ContainerResources c;
        c.name = name;
        c.requests = c.limits = {cpu, memory};
        return c;
    };
    const std::vector<ContainerResources> pod = {
        container("a", 1, 4 * GiB), container("b", 2, 4 * GiB), container("sidecar", 0.5, 1 * GiB)};
    NodeRoom room(node, pod);
    CHECK(room.room(0).cpu == Approx(5.5));  // 8 - 2 - 0.5
    CHECK(room.room(0).memory == 27 * GiB);
    // Both a and b grow as far as they may: a first, then b gets what a left.
    policy::Allocation huge;
    huge.request = {100, 1000 * GiB};
    const ContainerTarget a = target_for(pod[0], huge, ContainerPolicy{}, 0.05, room.room(0));
    room.reserve(0, a.wanted.requests);
    const ContainerTarget b = target_for(pod[1], huge, ContainerPolicy{}, 0.05, room.room(1));
    room.reserve(1, b.wanted.requests);
    CHECK(*a.wanted.requests.cpu + *b.wanted.requests.cpu + 0.5 == Approx(8));
    CHECK(*a.wanted.requests.memory + *b.wanted.requests.memory + 1 * GiB == 32 * GiB);
    // A container that shrinks still holds its current request for the others (it may not be
    // resized after all).
    NodeRoom shrink(node, pod);
    shrink.reserve(0, {0.1, 1 * GiB});
    CHECK(shrink.room(1).cpu == Approx(6.5));  // 8 - 1 - 0.5
    // A pod that already fills its node keeps its requests, never grows.
    const std::vector<ContainerResources> full = {container("a", 6, 30 * GiB),
                                                  container("b", 4, 4 * GiB)};
    NodeRoom over(node, full);
    CHECK(over.room(1).cpu == 4);
    CHECK(over.room(1).memory == 4 * GiB);
}

TEST_CASE("node size: allocatable and capacity read, a node without them unknown", "[unit]") {
    json n = {{"metadata", {{"name", "n"}, {"labels", {{"a", "b"}}}}},
              {"spec", {{"podCIDR", "10.0.0.0/24"}}},
              {"status",
               {{"allocatable", {{"cpu", "7910m"}, {"memory", "32867676Ki"}, {"pods", "110"}}},
                {"capacity", {{"cpu", "8"}, {"memory", "32Gi"}}},
                {"images", json::array({"x"})}}}};
    trim_node(n);
    CHECK(n == json{{"metadata", {{"name", "n"}}},
                    {"status",
                     {{"allocatable", {{"cpu", "7910m"}, {"memory", "32867676Ki"}}},
                      {"capacity", {{"cpu", "8"}, {"memory", "32Gi"}}}}}});
    const auto size = node_size(n);
    REQUIRE(size);
    CHECK(size->allocatable.cpu == Approx(7.91));
    CHECK(size->allocatable.memory == 32867676.0 * 1024);
    CHECK(size->capacity.cpu == 8);
    CHECK_FALSE(node_size(json{{"metadata", {{"name", "new"}}}}));
    const auto sizes = node_sizes({std::make_shared<const json>(n)});
    CHECK(sizes.count("n") == 1);
}
