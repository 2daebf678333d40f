// Custom resources against the real kube-apiserver: a CRD is installed; a custom resource is
// created, watched by an informer, patched (merge, JSON patch, server-side apply), scaled, and
// its status updated through the status subresource.
#include <catch2/catch.hpp>

#include <mutex>

#include "kube_support.hpp"
#include "phasescale/kube/informer.hpp"

namespace kube = phasescale::kube;
using kube_test::TestNamespace;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json widget_crd(const std::string& group) {
    json schema = {{"type", "object"},
                   {"properties",
                    {{"spec",
                      {{"type", "object"},
                       {"properties",
                        {{"replicas", {{"type", "integer"}, {"minimum", 0}}},
                         {"model", {{"type", "string"}}},
                         {"phases", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}},
                     {"status",
                      {{"type", "object"},
                       {"properties",
                        {{"replicas", {{"type", "integer"}}},
                         {"phase", {{"type", "string"}}},
                         {"observedGeneration", {{"type", "integer"}}}}}}}}}};
    return json{
        {"apiVersion", "apiextensions.k8s.io/v1"},
        {"kind", "CustomResourceDefinition"},
        {"metadata", {{"name", "widgets." + group}}},
        {"spec",
         {{"group", group},
          {"scope", "Namespaced"},
          {"names",
           {{"plural", "widgets"},
            {"singular", "widget"},
            {"kind", "Widget"},
            {"listKind", "WidgetList"}}},
          {"versions", json::array({json{{"name", "v1"},
                                         {"served", true},
                                         {"storage", true},
                                         {"schema", {{"openAPIV3Schema", schema}}},
                                         {"subresources",
                                          {{"status", json::object()},
                                           {"scale",
                                            {{"specReplicasPath", ".spec.replicas"},
                                             {"statusReplicasPath", ".status.replicas"}}}}}}})}}}};
}

}  // namespace

TEST_CASE("custom resources: CRD installed, CR created, watched, patched, scaled, status updated",
          "[integration][crd]") {
    auto client = kube_test::admin_client();
    // CRDs are cluster-scoped: a group of its own per run.
    const std::string group = "it-" + kube_test::suffix() + ".phasescale.io";
    const auto& crds = kube::resources::custom_resource_definitions;
    client.create(crds, "", widget_crd(group));
    struct Cleanup {
        kube::Client c;
        std::string name;
        ~Cleanup() {
            try {
                c.remove(kube::resources::custom_resource_definitions, "", name);
            } catch (...) {
            }
        }
    } cleanup{client, "widgets." + group};
    REQUIRE(wait_until(
        [&] {
            json crd = client.get(crds, "", "widgets." + group);
            for (const auto& c : crd["status"].value("conditions", json::array())) {
                if (c["type"] == "Established" && c["status"] == "True") return true;
            }
            return false;
        },
        30s));

    const kube::Resource widgets{group, "v1", "widgets", "Widget", true};
    TestNamespace ns(client, "kube-it-crd");

    std::mutex m;
    std::vector<std::string> seen;  // "ADD name gen", "UPDATE ...", "DELETE ..."
    kube::InformerOptions io;
    io.ns = ns.name();
    kube::Informer informer(client, widgets, io);
    informer.add_handlers({
        [&](const json& o) {
            std::lock_guard l(m);
            seen.push_back("ADD " + o["metadata"]["name"].get<std::string>());
        },
        [&](const json&, const json& o) {
            std::lock_guard l(m);
            seen.push_back("UPDATE " + o["metadata"]["name"].get<std::string>());
        },
        [&](const json& o) {
            std::lock_guard l(m);
            seen.push_back("DELETE " + o["metadata"]["name"].get<std::string>());
        },
    });
    informer.start();
    REQUIRE(informer.wait_for_sync(30s));
    CHECK(informer.store().size() == 0);

    json w = {{"apiVersion", group + "/v1"},
              {"kind", "Widget"},
              {"metadata", {{"name", "resnet"}}},
              {"spec", {{"replicas", 1}, {"model", "default"}}}};
    json created = client.create(widgets, ns.name(), w);
    CHECK(created["metadata"]["generation"] == 1);
    const std::string key = ns.name() + "/resnet";
    REQUIRE(wait_until([&] { return informer.store().contains(key); }, 10s));
    CHECK((*informer.store().get(key))["spec"]["model"] == "default");

    // Patches: JSON merge (strategic merge does not exist for custom resources), JSON patch,
    // server-side apply.
    client.patch(widgets, ns.name(), "resnet", json{{"spec", {{"model", "crbm-v2"}}}},
                 kube::PatchType::Merge);
    CHECK_THROWS_AS(client.patch(widgets, ns.name(), "resnet", json{{"spec", {{"model", "x"}}}},
                                 kube::PatchType::StrategicMerge),
                    kube::ApiError);
    client.patch(
        widgets, ns.name(), "resnet",
        json::array({json{
            {"op", "add"}, {"path", "/spec/phases"}, {"value", json::array({"load", "train"})}}}),
        kube::PatchType::Json);
    json applied =
        client.apply(widgets, ns.name(),
                     json{{"apiVersion", group + "/v1"},
                          {"kind", "Widget"},
                          {"metadata", {{"name", "resnet"}, {"labels", {{"team", "ml"}}}}}},
                     "phasescale-test");
    CHECK(applied["metadata"]["labels"]["team"] == "ml");
    CHECK(applied["spec"]["model"] == "crbm-v2");
    CHECK(applied["spec"]["phases"] == json::array({"load", "train"}));
    // Schema validation: 422.
    CHECK_THROWS_AS(client.patch(widgets, ns.name(), "resnet", json{{"spec", {{"replicas", -1}}}},
                                 kube::PatchType::Merge),
                    kube::Invalid);

    // Status through the status subresource: the main resource ignores status, the status
    // subresource ignores spec, and neither a status change bumps the generation.
    json current = client.get(widgets, ns.name(), "resnet");
    const int generation = current["metadata"]["generation"];
    current["status"] = {
        {"phase", "training"}, {"replicas", 1}, {"observedGeneration", generation}};
    current["spec"]["model"] = "ignored-by-status";
    json with_status = client.update_status(widgets, ns.name(), current);
    CHECK(with_status["status"]["phase"] == "training");
    CHECK(with_status["spec"]["model"] == "crbm-v2");
    CHECK(with_status["metadata"]["generation"] == generation);
    json status_patched =
        client.patch(widgets, ns.name(), "resnet", json{{"status", {{"phase", "checkpointing"}}}},
                     kube::PatchType::Merge, kube_test::on_subresource("status"));
    CHECK(status_patched["status"]["phase"] == "checkpointing");
    client.patch(widgets, ns.name(), "resnet", json{{"status", {{"phase", "ignored"}}}},
                 kube::PatchType::Merge);
    CHECK(client.get(widgets, ns.name(), "resnet")["status"]["phase"] == "checkpointing");
    // Server-side apply of the status.
    json status_applied = client.apply(widgets, ns.name(),
                                       json{{"apiVersion", group + "/v1"},
                                            {"kind", "Widget"},
                                            {"metadata", {{"name", "resnet"}}},
                                            {"status", {{"phase", "evaluating"}}}},
                                       "phasescale-status", true, "status");
    CHECK(status_applied["status"]["phase"] == "evaluating");

    // The scale subresource.
    json scale = client.get_scale(widgets, ns.name(), "resnet");
    CHECK(scale["spec"]["replicas"] == 1);
    client.set_scale(widgets, ns.name(), "resnet", 4);
    CHECK(client.get(widgets, ns.name(), "resnet")["spec"]["replicas"] == 4);

    // The informer followed every step, and ends with the server's object.
    CHECK(wait_until(
        [&] {
            auto obj = informer.store().get(key);
            json server = client.get(widgets, ns.name(), "resnet");
            return obj &&
                   (*obj)["metadata"]["resourceVersion"] == server["metadata"]["resourceVersion"];
        },
        10s));
    auto obj = informer.store().get(key);
    CHECK((*obj)["status"]["phase"] == "evaluating");
    CHECK((*obj)["spec"]["replicas"] == 4);

    client.remove(widgets, ns.name(), "resnet");
    CHECK(wait_until([&] { return !informer.store().contains(key); }, 10s));
    informer.stop();
    std::lock_guard l(m);
    REQUIRE(seen.size() >= 3);
    CHECK(seen.front() == "ADD resnet");
    CHECK(seen.back() == "DELETE resnet");
    CHECK(std::count(seen.begin(), seen.end(), "ADD resnet") == 1);
}
