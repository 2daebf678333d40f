// Reconciler::tick over an in-memory cluster and made-up Prometheus answers: the cases the
// end-to-end test covers on a real control plane (new pod, phase change after the debounce,
// cooldown, Infeasible backoff, failed resize, missing metrics, VPA-controlled pods, an
// operator restart), here without servers and in milliseconds.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>

#include <phasescale/control/decision.hpp>
#include <phasescale/control/quantity.hpp>
#include <phasescale/control/reconciler.hpp>
#include <phasescale/model/model.hpp>

#include "fixtures.hpp"
#include "pods.hpp"

using namespace phasescale;
using namespace phasescale::control;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

using control_test::GiB;

// The names the test model's phases get from their statistics (model/phase_names.hpp).
const std::string kSmall = "cpu-low-mem-low", kLarge = "cpu-high-mem-high";

// The API server as the control loop sees it: a ConfigMap per key, VPAs, and the writes made.
class FakeCluster final : public ClusterApi {
public:
    struct Write {
        std::string verb, ns, name;
        json body;
    };

    std::map<std::string, json> config_maps;  // ns/name
    bool vpa_crd = false;
    std::vector<json> vpa_list;
    std::string resize_error;  // thrown by resize() when not empty

    json config_map(const std::string& ns, const std::string& name) override {
        auto it = config_maps.find(ns + "/" + name);
        if (it == config_maps.end())
            throw std::runtime_error("configmaps \"" + name + "\" not found");
        return it->second;
    }
    bool vpa_installed() override { return vpa_crd; }
    std::vector<json> vpas(const std::string&) override { return vpa_list; }
    void resize(const std::string& ns, const std::string& pod, const json& body) override {
        if (!resize_error.empty()) throw std::runtime_error(resize_error);
        add({"resize", ns, pod, body});
    }
    void patch_pod(const std::string& ns, const std::string& pod, const json& patch) override {
        add({"patch", ns, pod, patch});
    }
    void patch_status(const std::string& ns, const std::string& name, const json& status) override {
        add({"status", ns, name, status});
    }
    void record_event(const kube::ObjectReference& pod, kube::EventType, const std::string& reason,
                      const std::string& message) override {
        add({"event",
             pod.ns,
             pod.name,
             {{"kind", pod.kind}, {"reason", reason}, {"message", message}}});
    }

    // The writes made since the last call, and forgets them.
    std::vector<Write> take() {
        std::lock_guard lock(mutex_);
        return std::exchange(writes_, {});
    }

private:
    void add(Write w) {
        std::lock_guard lock(mutex_);
        writes_.push_back(std::move(w));
    }
    std::mutex mutex_;
    std::vector<Write> writes_;
};

// Prometheus: each container's CPU and memory now (and its CPU throttled share and seconds, none
// unless given), and the same values as a flat history.
class FakeMetrics final : public MetricsReader {
public:
    std::map<prom::ContainerKey, std::pair<double, double>> usage;  // cores, bytes
    std::map<prom::ContainerKey, double> throttled;                 // share of CFS periods
    std::map<prom::ContainerKey, double> throttled_cores;           // throttled s per s
    std::vector<prom::FeatureQueryFailure> failures;
    int history_reads = 0;

    std::string default_url() const override { return "http://prometheus:9090"; }
    prom::FeatureSnapshot features(const std::string&, const prom::FeatureQueries& queries,
                                   const std::string& ns, std::chrono::milliseconds,
                                   const prom::QueryOptions&) override {
        prom::FeatureSnapshot s;
        s.features = queries.features();
        s.failures = failures;
        s.queries = s.features.size();
        for (const auto& [key, u] : usage)
            if (key.ns == ns)
                for (const std::string& f : s.features) s.values[key].push_back(value(key, f));
        return s;
    }
    prom::FeatureHistory history(const std::string&, const prom::FeatureQueries& queries,
                                 const std::string& ns, std::chrono::milliseconds,
                                 prom::TimePoint start, prom::TimePoint end,
                                 std::chrono::milliseconds step,
                                 const prom::QueryOptions&) override {
        ++history_reads;
        prom::FeatureHistory h;
        h.features = queries.features();
        h.queries = h.features.size();
        for (const auto& [key, u] : usage) {
            if (key.ns != ns) continue;
            auto& series = h.series[key];
            series.resize(h.features.size());
            for (auto t = start; t <= end; t += step) {
                const double secs = std::chrono::duration<double>(t.time_since_epoch()).count();
                for (std::size_t f = 0; f < h.features.size(); ++f)
                    series[f].push_back({secs, value(key, h.features[f])});
            }
        }
        return h;
    }

private:
    double value(const prom::ContainerKey& key, std::string_view feature) const {
        if (feature == prom::kCpuFeature) return usage.at(key).first;
        if (feature == prom::kMemoryFeature) return usage.at(key).second;
        const auto share = throttled.find(key);
        if (feature == prom::kThrottledFeature && share != throttled.end()) return share->second;
        const auto cores = throttled_cores.find(key);
        if (feature == prom::kThrottledCoresFeature && cores != throttled_cores.end())
            return cores->second;
        return std::nan("");
    }
};

