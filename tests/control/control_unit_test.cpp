// The control loop's rules on hand-made pods and the hand-made two-phase model of
// tests/support/fixtures.hpp: spec parsing, trackers, targets, pod decisions, patches, trimmed
// pods.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>

#include <phasescale/control/decision.hpp>
#include <phasescale/control/pod.hpp>
#include <phasescale/control/quantity.hpp>
#include <phasescale/control/recommendation.hpp>
#include <phasescale/control/reconciler.hpp>
#include <phasescale/control/spec.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/control/watchdog.hpp>
#include <phasescale/kube/events.hpp>

#include "fixtures.hpp"
#include "pods.hpp"

using namespace phasescale;
using namespace phasescale::control;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

using control_test::container;
using control_test::GiB;
using control_test::make_pod;
using control_test::MiB;
const policy::Margins kSafetyMargins{0.1, 0.1};  // the CRD's defaults

json pas(json spec) {
    return {{"apiVersion", "phasescale.io/v1alpha1"},
            {"kind", "PhaseAutoscaler"},
            {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"generation", 1}}},
            {"spec", spec}};
}

std::shared_ptr<const model::PhaseModel> model_ptr() {
    return std::make_shared<const model::PhaseModel>(phasescale::testing::two_phase_model());
}

TrackerInput input(double t, double cpu, double memory, double allocated_cpu = 1,
                   double allocated_memory = 2 * GiB) {
    TrackerInput in;
    in.timestamp = t;
    in.features = {cpu, memory};
    in.usage = {cpu, memory};
    in.allocated = {allocated_cpu, allocated_memory};
    return in;
}

policy::Allocation alloc(double cpu, double memory) {
    policy::Allocation a;
    a.request = a.limit = {cpu, memory};
    return a;
}

}  // namespace

TEST_CASE("quantities parse and format as Kubernetes writes them", "[unit]") {
    CHECK(parse_quantity("1500m").value() == Approx(1.5));
    CHECK(parse_quantity("2").value() == 2);
    CHECK(parse_quantity("0.5").value() == 0.5);
    CHECK(parse_quantity("1Gi").value() == GiB);
    CHECK(parse_quantity("512Mi").value() == 512 * MiB);
    CHECK(parse_quantity("1M").value() == 1e6);
    CHECK(parse_quantity("1e3").value() == 1000);
    CHECK(quantity_of(json(3)).value() == 3);
    CHECK_FALSE(parse_quantity("abc"));
    CHECK_FALSE(parse_quantity("1Xi"));
    CHECK_FALSE(parse_quantity(""));
    CHECK(format_cpu(1.5) == "1500m");
    CHECK(format_cpu(0.00001) == "1m");
    CHECK(format_cpu(0.1234) == "124m");  // rounded up
    CHECK(format_memory(GiB) == "1024Mi");
    CHECK(format_memory(GiB + 1) == "1025Mi");
}

TEST_CASE("spec: the CRD's defaults fill what is not given", "[unit]") {
    const ParsedSpec p = parse_spec(pas({{"selector", json::object()}}));
    REQUIRE(p.ok());
    CHECK(p.spec.mode == Mode::Off);
    CHECK(p.spec.model.id() == "default");
    CHECK(p.spec.cpu.quantile == 0.95);
    CHECK(p.spec.memory.quantile == 0.99);
    CHECK(p.spec.cpu.safety_margin == 0.1);
    CHECK(p.spec.debounce_samples == 2);
    CHECK(p.spec.min_change == 0.05);
    CHECK(p.spec.cooldown_seconds == 60);
    CHECK_FALSE(p.spec.proactive);
    CHECK(p.spec.memory.min_headroom == 384 * MiB);
    // The operator's policy and the plain replay's are the same.
    CHECK(phase_options(p.spec).memory_min_headroom == policy::PhaseOptions{}.memory_min_headroom);
    const ContainerPolicy c = p.spec.policy_for("main");
    CHECK(c.enabled);
    CHECK(c.control_cpu);
    CHECK(c.control_memory);
    CHECK(c.requests_and_limits);
}

TEST_CASE("spec: every field is read", "[unit]") {
    const ParsedSpec p = parse_spec(pas({
        {"selector", {{"matchLabels", {{"app", "train"}}}}},
        {"mode", "InPlace"},
        {"model", {{"configMap", {{"name", "models"}, {"key", "m.json"}}}}},
        {"containerPolicies",
         {{{"containerName", "*"},
           {"minAllowed", {{"cpu", "250m"}}},
           {"maxAllowed", {{"memory", "8Gi"}}}},
          {{"containerName", "sidecar"}, {"mode", "Off"}},
          {{"containerName", "main"},
           {"controlledResources", {"memory"}},
           {"controlledValues", "RequestsOnly"}}}},
        {"resources",
         {{"cpu", {{"quantile", 0.9}, {"safetyMargin", 0.2}}},
          {"memory", {{"quantile", 1}, {"minHeadroom", "128Mi"}}}}},
        {"debounceSamples", 3},
        {"minChange", 0.1},
        {"cooldownSeconds", 30},
        {"proactive", true},
        {"prometheus",
         {{"url", "http://prom:9090"},
          {"featureQueries",
           {{"cpu.usage.cores", "sum(x{namespace=\"{namespace}\"}[{window}])"}}}}},
    }));
    REQUIRE(p.ok());
    const AutoscalerSpec& s = p.spec;
    CHECK(s.mode == Mode::InPlace);
    CHECK(s.model.id() == "configmap/models/m.json");
    CHECK(s.cpu.quantile == 0.9);
    CHECK(s.cpu.safety_margin == 0.2);
    CHECK(s.memory.quantile == 1);
    CHECK(s.debounce_samples == 3);
    CHECK(s.min_change == 0.1);
    CHECK(s.cooldown_seconds == 30);
    CHECK(s.proactive);
    CHECK(s.prometheus_url == "http://prom:9090");
    CHECK(s.feature_queries.at("cpu.usage.cores") == "sum(x{namespace=\"{namespace}\"}[{window}])");
    const ContainerPolicy other = s.policy_for("worker");
    CHECK(other.min_allowed.cpu.value() == Approx(0.25));
    CHECK(other.max_allowed.memory.value() == 8 * GiB);
    CHECK_FALSE(s.policy_for("sidecar").enabled);
    const ContainerPolicy main = s.policy_for("main");
    CHECK_FALSE(main.control_cpu);
    CHECK(main.control_memory);
    CHECK_FALSE(main.requests_and_limits);
    const policy::PhaseOptions o = phase_options(s);
    CHECK(o.cpu_quantile == 0.9);
    CHECK(o.margins.cpu == 0.2);
    CHECK(o.debounce == 3);
    CHECK(o.proactive);
    CHECK(o.memory_min_headroom == 128 * MiB);
}

