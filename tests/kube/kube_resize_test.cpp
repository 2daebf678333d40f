// In-place resize through pods/<name>/resize against the real kube-apiserver, with KWOK
// playing the kubelet (tests/testenv/stages/pod.yaml): accepted resizes reach the spec and the
// status, a QoS-class change is rejected, a resize beyond the node is reported Infeasible.
#include <catch2/catch.hpp>

#include "kube_support.hpp"
#include "phasescale/kube/client.hpp"

namespace kube = phasescale::kube;
using kube_test::TestNamespace;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json resources_patch(const std::string& cpu_req, const std::string& cpu_lim,
                     const std::string& mem_req, const std::string& mem_lim) {
    return json{{"spec",
                 {{"containers",
                   json::array({json{{"name", "main"},
                                     {"resources",
                                      {{"requests", {{"cpu", cpu_req}, {"memory", mem_req}}},
                                       {"limits", {{"cpu", cpu_lim}, {"memory", mem_lim}}}}}}})}}}};
}

const json& main_status(const json& pod) {
    return pod["status"]["containerStatuses"][0];
}

std::optional<json> condition(const json& pod, const std::string& type) {
    if (!pod.contains("status") || !pod["status"].contains("conditions")) return std::nullopt;
    for (const auto& c : pod["status"]["conditions"]) {
        if (c.value("type", "") == type) return c;
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE(
    "resize: accepted, shown in spec and status, QoS change rejected, beyond the node Infeasible",
    "[integration][resize]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-resize");
    const auto& pods = kube::resources::pods;
    client.create(
        pods, ns.name(),
        kube_test::make_pod("trainer", "kwok-node-0", {"100m", "200m", "128Mi", "256Mi"}));
    json pod;
    REQUIRE(wait_until(
        [&] {
            pod = client.get(pods, ns.name(), "trainer");
            return pod["status"].value("phase", "") == "Running" &&
                   pod["status"].contains("containerStatuses");
        },
        30s));
    CHECK(pod["status"]["qosClass"] == "Burstable");
    CHECK(main_status(pod)["resources"]["requests"]["cpu"] == "100m");
    const int generation = pod["metadata"]["generation"];

    SECTION("an accepted resize reaches the spec, then the status") {
        json resized =
            client.resize(ns.name(), "trainer", resources_patch("150m", "300m", "192Mi", "384Mi"));
        CHECK(resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "150m");
        CHECK(resized["spec"]["containers"][0]["resources"]["limits"]["memory"] == "384Mi");
        CHECK(resized["metadata"]["generation"] == generation + 1);
        CHECK(wait_until(
            [&] {
                pod = client.get(pods, ns.name(), "trainer");
                const json& st = main_status(pod);
                return st["resources"]["requests"]["cpu"] == "150m" &&
                       st["resources"]["limits"]["cpu"] == "300m" &&
                       st["resources"]["requests"]["memory"] == "192Mi" &&
                       pod["status"].value("observedGeneration", 0) == generation + 1;
            },
            30s));
        CHECK(main_status(pod)["allocatedResources"]["cpu"] == "150m");
        CHECK_FALSE(condition(pod, "PodResizePending"));
        CHECK_FALSE(condition(pod, "PodResizeInProgress"));

        // Only the resize subresource may change a running pod's resources.
        CHECK_THROWS_AS(
            client.patch(pods, ns.name(), "trainer", resources_patch("1", "2", "1Gi", "2Gi"),
                         kube::PatchType::StrategicMerge),
            kube::Invalid);
    }

    SECTION("a resize that would change the QoS class is rejected with a clear error") {
        try {
            client.resize(ns.name(), "trainer", resources_patch("200m", "200m", "256Mi", "256Mi"));
            FAIL("a QoS-changing resize was accepted");
        } catch (const kube::Invalid& e) {
            CHECK(e.status() == 422);
            CHECK_THAT(e.api_message(),
                       Catch::Contains("Pod QOS Class may not change as a result of resizing"));
            CHECK_THAT(e.what(), Catch::Contains("PATCH /api/v1/namespaces/" + ns.name() +
                                                 "/pods/trainer/resize"));
        }
        pod = client.get(pods, ns.name(), "trainer");
        CHECK(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m");
        CHECK(pod["metadata"]["generation"] == generation);
    }

    SECTION("a resize beyond the node's allocatable is reported Infeasible") {
        // Twice the node's allocatable cpu (PHASESCALE_TESTENV_NODE_CPU: "8" or "7500m").
        const char* env_cpu = std::getenv("PHASESCALE_TESTENV_NODE_CPU");
        std::string node_cpu = env_cpu ? env_cpu : "8";
        double cores = node_cpu.back() == 'm'
                           ? std::stod(node_cpu.substr(0, node_cpu.size() - 1)) / 1000
                           : std::stod(node_cpu);
        const std::string too_much = std::to_string(static_cast<int>(cores * 2) + 1);
        const std::string limit = std::to_string(static_cast<int>(cores * 2) + 2);
        json resized =
            client.resize(ns.name(), "trainer", resources_patch(too_much, limit, "128Mi", "256Mi"));
        CHECK(resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] == too_much);
        std::optional<json> pending;
        CHECK(wait_until(
            [&] {
                pod = client.get(pods, ns.name(), "trainer");
                pending = condition(pod, "PodResizePending");
                return pending && (*pending)["reason"] == "Infeasible";
            },
            30s));
        REQUIRE(pending);
        CHECK((*pending)["status"] == "True");
        CHECK_THAT((*pending)["message"].get<std::string>(),
                   Catch::Contains("Node didn't have enough capacity: cpu"));
        // The container keeps what it had.
        CHECK(main_status(pod)["resources"]["requests"]["cpu"] == "100m");

        // Patched back: the condition clears.
        client.resize(ns.name(), "trainer", resources_patch("100m", "200m", "128Mi", "256Mi"));
        CHECK(wait_until(
            [&] { return !condition(client.get(pods, ns.name(), "trainer"), "PodResizePending"); },
            30s));
    }
}