// A pod of tests/control/pods.hpp whose container has a status (no restarts yet).
json make_pod(const std::string& name) {
    json pod = control_test::make_pod(name);
    pod["status"]["containerStatuses"] = {{{"name", "main"}, {"restartCount", 0}}};
    return pod;
}

json autoscaler(const std::string& mode) {
    return {{"apiVersion", "phasescale.io/v1alpha1"},
            {"kind", "PhaseAutoscaler"},
            {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"generation", 1}}},
            {"spec",
             {{"selector", {{"matchLabels", {{"app", "train"}}}}},
              {"mode", mode},
              {"model", {{"configMap", {{"name", "model"}, {"key", "model.json"}}}}}}}};
}

// A tick loop over one namespace "ml": the objects as the informers would hold them, updated
// by the writes the reconciler makes (as the API server would apply them).
struct Loop {
    FakeCluster* cluster = nullptr;  // owned by the reconciler
    FakeMetrics* metrics = nullptr;
    std::unique_ptr<Reconciler> reconciler;
    json pas;
    std::map<std::string, json> pods;
    std::vector<json> nodes;  // as the node informer would hold them
    double now = 1'700'000'000;
    std::vector<FakeCluster::Write> writes;  // of the last tick

    ReconcilerOptions options;
    ReconcilerHooks hooks;

    explicit Loop(const std::string& mode) : pas(autoscaler(mode)) {
        options.namespaces = {"ml"};
        options.write_workers = 1;
        options.tick = std::chrono::seconds(15);
        restart();
    }

    // A new operator, as after a restart: its state is gone, the objects stay.
    void restart() {
        auto c = std::make_unique<FakeCluster>();
        auto m = std::make_unique<FakeMetrics>();
        c->config_maps["ml/model"] = {
            {"metadata", {{"resourceVersion", "1"}}},
            {"data",
             {{"model.json", model::serialise_model(phasescale::testing::two_phase_model())}}}};
        if (metrics != nullptr) {
            m->usage = metrics->usage;
            m->throttled = metrics->throttled;
            m->throttled_cores = metrics->throttled_cores;
        }
        cluster = c.get();
        metrics = m.get();
        reconciler = std::make_unique<Reconciler>(std::move(c), std::move(m), options, hooks);
    }

    void add_pod(const std::string& name) { pods[name] = make_pod(name); }
    void use(const std::string& pod, double cpu, double memory) {
        metrics->usage[{"ml", pod, "main"}] = {cpu, memory};
    }

    TickSummary tick() {
        now += 15;
        std::vector<kube::Store::ObjectPtr> a{std::make_shared<json>(pas)}, p;
        for (const auto& [name, pod] : pods) p.push_back(std::make_shared<json>(pod));
        std::vector<kube::Store::ObjectPtr> n;
        for (const json& node : nodes) n.push_back(std::make_shared<json>(node));
        TickSummary s = reconciler->tick(a, p, n, now);
        reconciler->wait_for_writes();
        writes = cluster->take();
        apply(writes);
        return s;
    }

    void apply(const std::vector<FakeCluster::Write>& ws) {
        for (const auto& w : ws) {
            if (w.verb == "patch") pods[w.name].merge_patch(w.body);
            if (w.verb == "resize")  // one container, "main"
                pods[w.name]["spec"]["containers"][0]["resources"].merge_patch(
                    w.body["spec"]["containers"][0]["resources"]);
            if (w.verb == "status") pas.merge_patch(json{{"status", w.body}});
        }
    }

    std::size_t count(const std::string& verb) const {
        return static_cast<std::size_t>(std::count_if(
            writes.begin(), writes.end(), [&](const auto& w) { return w.verb == verb; }));
    }
    // Warning Events on the PhaseAutoscaler in the last tick, by reason.
    std::vector<std::string> autoscaler_warnings() const {
        std::vector<std::string> reasons;
        for (const auto& w : writes)
            if (w.verb == "event" && w.body["kind"] == "PhaseAutoscaler" && w.name == "train")
                reasons.push_back(w.body["reason"]);
        return reasons;
    }
    bool event(const std::string& reason) const {
        return std::any_of(writes.begin(), writes.end(), [&](const auto& w) {
            return w.verb == "event" && w.body["reason"] == reason;
        });
    }
    // Pod patches of the last tick that write the phase label or a phase annotation.
    int phase_writes() const {
        int n = 0;
        for (const auto& w : writes) {
            if (w.verb != "patch") continue;
            const json& m = w.body["metadata"];
            n += m.contains("labels") && m["labels"].contains(kPhaseLabel);
            n += m.contains("annotations") && (m["annotations"].contains(kPhaseNameAnnotation) ||
                                               m["annotations"].contains(kPhaseSinceAnnotation));
        }
        return n;
    }
    std::string label(const std::string& pod) const {
        return pods.at(pod)["metadata"]["labels"].value(kPhaseLabel, "");
    }
    json condition(const std::string& type) const {
        for (const json& c : pas["status"]["conditions"])
            if (c["type"] == type) return c;
        return {};
    }
};

}  // namespace