TEST_CASE("spec: modes and container policies read as the VPA's, older spellings too", "[unit]") {
    // Recommend (earlier versions) is Off: both recommend, neither resizes.
    CHECK(parse_spec(pas({{"selector", json::object()}, {"mode", "Recommend"}})).spec.mode ==
          Mode::Off);
    CHECK(parse_spec(pas({{"selector", json::object()}, {"mode", "Off"}})).spec.mode == Mode::Off);
    const json policies = {{{"containerName", "sidecar"}, {"mode", "Off"}},
                           {{"containerName", "*"}, {"maxAllowed", {{"cpu", "2"}}}}};
    const ParsedSpec nested = parse_spec(
        pas({{"selector", json::object()}, {"resourcePolicy", {{"containerPolicies", policies}}}}));
    const ParsedSpec old =
        parse_spec(pas({{"selector", json::object()}, {"containerPolicies", policies}}));
    for (const ParsedSpec* p : {&nested, &old}) {
        REQUIRE(p->ok());
        CHECK_FALSE(p->spec.policy_for("sidecar").enabled);
        CHECK(p->spec.policy_for("main").max_allowed.cpu == 2);
    }
    const ParsedSpec both =
        parse_spec(pas({{"selector", json::object()},
                        {"containerPolicies", policies},
                        {"resourcePolicy", {{"containerPolicies", policies}}}}));
    CHECK_THAT(both.message(), Catch::Matchers::Contains("not both"));
    const ParsedSpec bad = parse_spec(pas(
        {{"selector", json::object()},
         {"resourcePolicy", {{"containerPolicies", {{{"containerName", "a"}, {"mode", "No"}}}}}}}));
    CHECK_THAT(bad.message(),
               Catch::Matchers::Contains("resourcePolicy.containerPolicies[0].mode"));
}

TEST_CASE("spec: feature queries use {namespace} and {window}, the older ${...} reads the same",
          "[unit]") {
    auto parsed = [](const std::string& query) {
        return parse_spec(
            pas({{"selector", {{"matchLabels", {{"app", "train"}}}}},
                 {"prometheus", {{"featureQueries", {{"cpu.usage.cores", query}}}}}}));
    };
    const ParsedSpec old = parsed("sum(x{namespace=\"${namespace}\"}[${window}])");
    REQUIRE(old.ok());
    CHECK(old.spec.feature_queries.at("cpu.usage.cores") ==
          "sum(x{namespace=\"{namespace}\"}[{window}])");
    const ParsedSpec none = parsed("sum(x)");
    CHECK_THAT(none.message(), Contains("must use {namespace}") && !Contains("${"));
}

TEST_CASE("spec: what cannot be honoured becomes messages, never an exception", "[unit]") {
    const ParsedSpec p = parse_spec(pas({
        {"mode", "Sometimes"},
        {"model", {{"name", "gpt"}}},
        {"containerPolicies",
         {{{"containerName", "a"}, {"minAllowed", {{"cpu", "lots"}}}},
          {{"containerName", "b"},
           {"minAllowed", {{"cpu", "2"}}},
           {"maxAllowed", {{"cpu", "1"}}}}}},
        {"resources", {{"cpu", {{"quantile", 0.7}}}, {"memory", {{"minHeadroom", "-1Gi"}}}}},
        {"debounceSamples", 0},
        {"minChange", "big"},
    }));
    CHECK_FALSE(p.ok());
    const std::string m = p.message();
    CHECK_THAT(m, Contains("spec.selector: is required"));
    CHECK_THAT(m, Contains("spec.mode"));
    CHECK_THAT(m, Contains("unknown built-in model \"gpt\""));
    CHECK_THAT(m, Contains("spec.containerPolicies[0].minAllowed.cpu: not a quantity"));
    CHECK_THAT(m, Contains("minAllowed.cpu exceeds maxAllowed.cpu"));
    CHECK_THAT(m, Contains("spec.resources.cpu.quantile"));
    CHECK_THAT(m, Contains("spec.resources.memory.minHeadroom: not a quantity"));
    CHECK_THAT(m, Contains("spec.debounceSamples"));
    CHECK_THAT(m, Contains("spec.minChange: expected a number"));
    CHECK_FALSE(parse_spec(json("not an object")).ok());
    CHECK_FALSE(parse_spec(pas({{"selector",
                                 {{"matchExpressions", {{{"key", "a"}, {"operator", "In"}}}}}}}))
                    .ok());
}

TEST_CASE("label selectors: matchLabels and every matchExpressions operator", "[unit]") {
    const ParsedSpec p =
        parse_spec(pas({{"selector",
                         {{"matchLabels", {{"app", "train"}}},
                          {"matchExpressions",
                           {{{"key", "tier"}, {"operator", "In"}, {"values", {"gpu", "cpu"}}},
                            {{"key", "team"}, {"operator", "NotIn"}, {"values", {"x"}}},
                            {{"key", "owner"}, {"operator", "Exists"}},
                            {{"key", "skip"}, {"operator", "DoesNotExist"}}}}}}}));
    REQUIRE(p.ok());
    const kube::LabelSelector& s = p.spec.selector;
    std::map<std::string, std::string> labels{{"app", "train"}, {"tier", "gpu"}, {"owner", "me"}};
    CHECK(s.matches(labels));
    labels["team"] = "x";
    CHECK_FALSE(s.matches(labels));
    labels.erase("team");
    labels["skip"] = "1";
    CHECK_FALSE(s.matches(labels));
    labels.erase("skip");
    labels["tier"] = "tpu";
    CHECK_FALSE(s.matches(labels));
    labels["tier"] = "cpu";
    labels.erase("owner");
    CHECK_FALSE(s.matches(labels));
    CHECK(kube::LabelSelector{}.matches(make_pod("x")));
    CHECK_FALSE(s.matches(make_pod("x")));
}

TEST_CASE("pods: resources, QoS class, resize policy and conditions, OOM kills", "[unit]") {
    json pod =
        make_pod("a", {container("main", "1500m", "1Gi"), container("side", "100m", "64Mi")});
    auto main = container_resources(pod, "main");
    REQUIRE(main);
    CHECK(main->requests.cpu.value() == Approx(1.5));
    CHECK(main->limits.memory.value() == GiB);
    CHECK(qos_class(container_resources(pod)) == "Guaranteed");
    pod["spec"]["containers"][1]["resources"]["limits"].erase("cpu");
    CHECK(qos_class(container_resources(pod)) == "Burstable");
    CHECK(qos_class({ContainerResources{"x", {}, {}}}) == "BestEffort");
    CHECK(pod_running(pod));
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    CHECK_FALSE(pod_running(pod));

    CHECK(resize_policy(pod, "main", "memory") == "NotRequired");
    pod["spec"]["containers"][0]["resizePolicy"] = {
        {{"resourceName", "memory"}, {"restartPolicy", "RestartContainer"}}};
    CHECK(resize_policy(pod, "main", "memory") == "RestartContainer");
    CHECK(resize_policy(pod, "main", "cpu") == "NotRequired");

    CHECK_FALSE(resize_condition(pod));
    pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}},
                                   {{"type", "PodResizePending"},
                                    {"status", "True"},
                                    {"reason", "Infeasible"},
                                    {"message", "no room"}}};
    auto cond = resize_condition(pod);
    REQUIRE(cond);
    CHECK(cond->reason == "Infeasible");

    pod["status"]["containerStatuses"] = {
        {{"name", "main"},
         {"restartCount", 2},
         {"lastState", {{"terminated", {{"reason", "OOMKilled"}}}}},
         {"resources", {{"limits", {{"cpu", "1500m"}, {"memory", "2Gi"}}}}}}};
    CHECK(container_status(pod, "main").restart_count == 2);
    CHECK(container_status(pod, "main").last_oom_killed);
    CHECK(container_status(pod, "main").applied_cpu_limit == Approx(1.5));
    CHECK_FALSE(container_status(pod, "side").last_oom_killed);
    CHECK_FALSE(container_status(pod, "side").applied_cpu_limit);
}

