// Sane values or none (issue 12, item 2): impossible usage is skipped and never resizes,
// quantities never overflow, absurd bounds are refused, recommendations stay under the ceiling.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>
#include <phasescale/control/decision.hpp>
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
    json policy = {{"containerName", "*"}, {"minAllowed", min_allowed}, {"maxAllowed", max_allowed}};
    return parse_spec({{"apiVersion", "phasescale.io/v1alpha1"},
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
    CHECK_THAT(huge.message(), Contains("containerPolicies[0].maxAllowed.memory: more than any node has (at most 67108864Mi)"));
    const ParsedSpec negative = spec_with_bounds({{"memory", "-1Gi"}}, {{"cpu", 5000}});
    CHECK_FALSE(negative.ok());
    CHECK_THAT(negative.message(), Contains("minAllowed.memory: not a quantity"));
    CHECK_THAT(negative.message(), Contains("maxAllowed.cpu: more than any node has (at most 2048000m)"));
    CHECK(spec_with_bounds({{"cpu", "100m"}}, {{"cpu", "64"}, {"memory", "1Ti"}}).ok());
}

TEST_CASE("tracker: zero, negative, infinite or huge usage is skipped and never changes the allocation", "[unit]") {
    const AutoscalerSpec spec = spec_with_bounds(json::object(), json::object()).spec;
    ContainerTracker t(std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model()), spec);
    std::optional<policy::Allocation> last;
    for (int i = 0; i < 12; ++i) last = t.step(input(100 + i, 0.3, 0.5 * GiB)).recommendation;
    REQUIRE(last);
    const std::size_t samples = t.samples();
    const std::pair<policy::Amount, const char*> bad[] = {
        {{0, 0.5 * GiB}, "not_positive"}, {{0.3, 0}, "not_positive"},       {{-1, 0.5 * GiB}, "not_positive"},
        {{0.3, -GiB}, "not_positive"},    {{kInf, 0.5 * GiB}, "non_finite"}, {{0.3, -kInf}, "non_finite"},
        {{1e30, 0.5 * GiB}, "too_large"}, {{0.3, 1e30}, "too_large"},       {{0.3, 1e15 * GiB}, "too_large"}};
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
    // The next good sample recommends what the good history alone says.
    const TrackerStep good = t.step(input(203, 0.3, 0.5 * GiB));
    REQUIRE(good.recommendation);
    CHECK(good.rejected.empty());
    CHECK(good.recommendation->request.cpu == Approx(last->request.cpu));
    CHECK(good.recommendation->request.memory == Approx(last->request.memory));
}

TEST_CASE("tracker: a container is first resized after its own samples, not on the model's alone", "[unit]") {
    const AutoscalerSpec spec = spec_with_bounds(json::object(), json::object()).spec;
    ContainerTracker t(std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model()), spec);
    const std::size_t first = phase_options(spec).first_resize_samples;
    REQUIRE(first > 1);
    for (std::size_t i = 1; i < first; ++i) CHECK_FALSE(t.step(input(100.0 + i, 2.2, 3 * GiB)).recommendation);
    const TrackerStep s = t.step(input(200, 2.2, 3 * GiB));
    REQUIRE(s.recommendation);
    // One step: at most twice the 1 core / 2 GiB in force, though the phase wants more.
    CHECK(s.recommendation->request.cpu <= 2.0 + 1e-9);
    CHECK(s.recommendation->request.memory <= 4 * GiB + 1);
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