TEST_CASE("tick: a new pod is labelled, annotated and counted in the status", "[unit][control]") {
    Loop loop("Recommend");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    TickSummary s = loop.tick();
    CHECK(s.autoscalers == 1);
    CHECK(s.pods_tracked == 1);
    CHECK(s.prometheus_queries == 4);  // CPU, memory, the CPU throttled share and seconds
    for (const std::string& step : kTickSteps) CHECK(s.step_seconds.count(step) == 1);
    CHECK(loop.count("patch") == 1);
    CHECK(loop.label("a") == "unknown");  // the model needs a few samples of history first
    for (int i = 0; i < 3 && loop.label("a") == "unknown"; ++i) loop.tick();
    CHECK(loop.label("a") == kSmall);  // the phase's name in the model
    CHECK(loop.pods["a"]["metadata"]["annotations"][kPhaseNameAnnotation] == kSmall);
    CHECK(loop.pas["status"]["podsTracked"] == 1);
    CHECK(loop.condition("Ready")["status"] == "True");
    CHECK(loop.condition("ModelLoaded")["message"] == "model configmap/model/model.json");
    CHECK(loop.count("resize") == 0);  // Recommend never resizes
    // Nothing moved: no write at all the next tick.
    loop.tick();
    CHECK(loop.writes.empty());
}

TEST_CASE("tick: the phase label does not flap, it changes once a phase has held",
          "[unit][control]") {
    Loop loop("Recommend");
    REQUIRE(loop.options.phase_label_hold == kDefaultPhaseLabelHold);
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
    CHECK(loop.label("a") == kSmall);
    const json first_since = loop.pods["a"]["metadata"]["annotations"][kPhaseSinceAnnotation];
    // The phase alternates every two ticks: the stable phase (debounce 2) follows each turn,
    // the label none, and no pod write touches the label or the phase annotations for them
    // (the recommendation annotation follows the stable phase, as resizes do).
    int phase_writes = 0;
    for (int turn = 0; turn < 8; ++turn) {
        if (turn % 2 == 0)
            loop.use("a", 2.2, 3 * GiB);
        else
            loop.use("a", 0.3, 0.5 * GiB);
        for (int i = 0; i < 2; ++i) {
            loop.tick();
            CHECK(loop.label("a") == kSmall);
            phase_writes += loop.phase_writes();
        }
    }
    CHECK(phase_writes == 0);
    CHECK(loop.pods["a"]["metadata"]["annotations"][kPhaseSinceAnnotation] == first_since);
    int stable_changes = 0;
    for (const json& d : loop.pas["status"]["recentDecisions"])
        stable_changes += d["action"] == "PhaseChange";
    CHECK(stable_changes >= 8);
    // Phase 1 for good: the label follows once it has held for the hold (2 minutes).
    loop.use("a", 2.2, 3 * GiB);
    loop.tick();
    loop.tick();  // phase 1 is the stable phase from here
    const double began = loop.now;
    while (loop.now < began + 120) {
        CHECK(loop.label("a") == kSmall);
        loop.tick();
    }
    CHECK(loop.label("a") == kLarge);
    CHECK(loop.pods["a"]["metadata"]["annotations"][kPhaseNameAnnotation] == kLarge);
    CHECK(loop.pods["a"]["metadata"]["annotations"][kPhaseSinceAnnotation] ==
          kube::format_time(began));
}

TEST_CASE("tick: with no hold the phase label follows the stable phase", "[unit][control]") {
    Loop loop("Off");
    loop.options.phase_label_hold = std::chrono::milliseconds(0);
    loop.restart();
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
    CHECK(loop.label("a") == kSmall);
    loop.use("a", 2.2, 3 * GiB);
    loop.tick();
    CHECK(loop.label("a") == kSmall);  // one sample of phase 1: not yet the stable phase
    loop.tick();
    CHECK(loop.label("a") == kLarge);
}

TEST_CASE(
    "tick: InPlace resizes once, then the cooldown holds the next cut, which a raise within it "
    "does not put off",
    "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);  // far below the 1 core, 2 GiB requested
    std::size_t resizes = 0;
    for (int i = 0; i < 8 && resizes == 0; ++i) {
        resizes += loop.tick().resizes;
    }
    REQUIRE(resizes == 1);
    CHECK(loop.count("resize") == 1);
    CHECK(loop.event("Resized") == false);  // its result comes in the next tick
    const double first_resize = loop.now;
    // Phase 1 wants far more within the 60 s cooldown: a raise of a resource at risk goes ahead.
    loop.use("a", 2.2, 3 * GiB);
    const TickSummary s = loop.tick();
    REQUIRE(s.resizes == 1);
    CHECK(loop.event("Resized"));
    CHECK(s.writes_completed >= 1);
    const double raised_at = loop.now;
    // Back to phase 0's usage: the cut waits for the cooldown after the first resize, which the
    // raise within it did not restart.
    loop.use("a", 0.3, 0.5 * GiB);
    double cut_at = 0;
    for (int i = 0; i < 8 && cut_at == 0; ++i)
        if (loop.tick().resizes > 0) cut_at = loop.now;
    REQUIRE(cut_at > 0);
    CHECK(cut_at >= first_resize + 60);
    CHECK(cut_at < raised_at + 60);
    CHECK(loop.pas["status"]["lastResize"]["result"] == "Resized");
}