TEST_CASE("tracker: phases and recommendations from the model, debounced", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;
    ContainerTracker t(model_ptr(), spec);
    std::optional<policy::Allocation> rec;
    for (int i = 0; i < 6; ++i) {  // 75 s: past the cooldown, which holds CPU up until then
        TrackerStep s = t.step(input(100 + 15 * i, 0.3, 0.5 * GiB));
        CHECK(s.observed);
        rec = s.recommendation;
    }
    REQUIRE(t.phase());
    CHECK(*t.phase() == 0);
    CHECK(phase_name(t.model(), t.phase()) == "phase-0");  // a model without names
    CHECK(phase_name(t.model(), std::nullopt) == "unknown");
    REQUIRE(rec);
    CHECK(rec->request.cpu < 1.0);   // phase 0 is small
    CHECK(rec->request.cpu >= 0.3);  // never below the latest usage
    const double since = t.phase_since();
    CHECK(since > 0);
    // Phase 1 once seen debounceSamples (2) times in a row.
    TrackerStep a = t.step(input(200, 2.2, 3 * GiB));
    CHECK(a.phase == 0);
    TrackerStep b = t.step(input(201, 2.2, 3 * GiB));
    CHECK(b.phase == 1);
    CHECK(b.phase_changed);
    CHECK(t.phase_since() == 201);
    REQUIRE(b.recommendation);
    CHECK(b.recommendation->request.cpu > 2.0);
}

TEST_CASE("shown phase: a stable phase shows once it has held, not while it comes and goes",
          "[unit]") {
    ShownPhase shown(60);
    shown.observe(std::nullopt, 100);
    CHECK_FALSE(shown.phase());
    shown.observe(0, 115);  // the first phase shows at once
    CHECK(shown.phase() == 0);
    CHECK(shown.since() == 115);
    // Phase 1 every other tick, or phases 1 and 2 in turn: none holds for 60 s.
    double t = 115;
    for (int i = 0; i < 20; ++i) {
        shown.observe(i % 2 == 0 ? 1 : 0, t += 15);
        CHECK(shown.phase() == 0);
    }
    for (int i = 0; i < 20; ++i) {
        shown.observe(i % 2 == 0 ? 1 : 2, t += 15);
        CHECK(shown.phase() == 0);
    }
    CHECK(shown.since() == 115);
    // Phase 1 holds: it shows once it has for 60 s, as from when it began.
    const double began = t += 15;
    shown.observe(1, began);
    for (int i = 0; i < 3; ++i) {
        shown.observe(1, t += 15);
        CHECK(shown.phase() == 0);
    }
    shown.observe(1, t += 15);
    CHECK(shown.phase() == 1);
    CHECK(shown.since() == began);
    // No hold: the stable phase shows at once.
    ShownPhase at_once(0);
    at_once.observe(0, 100);
    at_once.observe(1, 115);
    CHECK(at_once.phase() == 1);
    // A restored phase stays until another holds.
    ShownPhase restored(60);
    restored.restore(1, 50);
    restored.observe(0, 100);
    CHECK(restored.phase() == 1);
    CHECK(restored.since() == 50);
}

TEST_CASE("tracker: the shown phase waits out the hold, the stable phase does not", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;
    ContainerTracker t(model_ptr(), spec, 60);
    double now = 100;
    for (int i = 0; i < 4; ++i) t.step(input(now += 15, 0.3, 0.5 * GiB));
    REQUIRE(t.phase() == 0);
    CHECK(t.shown().phase() == 0);
    // Two samples of phase 1, two of phase 0, in turn: the stable phase (debounce 2) follows
    // every turn, the shown phase none.
    int changes = 0;
    for (int turn = 0; turn < 6; ++turn) {
        const double cpu = turn % 2 == 0 ? 2.2 : 0.3;
        for (int i = 0; i < 2; ++i) {
            changes += t.step(input(now += 15, cpu, cpu > 1 ? 3 * GiB : 0.5 * GiB)).phase_changed;
            CHECK(t.shown().phase() == 0);
        }
    }
    CHECK(changes == 6);
    // Phase 1 for good: shown 60 s after it became the stable phase.
    t.step(input(now += 15, 2.2, 3 * GiB));
    TrackerStep stable = t.step(input(now += 15, 2.2, 3 * GiB));
    REQUIRE(stable.phase_changed);
    const double began = now;
    while (now < began + 60) {
        CHECK(t.shown().phase() == 0);
        t.step(input(now += 15, 2.2, 3 * GiB));
    }
    CHECK(t.shown().phase() == 1);
    CHECK(t.shown().since() == began);
}

TEST_CASE("tracker: missing or stale metrics are skipped: no observation, no decision", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;
    ContainerTracker t(model_ptr(), spec);
    for (int i = 0; i < 4; ++i) t.step(input(100 + i, 0.3, 0.5 * GiB));
    const std::size_t samples = t.samples();
    TrackerInput missing = input(110, 0.3, 0.5 * GiB);
    missing.features.clear();
    TrackerStep s = t.step(missing);
    CHECK_FALSE(s.observed);
    CHECK_FALSE(s.recommendation);
    TrackerInput nan = input(111, 0.3, 0.5 * GiB);
    nan.features[1] = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(t.step(nan).recommendation);
    TrackerInput no_usage = input(112, 0.3, 0.5 * GiB);
    no_usage.usage.cpu = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(t.step(no_usage).recommendation);
    CHECK(t.samples() == samples);
    CHECK(t.skipped() == 3);
    CHECK(t.phase() == 0);  // the phase stays
}

TEST_CASE("tracker: an OOM kill with a new restart count bumps memory once", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;
    ContainerTracker t(model_ptr(), spec);
    TrackerInput in = input(100, 0.3, 0.5 * GiB, 1, 2 * GiB);
    in.restart_count = 1;
    in.last_oom_killed = true;  // from before we saw it: not ours
    CHECK_FALSE(t.step(in).oom_killed);
    for (int i = 1; i < 5; ++i) {
        in.timestamp = 100 + i;
        CHECK_FALSE(t.step(in).oom_killed);  // same restart count
    }
    in.timestamp = 110;
    in.restart_count = 2;
    TrackerStep s = t.step(in);
    CHECK(s.oom_killed);
    REQUIRE(s.recommendation);
    CHECK(s.recommendation->request.memory >= 2 * GiB * 1.2);
}

TEST_CASE("tracker: memory within the safety margin of the limit, or ramping to it, is at risk",
          "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;  // margin 0.1
    ContainerTracker t(model_ptr(), spec);
    TrackerInput in = input(100, 0.3, 1.8 * GiB, 1, 2 * GiB);
    in.limits = {1, 2 * GiB};
    CHECK_FALSE(t.step(in).at_risk.memory);  // 1.8 x 1.1 < 2
    in.timestamp = 101;
    in.usage.memory = in.features[1] = 1.85 * GiB;
    CHECK(t.step(in).at_risk.memory);
    in.timestamp = 102;
    in.limits.memory = 4 * GiB;  // a limit above the request is the OOM line
    CHECK_FALSE(t.step(in).at_risk.memory);
    // CPU alike, against its request (1 core): 0.95 x 1.1 >= 1.
    in.timestamp = 103;
    CHECK_FALSE(t.step(in).at_risk.cpu);  // 0.3 cores
    in.timestamp = 104;
    in.usage.cpu = in.features[0] = 0.95;
    CHECK(t.step(in).at_risk.cpu);
    // Memory ramping to its line (4 GiB): 2.8 after 1.85 is within no margin, and the same growth
    // once more (3.75) stays below it; 3.5 after 2.8 is within no margin either (3.85), but 0.7
    // more reaches the line: at risk before the margin is used up. 3.55 after 3.5: neither.
    in.timestamp = 105;
    in.usage.memory = in.features[1] = 2.8 * GiB;
    CHECK_FALSE(t.step(in).at_risk.memory);
    in.timestamp = 106;
    in.usage.memory = in.features[1] = 3.5 * GiB;
    CHECK(t.step(in).at_risk.memory);
    in.timestamp = 107;
    in.usage.memory = in.features[1] = 3.55 * GiB;
    CHECK_FALSE(t.step(in).at_risk.memory);
}

TEST_CASE("tracker: CPU throttled at the limit asks for more than the limit", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;  // target 0.95
    ContainerTracker t(model_ptr(), spec);
    // A Guaranteed container pinned at its 1 core: usage cannot show what it wants.
    TrackerInput in = input(100, 1, 1 * GiB, 1, 2 * GiB);
    in.limits = {1, 2 * GiB};
    std::optional<policy::Allocation> last;
    for (int i = 0; i < 6; ++i) {
        in.timestamp = 100 + 15 * i;
        last = t.step(in).recommendation;
    }
    REQUIRE(last);
    CHECK(last->request.cpu < 1.5);  // no throttling known: its usage plus the margin at most
    in.cpu_throttled = 0.4;          // 40% of its CFS periods throttled
    in.timestamp += 15;
    // A tick's share covers 15 s of throttling, more than the policy's throttled_seconds: the
    // policy's growth, 1.5 x the limit, at once.
    const TrackerStep throttled = t.step(in);
    CHECK(throttled.at_risk.cpu);
    REQUIRE(throttled.recommendation);
    CHECK(throttled.recommendation->request.cpu >= 1.5);
    // No answer from Prometheus (NaN), or a share out of range, is not taken as throttling.
    for (double share : {std::nan(""), -1.0}) {
        in.timestamp += 15;
        in.cpu_throttled = share;
        const TrackerStep s = t.step(in);
        REQUIRE(s.recommendation);
        CHECK(s.recommendation->request.cpu < 1.5);
    }
}

// A tracker at the CRD's defaults (CPU target 0.95).
ContainerTracker default_tracker() {
    return ContainerTracker(model_ptr(), parse_spec(pas({{"selector", json::object()}})).spec);
}

// `in`, a Guaranteed container at its 1 core whose shares average over 60 s (the last 4 ticks of
// 15 s), through 6 quiet ticks of `t`, from 100 s.
void through_quiet_ticks(ContainerTracker& t, TrackerInput& in) {
    in.limits = {1, 2 * GiB};
    in.applied_cpu_limit = 1;
    in.rate_window = 60;
    for (int i = 0; i < 6; ++i) {
        in.timestamp = 100 + 15 * i;
        t.step(in);
    }
}

// `in` through_quiet_ticks, then 2 throttled in 40% of its CFS periods, which grow it: the
// CPU the tracker recommends at the last (1.5x the limit at least).
double grown_after_throttling(ContainerTracker& t, TrackerInput& in) {
    through_quiet_ticks(t, in);
    in.cpu_throttled = 0.4;
    std::optional<policy::Allocation> grown;
    for (int i = 0; i < 2; ++i) {
        in.timestamp += 15;
        grown = t.step(in).recommendation;
    }
    REQUIRE(grown);
    REQUIRE(grown->request.cpu >= 1.5);
    return grown->request.cpu;
}

TEST_CASE("tracker: a throttled share from before the CPU limit changed is not counted again",
          "[unit]") {
    ContainerTracker t = default_tracker();
    TrackerInput in = input(100, 1, 1 * GiB, 1, 2 * GiB);
    const double grown = grown_after_throttling(t, in);
    // The growth asked for in the spec, then applied by the kubelet a tick later, as its status
    // says; the shares of the next ticks still average over the old limit's periods.
    in.allocated.cpu = in.limits.cpu = grown;
    const double once_more = 1.5 * grown;
    for (int i = 0; i < 5; ++i) {  // the tick before it was applied, then 4 windows back over it
        in.timestamp += 15;
        if (i == 1) in.applied_cpu_limit = grown;
        const TrackerStep s = t.step(in);
        REQUIRE(s.recommendation);
        CHECK(s.recommendation->request.cpu < once_more);
    }
    in.timestamp += 15;  // the first throttled share wholly under the new limit
    const TrackerStep s = t.step(in);
    REQUIRE(s.recommendation);
    CHECK(s.recommendation->request.cpu >= once_more);
}

TEST_CASE("tracker: a share from before a raise counts once the new limit is used up too",
          "[unit]") {
    ContainerTracker t = default_tracker();
    TrackerInput in = input(100, 1, 1 * GiB, 1, 2 * GiB);
    const double grown = grown_after_throttling(t, in);
    // Grown and applied at once, and the container uses all of it: its CPU rate is the new
    // limit's. It wants more than that too, so the shares of the next ticks grow it again, though
    // the window their scrapes may lie in reaches back before the raise (the test before: a
    // container that does not use the new limit up waits it out).
    in.allocated.cpu = in.limits.cpu = in.applied_cpu_limit = grown;
    in.usage.cpu = in.features[0] = grown;
    std::optional<policy::Allocation> again;
    for (int i = 1; i <= 2; ++i) {
        in.timestamp += 15;
        again = t.step(in).recommendation;
    }
    REQUIRE(again);
    CHECK(again->request.cpu >= 1.5 * grown);
}

TEST_CASE("tracker: throttled seconds size a throttled container, under the limit in force",
          "[unit]") {
    ContainerTracker t = default_tracker();
    TrackerInput in = input(100, 1, 1 * GiB, 1, 2 * GiB);
    through_quiet_ticks(t, in);
    // Throttled in every period for 2 CPU-seconds a second at its 1 core: it wants 3.
    in.cpu_throttled = 1;
    in.cpu_throttled_cores = 2;
    in.timestamp += 15;
    const TrackerStep throttled = t.step(in);
    REQUIRE(throttled.recommendation);
    const double grown = throttled.recommendation->request.cpu;
    CHECK(grown >= 3 * 1.1);  // its demand plus the safety margin at least
    CHECK(grown < 4);         // not the largest growth allowed (4x)
    // Raised and applied; Prometheus still answers the old window's seconds, but the container
    // uses 90% of the new limit, not all of it: they were the old limit's, and grow nothing more.
    // (Counted, they would grow it again, to its usage over the window plus them: 4.2 to 5 cores.)
    in.allocated.cpu = in.limits.cpu = in.applied_cpu_limit = grown;
    for (int i = 0; i < 3; ++i) {
        in.timestamp += 15;
        in.usage.cpu = in.features[0] = ((3 - i) * 1 + (i + 1) * 0.9 * grown) / 4;
        const TrackerStep s = t.step(in);
        REQUIRE(s.recommendation);
        CHECK(s.recommendation->request.cpu <= grown);
    }
}