TEST_CASE("tick: an Infeasible resize blocks, says so once, and backs off", "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.pods["a"]["status"]["conditions"] = {{{"type", "PodResizePending"},
                                               {"status", "True"},
                                               {"reason", "Infeasible"},
                                               {"message", "Node didn't have enough capacity"}}};
    std::size_t blocked = 0, events = 0;
    for (int i = 0; i < 8; ++i) {
        TickSummary s = loop.tick();
        CHECK(s.resizes == 0);
        blocked += s.blocked;
        events += loop.event("ResizeBlocked") ? 1 : 0;
    }
    CHECK(blocked >= 1);
    CHECK(events == 1);  // once per reason, not every tick
    CHECK(loop.condition("ResizeBlocked")["reason"] == "ResizeInfeasible");
    CHECK_THAT(loop.condition("ResizeBlocked")["message"].get<std::string>(),
               Contains("ml/a") && Contains("capacity"));
    // The condition goes: the pod stays in backoff for a while before trying again.
    loop.pods["a"]["status"].erase("conditions");
    TickSummary s = loop.tick();
    CHECK(s.resizes == 0);
    std::size_t resizes = 0;
    for (int i = 0; i < 30 && resizes == 0; ++i) resizes += loop.tick().resizes;
    CHECK(resizes == 1);
}

TEST_CASE("tick: a failed resize backs off and shows in ResizeBlocked", "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.cluster->resize_error = "pods \"a\" is forbidden";
    std::size_t resizes = 0;
    for (int i = 0; i < 8 && resizes == 0; ++i) resizes += loop.tick().resizes;
    REQUIRE(resizes == 1);
    loop.tick();  // takes in the failure
    CHECK(loop.event("ResizeFailed"));
    CHECK(loop.condition("ResizeBlocked")["reason"] == "ResizeFailed");
    CHECK_THAT(loop.condition("ResizeBlocked")["message"].get<std::string>(),
               Contains("forbidden"));
    CHECK(loop.pas["status"]["lastResize"]["result"] == "Failed");
}

TEST_CASE("tick: missing metrics never shrink nor label a phase", "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.add_pod("b");
    loop.use("a", 0.3, 0.5 * GiB);  // b has no metrics at all
    for (int i = 0; i < 8; ++i) loop.tick();
    CHECK(loop.label("b") == "unknown");
    CHECK(loop.pods["b"]["spec"]["containers"][0]["resources"]["requests"]["memory"] == "2Gi");
    CHECK(loop.condition("MetricsAvailable")["reason"] == "NoMetrics");
    // A failed query: the condition says which, and nothing is resized on half an answer.
    loop.metrics->failures.push_back({"mem.working.set", "ml", "HTTP 503", false, {}});
    for (int i = 0; i < 3; ++i) CHECK(loop.tick().resizes == 0);
    CHECK(loop.condition("MetricsAvailable")["reason"] == "QueryFailed");
    CHECK_THAT(loop.condition("MetricsAvailable")["message"].get<std::string>(),
               Contains("HTTP 503"));
}