TEST_CASE("tracker: a throttled share from before the CPU limit was cut counts at once", "[unit]") {
    AutoscalerSpec spec = parse_spec(pas({{"selector", json::object()}})).spec;  // target 0.95
    ContainerTracker t(model_ptr(), spec);
    TrackerInput in = input(100, 0.5, 1 * GiB, 2, 2 * GiB);
    in.limits = {2, 2 * GiB};
    in.applied_cpu_limit = 2;
    in.rate_window = 60;
    for (int i = 0; i < 6; ++i) {
        in.timestamp = 100 + 15 * i;
        t.step(in);
    }
    // Cut to 1 core, applied, as a phase begins that wants more: what was throttled at 2 cores
    // would be at 1 too, so the shares of the next two ticks, although their window reaches back
    // before the cut, grow it at once (no demand above the limit was shown: 1.5 x the limit).
    in.allocated.cpu = in.limits.cpu = in.applied_cpu_limit = 1;
    in.usage.cpu = in.features[0] = 1;
    in.cpu_throttled = 0.4;
    std::optional<policy::Allocation> grown;
    for (int i = 0; i < 2; ++i) {
        in.timestamp += 15;
        grown = t.step(in).recommendation;
    }
    REQUIRE(grown);
    CHECK(grown->request.cpu >= 1.5);  // the policy's growth, 1.5 x the limit
}

TEST_CASE("targets: clamped to min/maxAllowed, rounded, only controlled resources", "[unit]") {
    ContainerResources cur{"main", {1.0, 2 * GiB}, {1.0, 2 * GiB}};
    ContainerPolicy p;
    p.min_allowed.cpu = 0.5;
    p.max_allowed.memory = 3 * GiB;
    ContainerTarget t = target_for(cur, alloc(0.1234, 10 * GiB), p, 0.05);
    CHECK(t.wanted.requests.cpu.value() == Approx(0.5));
    CHECK(t.wanted.limits.cpu.value() == Approx(0.5));
    CHECK(t.wanted.requests.memory.value() == 3 * GiB);
    CHECK(t.worth_resizing);

    t = target_for(cur, alloc(0.1234, 1.5 * GiB), ContainerPolicy{}, 0.05);
    CHECK(t.wanted.requests.cpu.value() == Approx(0.124));  // whole millicores, rounded up

    ContainerPolicy memory_only;
    memory_only.control_cpu = false;
    t = target_for(cur, alloc(3, 1 * GiB), memory_only, 0.05);
    CHECK(t.wanted.requests.cpu.value() == 1.0);
    CHECK(t.wanted.limits.cpu.value() == 1.0);
    CHECK(t.wanted.requests.memory.value() == GiB);
    CHECK_FALSE(t.cpu_changed());
    CHECK(t.memory_changed());

    ContainerPolicy off;
    off.enabled = false;
    t = target_for(cur, alloc(3, 5 * GiB), off, 0.05);
    CHECK_FALSE(t.worth_resizing);

    // RequestsOnly: the limit stays and the request never exceeds it.
    ContainerPolicy requests_only;
    requests_only.requests_and_limits = false;
    ContainerResources burst{"main", {0.5, GiB}, {2.0, 4 * GiB}};
    t = target_for(burst, alloc(3, 2 * GiB), requests_only, 0.05);
    CHECK(t.wanted.requests.cpu.value() == 2.0);
    CHECK(t.wanted.limits.cpu.value() == 2.0);
    CHECK(t.wanted.limits.memory.value() == 4 * GiB);
    // RequestsAndLimits keeps the limit-to-request ratio.
    t = target_for(burst, alloc(1, 2 * GiB), ContainerPolicy{}, 0.05);
    CHECK(t.wanted.limits.cpu.value() == Approx(4.0));
    CHECK(t.wanted.limits.memory.value() == 8 * GiB);

    // Below minChange: not worth a resize.
    t = target_for(cur, alloc(1.03, 2.02 * GiB), ContainerPolicy{}, 0.05);
    CHECK_FALSE(t.worth_resizing);
}

TEST_CASE("pod decisions: resize when worth it and the cooldown has passed", "[unit]") {
    json pod = make_pod("a");
    ContainerTarget t =
        target_for(*container_resources(pod, "main"), alloc(2, GiB), ContainerPolicy{}, 0.05);
    PodGate gate;
    PodDecision d = decide_pod(pod, {t}, 60, kSafetyMargins, gate, 1000);
    CHECK(d.action == Action::Resize);
    REQUIRE(d.resized.size() == 1);
    CHECK(d.restarts == policy::Restarts::Cooldown);  // it cuts memory
    gate.cooldowns.start = 1000;
    d = decide_pod(pod, {t}, 60, kSafetyMargins, gate, 1030);
    CHECK(d.action == Action::Wait);
    CHECK(d.reason == "Cooldown");
    CHECK(decide_pod(pod, {t}, 60, kSafetyMargins, gate, 1061).action == Action::Resize);
    ContainerTarget same =
        target_for(*container_resources(pod, "main"), alloc(1, 2 * GiB), ContainerPolicy{}, 0.05);
    CHECK(decide_pod(pod, {same}, 60, kSafetyMargins, gate, 2000).action == Action::None);
    // After the cooldown, a resize that only raises CPU starts a cooldown of CPU cuts alone; one
    // that moves memory, the pod's.
    const ContainerResources cur = *container_resources(pod, "main");  // 1 core, 2 GiB
    const auto to = [&](double cpu, double memory) {
        return target_for(cur, alloc(cpu, memory), ContainerPolicy{}, 0.05);
    };
    const PodDecision more_cpu = decide_pod(pod, {to(2, 2 * GiB)}, 60, kSafetyMargins, gate, 2000);
    CHECK(more_cpu.action == Action::Resize);
    CHECK(more_cpu.restarts == policy::Restarts::CpuCuts);
    CHECK(decide_pod(pod, {to(2, 3 * GiB)}, 60, kSafetyMargins, gate, 2000).restarts ==
          policy::Restarts::Cooldown);
    // Within a cooldown of CPU cuts, memory comes down but CPU does not; a cut of CPU alone waits.
    gate.cooldowns.cpu_raised = 2000;
    const PodDecision less = decide_pod(pod, {to(0.5, GiB)}, 60, kSafetyMargins, gate, 2030);
    REQUIRE(less.action == Action::Resize);
    CHECK(less.resized[0].wanted.requests.cpu == 1);
    CHECK(less.resized[0].wanted.limits.cpu == 1);
    CHECK(less.resized[0].wanted.requests.memory == GiB);
    const PodDecision less_cpu =
        decide_pod(pod, {to(0.5, 2 * GiB)}, 60, kSafetyMargins, gate, 2030);
    CHECK(less_cpu.action == Action::Wait);
    CHECK(less_cpu.reason == "Cooldown");
    CHECK(decide_pod(pod, {to(0.5, 2 * GiB)}, 60, kSafetyMargins, gate, 2061).action ==
          Action::Resize);
}

TEST_CASE(
    "pod decisions: within the cooldown, more memory than minChange goes ahead, any more once "
    "memory was at risk, and nothing else does, CPU alike at risk for a raise beyond its margin",
    "[unit]") {
    json pod = make_pod("a");  // requests 1 core, 2 GiB
    const ContainerResources cur = *container_resources(pod, "main");
    const ContainerTarget more_memory = target_for(cur, alloc(1, 3 * GiB), ContainerPolicy{}, 0.05);
    const ContainerTarget more_cpu = target_for(cur, alloc(2, 2 * GiB), ContainerPolicy{}, 0.05);
    // More CPU and a little more memory (4%, within minChange).
    const ContainerTarget a_little_more =
        target_for(cur, alloc(2, 2.08 * GiB), ContainerPolicy{}, 0.05);
    CHECK(more_memory.memory_grows);
    CHECK_FALSE(a_little_more.memory_grows);
    PodGate gate;
    gate.cooldowns.start = 1000;
    const PodDecision grown = decide_pod(pod, {more_memory}, 60, kSafetyMargins, gate, 1010);
    CHECK(grown.action == Action::Resize);
    CHECK(grown.restarts == policy::Restarts::Nothing);  // let through within the cooldown
    CHECK_THAT(grown.message, Contains("(within the cooldown: memory grows)"));
    CHECK(decide_pod(pod, {more_cpu}, 60, kSafetyMargins, gate, 1010).reason == "Cooldown");
    CHECK(decide_pod(pod, {a_little_more}, 60, kSafetyMargins, gate, 1010).reason == "Cooldown");
    gate.at_risk.memory = true;
    CHECK(decide_pod(pod, {more_cpu}, 60, kSafetyMargins, gate, 1010).reason == "Cooldown");
    const PodDecision m = decide_pod(pod, {a_little_more}, 60, kSafetyMargins, gate, 1010);
    CHECK(m.action == Action::Resize);
    CHECK_THAT(m.message, Contains("(within the cooldown: memory at risk)"));
    // A CPU cut with a little more memory: once the cut is held back, the 4% left is within
    // minChange, too little for a resize, as the replay's Actuator judges.
    const ContainerTarget cut_for_a_little_memory =
        target_for(cur, alloc(0.5, 2.08 * GiB), ContainerPolicy{}, 0.05);
    REQUIRE(cut_for_a_little_memory.worth_resizing);
    const PodDecision w =
        decide_pod(pod, {cut_for_a_little_memory}, 60, kSafetyMargins, gate, 1010);
    CHECK(w.action == Action::Wait);
    CHECK(w.reason == "Cooldown");
    CHECK_THAT(w.message, Contains("last resize outside a cooldown 10 s ago"));
    // Within the cooldown no CPU is cut on the way; after it, as wanted.
    const ContainerTarget less_cpu = target_for(cur, alloc(0.5, 3 * GiB), ContainerPolicy{}, 0.05);
    const PodDecision d = decide_pod(pod, {less_cpu}, 60, kSafetyMargins, gate, 1010);
    REQUIRE(d.action == Action::Resize);
    CHECK(d.resized[0].wanted.requests.cpu == 1);
    CHECK(d.resized[0].wanted.limits.cpu == 1);
    CHECK(d.resized[0].wanted.requests.memory == 3 * GiB);
    const PodDecision after = decide_pod(pod, {less_cpu}, 60, kSafetyMargins, gate, 1100);
    CHECK(after.resized[0].wanted.requests.cpu == 0.5);
    CHECK(after.restarts == policy::Restarts::Cooldown);  // a cut
    CHECK_THAT(after.message, !Contains("within the cooldown"));

    // CPU at risk: a raise beyond its margin (1 x 1.1) goes ahead, cutting no memory; one within
    // it waits.
    gate.at_risk = {true, false};
    const ContainerTarget a_little_more_cpu =
        target_for(cur, alloc(1.1, 2 * GiB), ContainerPolicy{}, 0.05);
    CHECK(decide_pod(pod, {a_little_more_cpu}, 60, kSafetyMargins, gate, 1010).reason ==
          "Cooldown");
    const ContainerTarget cpu_for_memory = target_for(cur, alloc(2, GiB), ContainerPolicy{}, 0.05);
    const PodDecision c = decide_pod(pod, {cpu_for_memory}, 60, kSafetyMargins, gate, 1010);
    REQUIRE(c.action == Action::Resize);
    CHECK(c.resized[0].wanted.requests.cpu == 2);
    CHECK(c.resized[0].wanted.requests.memory == 2 * GiB);
    CHECK(c.resized[0].wanted.limits.memory == 2 * GiB);
    CHECK_THAT(c.message, Contains("(within the cooldown: CPU at risk)"));
}

TEST_CASE(
    "pod decisions: a changed resource whose resizePolicy restarts the container is left alone",
    "[unit]") {
    json pod = make_pod("a", {container("main", "1", "2Gi"), container("side", "1", "2Gi")});
    pod["spec"]["containers"][0]["resizePolicy"] = {
        {{"resourceName", "memory"}, {"restartPolicy", "RestartContainer"}}};
    auto res = container_resources(pod);
    ContainerTarget main_t = target_for(res[0], alloc(2, 3 * GiB), ContainerPolicy{}, 0.05);
    ContainerTarget side_t = target_for(res[1], alloc(2, 3 * GiB), ContainerPolicy{}, 0.05);
    PodGate gate;
    PodDecision d = decide_pod(pod, {main_t}, 0, kSafetyMargins, gate, 1000);
    CHECK(d.action == Action::Blocked);
    CHECK(d.reason == "RestartRequired");
    d = decide_pod(pod, {main_t, side_t}, 0, kSafetyMargins, gate, 1000);
    CHECK(d.action == Action::Resize);
    REQUIRE(d.resized.size() == 1);
    CHECK(d.resized[0].name == "side");
    CHECK(d.skipped == std::vector<std::string>{"main"});
    // Only the CPU changes: memory's RestartContainer does not matter.
    ContainerTarget cpu_only = target_for(res[0], alloc(2, 2 * GiB), ContainerPolicy{}, 0.05);
    CHECK(decide_pod(pod, {cpu_only}, 0, kSafetyMargins, gate, 1000).action == Action::Resize);
}

TEST_CASE("pod decisions: a change of QoS class is never made", "[unit]") {
    json pod = make_pod("a");
    // RequestsOnly on a Guaranteed pod would make it Burstable.
    ContainerPolicy requests_only;
    requests_only.requests_and_limits = false;
    ContainerTarget t =
        target_for(*container_resources(pod, "main"), alloc(0.5, GiB), requests_only, 0.05);
    PodGate gate;
    PodDecision d = decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1000);
    CHECK(d.action == Action::Blocked);
    CHECK(d.reason == "QoSChange");
    CHECK_THAT(d.message, Contains("Guaranteed") && Contains("Burstable"));
    CHECK(d.resized.empty());
}

TEST_CASE("pod decisions: pending or in-progress resizes back off exponentially", "[unit]") {
    json pod = make_pod("a");
    ContainerTarget t =
        target_for(*container_resources(pod, "main"), alloc(2, 3 * GiB), ContainerPolicy{}, 0.05);
    pod["status"]["conditions"] = {{{"type", "PodResizePending"},
                                    {"status", "True"},
                                    {"reason", "Infeasible"},
                                    {"message", "Node didn't have enough capacity"}}};
    PodGate gate;
    PodDecision d = decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1000);
    CHECK(d.action == Action::Blocked);
    CHECK(d.reason == "ResizeInfeasible");
    CHECK_THAT(d.message, Contains("enough capacity"));
    CHECK(gate.backoff_until == 1000 + kBackoffInitialSeconds);
    decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1001);  // within the backoff: not extended
    CHECK(gate.backoff_until == 1000 + kBackoffInitialSeconds);
    decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1006);
    CHECK(gate.backoff_until == 1006 + 2 * kBackoffInitialSeconds);
    pod["status"]["conditions"] = {{{"type", "PodResizeInProgress"}, {"status", "True"}}};
    d = decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1020);
    CHECK(d.action == Action::Wait);
    CHECK(d.reason == "ResizeInProgress");
    CHECK(gate.backoff_until == 1020 + 4 * kBackoffInitialSeconds);
    // The condition cleared, but the backoff holds until it ends.
    pod["status"].erase("conditions");
    d = decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1030);
    CHECK(d.reason == "Backoff");
    CHECK(decide_pod(pod, {t}, 0, kSafetyMargins, gate, 1041).action == Action::Resize);
    pod["status"]["conditions"] = {
        {{"type", "PodResizePending"}, {"status", "True"}, {"reason", "Deferred"}}};
    CHECK(decide_pod(pod, {t}, 0, kSafetyMargins, gate, 2000).reason == "ResizeDeferred");
}