TEST_CASE("tick: a pod a VerticalPodAutoscaler acts on is left alone", "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("web-5d4f9c7b8-abcde");
    loop.pods["web-5d4f9c7b8-abcde"]["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                                                        {"kind", "ReplicaSet"},
                                                                        {"name", "web-5d4f9c7b8"},
                                                                        {"controller", true}}};
    loop.use("web-5d4f9c7b8-abcde", 0.3, 0.5 * GiB);
    loop.cluster->vpa_crd = true;
    loop.cluster->vpa_list = {
        {{"spec",
          {{"targetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}}}}}};
    for (int i = 0; i < 6; ++i) {
        TickSummary s = loop.tick();
        CHECK(s.pods_tracked == 0);
        CHECK(loop.count("patch") == 0);
        CHECK(loop.count("resize") == 0);
    }
    CHECK(loop.condition("ResizeBlocked")["reason"] == "VPAControlled");
    CHECK_THAT(loop.condition("ResizeBlocked")["message"].get<std::string>(),
               Contains("web-5d4f9c7b8-abcde"));
}

TEST_CASE("tick: a restarted operator knows the phase at once and starts with a cooldown",
          "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    // Room for its usage: memory within its safety margin of the limit would skip the cooldown.
    loop.pods["a"]["spec"]["containers"][0] = control_test::container("main", "3", "4Gi");
    loop.use("a", 2.2, 3 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
    REQUIRE(loop.label("a") == kLarge);
    const json since = loop.pods["a"]["metadata"]["annotations"][kPhaseSinceAnnotation];
    loop.pods["a"]["metadata"]["annotations"][kRecommendationAnnotation] = "{}";  // sized before

    loop.restart();
    TickSummary s = loop.tick();
    CHECK(loop.metrics->history_reads == 1);  // one range query for the namespace
    CHECK(s.pods_tracked == 1);
    CHECK(s.resizes == 0);             // no burst of resizes after a restart
    CHECK(loop.label("a") == kLarge);  // known at once, not relearnt
    CHECK(loop.pods["a"]["metadata"]["annotations"][kPhaseSinceAnnotation] == since);  // kept
}

namespace {

// Pod "a" of `loop`, Guaranteed at 1 core, using all of it, through 3 quiet ticks.
void at_its_core_limit(Loop& loop) {
    loop.add_pod("a");
    loop.pods["a"]["spec"]["containers"][0] = control_test::container("main", "1", "4Gi");
    loop.use("a", 1.0, 1 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
}

// The CPU limit the pod's spec asks for now.
double cpu_limit_of(Loop& loop, const std::string& pod) {
    return *parse_quantity(
        loop.pods[pod]["spec"]["containers"][0]["resources"]["limits"]["cpu"].get<std::string>());
}

// Pod "a" of `loop` at_its_core_limit, then throttled in 60% of its periods (a demand above its
// limit) from then on, through the ticks until the policy grows it: the CPU limit it grew to.
double grown_once_throttled(Loop& loop) {
    at_its_core_limit(loop);
    loop.metrics->throttled[{"ml", "a", "main"}] = 0.6;
    for (int i = 0; i < 4 && cpu_limit_of(loop, "a") <= 1; ++i) loop.tick();
    const double grown = cpu_limit_of(loop, "a");
    REQUIRE(grown >= 1.5);
    return grown;
}

}  // namespace

TEST_CASE("tick: after a restart, throttled shares from before the last growth grow nothing",
          "[unit][control]") {
    Loop loop("InPlace");
    const double grown = grown_once_throttled(loop);
    const auto cpu_limit = [&] { return cpu_limit_of(loop, "a"); };
    // The operator restarts at once: the share of its first ticks is taken from scrapes within
    // the window before them (4 scrapes of 15 s), which may lie before the growth, throttled under
    // the old limit (the fake serves 0.6 throughout). A raise at risk would skip the cooldown a
    // restart starts with.
    loop.restart();
    for (int i = 0; i < 4; ++i) {
        loop.tick();
        CHECK(cpu_limit() <= grown);
    }
    // Past that window a share that stays throttled is the new limit's, and grows it.
    loop.tick();
    CHECK(cpu_limit() > grown);
}

TEST_CASE("tick: a throttled share is judged over the window its scrapes may lie in",
          "[unit][control]") {
    Loop loop("InPlace");
    loop.pas["spec"]["cooldownSeconds"] = 300;  // no cut of the usage it shows meanwhile
    const double grown = grown_once_throttled(loop);
    const auto cpu_limit = [&] { return cpu_limit_of(loop, "a"); };
    // Prometheus goes on answering the old share and usage, as the latest two scrapes within the
    // window (4 scrapes of 15 s) do where they lie before the growth: nothing grows while they
    // may (the window from the tick before the one that saw it).
    for (int i = 0; i < 4; ++i) {
        loop.tick();
        CHECK(cpu_limit() == grown);
    }
    // Past it a share that stays throttled is the new limit's, and grows it.
    loop.tick();
    CHECK(cpu_limit() > grown);
}

TEST_CASE("tick: a throttled pod's CPU grows to the demand its throttled seconds show",
          "[unit][control]") {
    Loop loop("InPlace");
    at_its_core_limit(loop);
    const auto cpu_limit = [&] { return cpu_limit_of(loop, "a"); };
    // Throttled in every period, for 2 CPU-seconds a second: it wants 3 cores, not 1.5.
    loop.metrics->throttled[{"ml", "a", "main"}] = 1;
    loop.metrics->throttled_cores[{"ml", "a", "main"}] = 2;
    for (int i = 0; i < 4 && cpu_limit() <= 1; ++i) loop.tick();
    CHECK(cpu_limit() >= 3 * 1.1);  // that demand and the safety margin
    CHECK(cpu_limit() < 4);
}

TEST_CASE("tick: after a restart a pod keeps the phase its label names until another holds",
          "[unit][control]") {
    Loop loop("Off");  // Off writes the label only: no phase-since annotation to restore from
    loop.add_pod("a");
    loop.use("a", 2.2, 3 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
    REQUIRE(loop.label("a") == kLarge);
    // The container moved to phase 0 while the operator was down: its history says phase 0.
    loop.use("a", 0.3, 0.5 * GiB);
    loop.restart();
    loop.tick();
    CHECK(loop.label("a") == kLarge);
    const double began = loop.now;
    while (loop.now < began + 120) {
        CHECK(loop.label("a") == kLarge);
        loop.tick();
    }
    CHECK(loop.label("a") == kSmall);
}

TEST_CASE("tick: a bad spec or a missing model is a condition, nothing else", "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.pas["spec"]["model"]["configMap"]["name"] = "gone";
    loop.tick();
    CHECK(loop.condition("ModelLoaded")["reason"] == "ModelError");
    CHECK_THAT(loop.condition("ModelLoaded")["message"].get<std::string>(), Contains("not found"));
    CHECK(loop.count("patch") == 0);
    loop.pas["spec"]["mode"] = "Sometimes";
    loop.tick();
    CHECK(loop.condition("Ready")["reason"] == "InvalidSpec");
    CHECK(loop.count("patch") == 0);
}

TEST_CASE("tick: a query that waited out the tick skips the namespace, its state kept",
          "[unit][control]") {
    Loop loop("InPlace");
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    for (int i = 0; i < 3; ++i) loop.tick();
    REQUIRE(loop.label("a") == kSmall);
    // The 10 s query timeout is shorter than the 15 s tick: a timeout is a failed query.
    loop.metrics->failures.push_back({"mem.working.set", "ml", "no answer within 10 s", true, {}});
    TickSummary s = loop.tick();
    CHECK(s.namespaces_skipped == 0);
    CHECK(loop.condition("MetricsAvailable")["reason"] == "QueryFailed");

    // A 60 s timeout: each wait is what is left of the tick, and one that ran out spent it.
    loop.options.prometheus_timeout = std::chrono::seconds(60);
    loop.restart();
    loop.metrics->failures.push_back(
        {"mem.working.set", "ml", "no answer within 14.5 s", true, {}});
    s = loop.tick();
    CHECK(s.namespaces_skipped == 1);
    CHECK(s.pods_tracked == 0);
    CHECK(loop.writes.empty());  // nothing decided on half an answer, no status written
    loop.metrics->failures.clear();
    s = loop.tick();
    CHECK(s.namespaces_skipped == 0);
    CHECK(s.pods_tracked == 1);
}

TEST_CASE("tick: Off recommends as the VPA's Off: status.recommendation, annotations, no resize",
          "[unit][control]") {
    Loop loop("Off");
    loop.add_pod("a");
    loop.add_pod("b");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.use("b", 2.2, 3 * GiB);
    for (int i = 0; i < 6; ++i) CHECK(loop.tick().resizes == 0);
    CHECK(loop.pods["a"]["metadata"]["annotations"].contains(kRecommendationAnnotation));
    const json recs = loop.pas["status"]["recommendation"]["containerRecommendations"];
    REQUIRE(recs.size() == 1);  // one container name over both pods
    const json& r = recs[0];
    CHECK(r["containerName"] == "main");
    // The target is the larger pod's (b, in the busy phase); the lower bound is under the
    // smaller pod's, the upper one at least the target.
    const json ann_b = json::parse(
        loop.pods["b"]["metadata"]["annotations"][kRecommendationAnnotation].get<std::string>());
    const json ann_a = json::parse(
        loop.pods["a"]["metadata"]["annotations"][kRecommendationAnnotation].get<std::string>());
    const auto q = [](const json& v) { return *parse_quantity(v.get<std::string>()); };
    // The status is written whenever a pod's recommendation changes; a pod's annotation only when
    // its own changes by minChange (5%): a's CPU coming down once it has been seen for a cooldown
    // rewrote the status with b's latest, within 5% of b's annotation.
    CHECK(r["target"]["memory"] == ann_b["main"]["requests"]["memory"]);
    CHECK(q(r["target"]["cpu"]) == Approx(q(ann_b["main"]["requests"]["cpu"])).epsilon(0.05));
    CHECK(q(r["lowerBound"]["memory"]) <= q(ann_a["main"]["requests"]["memory"]));
    CHECK(q(r["lowerBound"]["cpu"]) < q(r["target"]["cpu"]));
    CHECK(q(r["upperBound"]["memory"]) >= q(r["target"]["memory"]));
    CHECK(q(r["uncappedTarget"]["cpu"]) > 0);
    // The phase mix: both containers, each in its phase.
    CHECK(loop.pas["status"]["containersPerPhase"] == json{{kSmall, 1}, {kLarge, 1}});
    // A steady recommendation is not written again.
    loop.tick();
    CHECK(loop.count("status") == 0);
}

TEST_CASE("tick: the policy's bounds cap the target, not the uncapped target", "[unit][control]") {
    Loop loop("Off");
    loop.pas["spec"]["resourcePolicy"] = {
        {"containerPolicies", {{{"containerName", "*"}, {"maxAllowed", {{"memory", "1Gi"}}}}}}};
    loop.add_pod("b");
    loop.use("b", 2.2, 3 * GiB);
    for (int i = 0; i < 6; ++i) loop.tick();
    const json r = loop.pas["status"]["recommendation"]["containerRecommendations"][0];
    CHECK(r["target"]["memory"] == "1024Mi");
    CHECK(r["upperBound"]["memory"] == "1024Mi");
    CHECK(*parse_quantity(r["uncappedTarget"]["memory"].get<std::string>()) > 3 * GiB);
}

TEST_CASE("tick: without pods/resize, InPlace recommends only and is not Ready, said once",
          "[unit][control]") {
    Loop loop("InPlace");
    loop.options.in_place_available = false;
    loop.options.in_place_unavailable_message = "the server does not serve pods/resize";
    loop.restart();
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    std::size_t warnings = 0;
    for (int i = 0; i < 8; ++i) {
        CHECK(loop.tick().resizes == 0);
        CHECK(loop.count("resize") == 0);
        for (const std::string& r : loop.autoscaler_warnings())
            if (r == "InPlaceResizeUnavailable") ++warnings;
    }
    CHECK(warnings == 1);  // once, not every tick
    CHECK(loop.condition("Ready")["status"] == "False");
    CHECK(loop.condition("Ready")["reason"] == "InPlaceResizeUnavailable");
    CHECK_THAT(loop.condition("Ready")["message"].get<std::string>(), Contains("pods/resize"));
    CHECK(loop.pods["a"]["metadata"]["annotations"].contains(kRecommendationAnnotation));
    CHECK(loop.pas["status"]["recommendation"]["containerRecommendations"].size() == 1);
    // Off is unaffected: Ready.
    loop.pas["spec"]["mode"] = "Off";
    loop.tick();
    CHECK(loop.condition("Ready")["status"] == "True");
}

TEST_CASE("tick: what blocks an autoscaler is a Warning Event on it, repeated only after a while",
          "[unit][control]") {
    Loop loop("InPlace");
    loop.pas["spec"]["model"]["configMap"]["name"] = "gone";
    loop.tick();
    CHECK(loop.autoscaler_warnings() == std::vector<std::string>{"ModelNotLoaded"});
    for (int i = 0; i < 10; ++i) {  // 150 s: not again
        loop.tick();
        CHECK(loop.autoscaler_warnings().empty());
    }
    loop.now += kAutoscalerWarningRepeatSeconds;
    loop.tick();
    CHECK(loop.autoscaler_warnings() == std::vector<std::string>{"ModelNotLoaded"});
    // Fixed, but no pod selected: that is said too.
    loop.pas["spec"]["model"]["configMap"]["name"] = "model";
    loop.tick();
    CHECK(loop.autoscaler_warnings() == std::vector<std::string>{"NoPodsSelected"});
    // A pod: nothing to say.
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.tick();
    CHECK(loop.autoscaler_warnings().empty());
    // A resize the kubelet finds infeasible blocks it.
    loop.pods["a"]["status"]["conditions"] = {{{"type", "PodResizePending"},
                                               {"status", "True"},
                                               {"reason", "Infeasible"},
                                               {"message", "Node didn't have enough capacity"}}};
    bool infeasible = false;
    for (int i = 0; i < 8 && !infeasible; ++i) {
        loop.tick();
        for (const std::string& r : loop.autoscaler_warnings())
            infeasible = infeasible || r == "ResizeInfeasible";
    }
    CHECK(infeasible);
}

TEST_CASE("tick: per-autoscaler reports and resize results for the metrics, gone when deleted",
          "[unit][control]") {
    Loop loop("InPlace");
    std::vector<AutoscalerReport> reports;
    std::vector<std::string> resizes, gone;
    loop.hooks.autoscaler_observed = [&](const AutoscalerReport& r) { reports.push_back(r); };
    loop.hooks.resize = [&](const std::string& a, const std::string& result,
                            const std::string& reason) {
        resizes.push_back(a + " " + result + " " + reason);
    };
    loop.hooks.autoscaler_gone = [&](const std::string& a) { gone.push_back(a); };
    loop.restart();
    loop.add_pod("a");
    loop.add_pod("b");
    loop.use("a", 0.3, 0.5 * GiB);
    loop.use("b", 0.3, 0.5 * GiB);
    for (int i = 0; i < 8 && resizes.empty(); ++i) loop.tick();
    loop.tick();  // takes in the resize's result
    REQUIRE_FALSE(resizes.empty());
    CHECK(resizes.front() == "ml/train ok applied");
    REQUIRE_FALSE(reports.empty());
    const AutoscalerReport& r = reports.back();
    CHECK(r.ns == "ml");
    CHECK(r.name == "train");
    CHECK(r.ready);
    REQUIRE(r.containers.size() == 1);
    CHECK(r.containers[0].pods == 2);
    CHECK(r.containers[0].recommended == 2);
    CHECK(r.containers[0].requested.cpu > 0);
    CHECK(r.containers[0].target_sum.memory >= r.containers[0].target_max.memory);
    CHECK(r.containers_per_phase.at(kSmall) == 2);
    // The autoscaler deleted: its series go.
    std::vector<kube::Store::ObjectPtr> none, pods;
    loop.reconciler->tick(none, pods, loop.now + 15);
    CHECK(gone == std::vector<std::string>{"ml/train"});
}

TEST_CASE("tick: an OOM kill on a pod phasescale resized is counted for its autoscaler",
          "[unit][control]") {
    Loop loop("InPlace");
    std::vector<std::string> ooms;
    loop.hooks.oom_after_resize = [&](const std::string& a) { ooms.push_back(a); };
    loop.restart();
    loop.add_pod("a");
    loop.use("a", 0.3, 0.5 * GiB);
    std::size_t resizes = 0;
    for (int i = 0; i < 8 && resizes == 0; ++i) resizes += loop.tick().resizes;
    REQUIRE(resizes == 1);
    loop.tick();  // the resize's result
    CHECK(ooms.empty());
    loop.pods["a"]["status"]["containerStatuses"][0]["restartCount"] = 1;
    loop.pods["a"]["status"]["containerStatuses"][0]["lastState"] = {
        {"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}};
    loop.tick();
    CHECK(ooms == std::vector<std::string>{"ml/train"});
}

namespace {

json node(const std::string& name, const std::string& cpu, const std::string& memory) {
    return {{"metadata", {{"name", name}}},
            {"status",
             {{"allocatable", {{"cpu", cpu}, {"memory", memory}}},
              {"capacity", {{"cpu", cpu}, {"memory", memory}}}}}};
}

double requested_cpu(const json& pod) {
    return *parse_quantity(
        pod["spec"]["containers"][0]["resources"]["requests"]["cpu"].get<std::string>());
}

}  // namespace

TEST_CASE("tick: a resize never gives a container more than its node's allocatable",
          "[unit][control]") {
    Loop loop("InPlace");
    std::vector<std::string> resizes;
    loop.hooks.resize = [&](const std::string&, const std::string& result,
                            const std::string& reason) {
        resizes.push_back(result + " " + reason);
    };
    loop.restart();
    loop.nodes = {node("small", "1500m", "8Gi")};
    loop.add_pod("a");
    loop.pods["a"]["spec"]["nodeName"] = "small";
    loop.use("a", 1.4, 3 * GiB);  // the large phase wants over 2 cores: the node has 1.5
    std::size_t made = 0;
    for (int i = 0; i < 10 && made == 0; ++i) made += loop.tick().resizes;
    REQUIRE(made == 1);
    CHECK(requested_cpu(loop.pods["a"]) == Approx(1.5));
    const json& resources = loop.pods["a"]["spec"]["containers"][0]["resources"];
    CHECK(resources["limits"]["cpu"] == "1500m");  // a Guaranteed container stays Guaranteed
    loop.tick();                                   // takes in the result
    CHECK(loop.event("Resized"));
    CHECK(std::find(resizes.begin(), resizes.end(), "ok applied") != resizes.end());
    // It still wants more: blocked at the node, said once, never resized beyond it.
    for (int i = 0; i < 6; ++i) {
        CHECK(loop.tick().resizes == 0);
        CHECK(requested_cpu(loop.pods["a"]) <= 1.5);
    }
    CHECK(loop.condition("ResizeBlocked")["reason"] == "NodeCapacity");
    CHECK_THAT(loop.condition("ResizeBlocked")["message"].get<std::string>(),
               Contains("ml/a") && Contains("node small"));
    CHECK(std::count(resizes.begin(), resizes.end(), "blocked node_capacity") == 1);
}

TEST_CASE("tick: usage beyond the node is rejected, a pod whose node is unknown keeps the ceiling",
          "[unit][control]") {
    Loop loop("InPlace");
    std::vector<std::string> rejected;
    loop.hooks.sample_rejected = [&](const std::string& reason) { rejected.push_back(reason); };
    loop.restart();
    loop.nodes = {node("small", "2", "4Gi")};
    loop.add_pod("a");
    loop.pods["a"]["spec"]["nodeName"] = "small";
    loop.add_pod("b");
    loop.pods["b"]["spec"]["nodeName"] = "not-in-cache";
    loop.use("a", 0.3, 6 * GiB);  // more memory than the node has
    loop.use("b", 0.3, 6 * GiB);
    std::size_t made = 0;
    for (int i = 0; i < 8; ++i) made += loop.tick().resizes;
    CHECK(std::count(rejected.begin(), rejected.end(), "above_node") == 8);  // a's, each tick
    CHECK(loop.label("a") == "unknown");
    CHECK(loop.pods["a"]["spec"]["containers"][0]["resources"]["requests"]["memory"] == "2Gi");
    // b's node is unknown: 6 GiB is believed, and b grows past it (only b is resized).
    CHECK(made >= 1);
    CHECK(*parse_quantity(loop.pods["b"]["spec"]["containers"][0]["resources"]["requests"]["memory"]
                              .get<std::string>()) > 6 * GiB);
}