TEST_CASE("backoff: doubles from the initial delay up to the maximum, the level bounded",
          "[unit]") {
    PodGate gate;
    back_off(gate, 1000);
    CHECK(gate.backoff_until == 1000 + kBackoffInitialSeconds);
    CHECK(gate.backoff_level == 1);
    back_off(gate, 2000);
    CHECK(gate.backoff_until == 2000 + 2 * kBackoffInitialSeconds);
    for (int i = 0; i < 100; ++i) back_off(gate, 3000);
    CHECK(gate.backoff_until == 3000 + kBackoffMaxSeconds);
    CHECK(gate.backoff_level == kBackoffMaxLevel);
    gate.backoff_level = 0;  // a resize that went through starts over
    back_off(gate, 4000);
    CHECK(gate.backoff_until == 4000 + kBackoffInitialSeconds);
}

TEST_CASE("patches: the resize body and the pod's label and annotations", "[unit]") {
    json pod = make_pod("a");
    ContainerTarget t =
        target_for(*container_resources(pod, "main"), alloc(1.5, 3 * GiB), ContainerPolicy{}, 0.05);
    json body = resize_body({t});
    CHECK(body == json::parse(R"({"spec":{"containers":[{"name":"main","resources":{
        "requests":{"cpu":"1500m","memory":"3072Mi"},
        "limits":{"cpu":"1500m","memory":"3072Mi"}}}]}})"));
    ContainerPolicy requests_only;
    requests_only.requests_and_limits = false;
    requests_only.control_memory = false;
    ContainerTarget r =
        target_for(*container_resources(pod, "main"), alloc(0.5, 3 * GiB), requests_only, 0.05);
    CHECK(resize_body({r}) == json::parse(R"({"spec":{"containers":[{"name":"main",)"
                                          R"("resources":{"requests":{"cpu":"500m"}}}]}})"));
    CHECK(recommendation_json({t})["main"]["requests"]["memory"] == "3072Mi");

    PodMarks marks;
    marks.phase_label = "1";
    marks.phase_name = "phase-1";
    marks.phase_since = kube::format_time(1700000000);
    marks.recommendation = recommendation_json({t}).dump();
    json patch = marks_patch(pod, marks);
    CHECK(patch["metadata"]["labels"][kPhaseLabel] == "1");
    CHECK(patch["metadata"]["annotations"][kPhaseNameAnnotation] == "phase-1");
    CHECK(patch["metadata"]["annotations"][kPhaseSinceAnnotation] == "2023-11-14T22:13:20Z");
    pod.merge_patch(patch);
    CHECK(marks_patch(pod, marks).is_null());  // nothing to write twice
    marks.phase_label = "0";
    patch = marks_patch(pod, marks);
    CHECK(patch["metadata"]["labels"][kPhaseLabel] == "0");
    CHECK_FALSE(patch["metadata"].contains("annotations"));
    CHECK(kube::parse_time("2023-11-14T22:13:20Z").value() == 1700000000);
    CHECK(kube::parse_time("2023-11-14T22:13:20.5Z").value() == 1700000000.5);
    CHECK_FALSE(kube::parse_time("yesterday"));
}

TEST_CASE("pods that a VerticalPodAutoscaler acts on are recognised", "[unit]") {
    json pod = make_pod("web-5d4f9c7b8-abcde");
    CHECK(pod_workloads(pod).empty());
    pod["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                           {"kind", "ReplicaSet"},
                                           {"name", "web-5d4f9c7b8"},
                                           {"controller", true}}};
    auto w = pod_workloads(pod);
    REQUIRE(w.size() == 2);
    CHECK(w[1].kind == "Deployment");
    CHECK(w[1].name == "web");
    json vpa = {
        {"spec",
         {{"targetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}}}}};
    CHECK(vpa_controls(vpa, pod));
    vpa["spec"]["updatePolicy"] = {{"updateMode", "Off"}};
    CHECK_FALSE(vpa_controls(vpa, pod));  // recommends only
    vpa["spec"]["updatePolicy"] = {{"updateMode", "InPlaceOrRecreate"}};
    CHECK(vpa_controls(vpa, pod));
    vpa["spec"]["targetRef"]["name"] = "other";
    CHECK_FALSE(vpa_controls(vpa, pod));
    CHECK_FALSE(vpa_controls(json::object(), pod));
    // Malformed fields (found by fuzzing) are no owner, never a throw.
    pod["metadata"]["ownerReferences"] = {
        {{"kind", 5}, {"name", "web-5d4f9c7b8"}, {"controller", "yes"}}};
    CHECK(pod_workloads(pod).empty());
    pod["metadata"]["ownerReferences"] = "not a list";
    CHECK(pod_workloads(pod).empty());
    vpa["spec"] = {{"targetRef", {{"kind", 1}}}, {"updatePolicy", {{"updateMode", 2}}}};
    CHECK_FALSE(vpa_controls(vpa, pod));
}

TEST_CASE("parse_spec_yaml never throws nor hangs on malformed YAML (found by fuzzing)", "[unit]") {
    // A lone "," made yaml-cpp 0.7's LoadAll loop forever.
    CHECK_THAT(parse_spec_yaml(",", "a.yaml").message(),
               Contains("no document of kind PhaseAutoscaler"));
    CHECK_THAT(
        parse_spec_yaml("kind: PhaseAutoscaler\nspec: {a: {{b: 1}: 2}}\n", "b.yaml").message(),
        Contains("b.yaml: not valid YAML"));
    const ParsedSpec utf = parse_spec_yaml(
        "kind: PhaseAutoscaler\nspec:\n  containerPolicies: [{containerName: a, minAllowed: {cpu: "
        "\"\xff\"}}]\n",
        "c.yaml");
    CHECK_THAT(utf.message(), Contains("minAllowed"));
    // Several documents, as kubectl takes them: the PhaseAutoscaler is found after a "---".
    const ParsedSpec two = parse_spec_yaml(
        "kind: ConfigMap\n---\nkind: PhaseAutoscaler\nspec: {selector: {}}\n", "d.yaml");
    CHECK(two.ok());
}

TEST_CASE("trimmed pods: what the controller reads is kept, the rest dropped", "[unit]") {
    json pod = make_pod("web-5d4f9c7b8-abcde",
                        {container("main", "1500m", "1Gi"), container("side", "100m", "64Mi")});
    pod["metadata"]["managedFields"] =
        json::array({{{"manager", "kubectl"}, {"fieldsV1", {{"f:spec", json::object()}}}}});
    pod["metadata"]["annotations"] = {
        {"kubectl.kubernetes.io/last-applied-configuration", std::string(4000, 'x')},
        {kRecommendationAnnotation, "{}"},
        {kPhaseSinceAnnotation, "2026-01-01T00:00:00Z"}};
    pod["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                           {"kind", "ReplicaSet"},
                                           {"name", "web-5d4f9c7b8"},
                                           {"uid", "u"},
                                           {"controller", true},
                                           {"blockOwnerDeletion", true}}};
    pod["metadata"]["resourceVersion"] = "42";
    pod["spec"]["containers"][0]["resizePolicy"] = {
        {{"resourceName", "memory"}, {"restartPolicy", "RestartContainer"}}};
    pod["spec"]["containers"][0]["env"] = {{{"name", "A"}, {"value", "b"}}};
    pod["spec"]["volumes"] = json::array({{{"name", "data"}, {"emptyDir", json::object()}}});
    pod["spec"]["nodeName"] = "node-1";
    pod["status"]["conditions"] = {{{"type", "PodResizePending"},
                                    {"status", "True"},
                                    {"reason", "Infeasible"},
                                    {"message", "no room"},
                                    {"lastProbeTime", nullptr}}};
    pod["status"]["containerStatuses"] = {
        {{"name", "main"},
         {"restartCount", 2},
         {"image", "trainer"},
         {"lastState", {{"terminated", {{"reason", "OOMKilled"}}}}}}};
    json vpa = {{"spec", {{"targetRef", {{"kind", "Deployment"}, {"name", "web"}}}}}};

    json trimmed = pod;
    trim_pod(trimmed);
    CHECK(trimmed.dump().size() < pod.dump().size() / 3);
    CHECK_FALSE(trimmed["metadata"].contains("managedFields"));
    CHECK(
        trimmed["metadata"]["annotations"] ==
        json({{kRecommendationAnnotation, "{}"}, {kPhaseSinceAnnotation, "2026-01-01T00:00:00Z"}}));
    CHECK_FALSE(trimmed["spec"].contains("volumes"));
    CHECK_FALSE(trimmed["spec"]["containers"][0].contains("env"));
    // Every reading function answers the same.
    CHECK(pod_name(trimmed) == pod_name(pod));
    CHECK(pod_namespace(trimmed) == pod_namespace(pod));
    CHECK(pod_uid(trimmed) == pod_uid(pod));
    CHECK(pod_running(trimmed));
    CHECK(trimmed["metadata"]["labels"] == pod["metadata"]["labels"]);
    CHECK(kube::reference_to(trimmed).to_json() == kube::reference_to(pod).to_json());
    CHECK(container_resources(trimmed, "main")->requests ==
          container_resources(pod, "main")->requests);
    CHECK(container_resources(trimmed, "side")->limits == container_resources(pod, "side")->limits);
    CHECK(resize_policy(trimmed, "main", "memory") == "RestartContainer");
    CHECK(resize_condition(trimmed)->reason == "Infeasible");
    CHECK(container_status(trimmed, "main").restart_count == 2);
    CHECK(container_status(trimmed, "main").last_oom_killed);
    CHECK(vpa_controls(vpa, trimmed));
}

TEST_CASE("the recommendation annotation is rewritten only when it moved beyond minChange",
          "[unit]") {
    json pod = make_pod("a", {container("main", "1", "2Gi"), container("side", "100m", "64Mi")});
    auto targets_for = [&](double cpu, double memory) {
        return std::vector<ContainerTarget>{
            target_for(*container_resources(pod, "main"), alloc(cpu, memory), ContainerPolicy{},
                       0.05),
            target_for(*container_resources(pod, "side"), alloc(0.1, 64 * MiB), ContainerPolicy{},
                       0.05)};
    };
    const std::string annotated = recommendation_json(targets_for(1.5, 3 * GiB)).dump();
    CHECK(recommendation_moved(std::nullopt, targets_for(1.5, 3 * GiB), 0.05));
    CHECK_FALSE(recommendation_moved(annotated, targets_for(1.5, 3 * GiB), 0.05));
    CHECK_FALSE(recommendation_moved(annotated, targets_for(1.55, 3.1 * GiB), 0.05));  // within 5%
    CHECK(recommendation_moved(annotated, targets_for(1.7, 3 * GiB), 0.05));
    CHECK(recommendation_moved(annotated, targets_for(1.5, 2.5 * GiB), 0.05));
    CHECK(
        recommendation_moved(annotated, {targets_for(1.5, 3 * GiB)[0]}, 0.05));  // a container less
    CHECK(recommendation_moved("not json", targets_for(1.5, 3 * GiB), 0.05));
}

TEST_CASE("a container's requests default to its limits as the API server defaults them",
          "[unit]") {
    ContainerResources c;
    c.limits = {2.0, 4 * GiB};
    c.requests.cpu = 0.5;
    CHECK(requested(c).cpu == 0.5);
    CHECK(requested(c).memory == 4 * GiB);  // no memory request: its limit
    const policy::Allocation a = allocation_of(c);
    CHECK(a.request.memory == 4 * GiB);
    CHECK(a.limit.cpu == 2.0);
    c.limits.memory.reset();  // neither: 0, as a policy reads "none"
    CHECK(requested(c).memory == 0);
    CHECK(allocation_of(c).limit.memory == 0);
}

TEST_CASE("the status recommendation is rewritten only when a value moved beyond minChange",
          "[unit]") {
    AutoscalerSpec spec;
    spec.min_change = 0.05;
    auto status = [&](double cpu, double memory) {
        ContainerResources current;
        current.name = "main";
        current.requests = {1.0, 2 * GiB};
        std::vector<ContainerSummary> summaries;
        add_container(summaries, current,
                      target_for(current, alloc(cpu, memory), ContainerPolicy{}, 0.05),
                      std::nullopt);
        return recommendation_status(summaries, spec);
    };
    const json published = status(1.5, 3 * GiB);
    CHECK(recommendation_status_moved(json(), published, 0.05));  // none yet
    CHECK_FALSE(recommendation_status_moved(published, status(1.5, 3 * GiB), 0.05));
    CHECK_FALSE(recommendation_status_moved(published, status(1.55, 3.1 * GiB), 0.05));
    CHECK(recommendation_status_moved(published, status(1.7, 3 * GiB), 0.05));
    CHECK(recommendation_status_moved(published, status(1.5, 2.5 * GiB), 0.05));
    json without_memory = published;
    without_memory["containerRecommendations"][0]["target"].erase("memory");
    CHECK(recommendation_status_moved(without_memory, published, 0.05));
}

TEST_CASE("only allowed Prometheus servers get the operator's credentials", "[unit][control]") {
    const std::string own = "http://prometheus.monitoring:9090";
    CHECK(prometheus_allowed("", own, {}));  // the operator's own
    CHECK(prometheus_allowed("http://prometheus.monitoring:9090/", own, {}));
    CHECK_FALSE(prometheus_allowed("http://attacker.example:9090", own, {}));
    CHECK(prometheus_allowed("http://team-b-prom:9090", own, {"http://team-b-prom:9090/"}));
    CHECK_FALSE(
        prometheus_allowed("http://team-b-prom:9090/other", own, {"http://team-b-prom:9090"}));
}

TEST_CASE("the loop watchdog: stuck once no pass ended for the window", "[unit][control]") {
    using namespace std::chrono_literals;
    const auto t0 = LoopWatchdog::Clock::now();
    LoopWatchdog w(60s, t0);
    CHECK_FALSE(w.stuck(t0 + 59s));
    CHECK(w.stuck(t0 + 61s));
    w.beat(t0 + 61s);
    CHECK_FALSE(w.stuck(t0 + 100s));
    CHECK(w.stuck(t0 + 122s));
}
