// The CapacityLoan controller on the real control plane of tests/testenv: KWOK nodes with GPUs in
// an inference and a training pool, pods bound to them, elastic jobs of a small TrainingJob CRD
// with a scale subresource. As inference load drops, idle inference nodes are loaned and the
// elastic jobs grow through /scale; as it rises, the loaned node of least preemption cost is
// returned, only the training pods on it are evicted, the jobs shrink; status and Events say so.
#include <catch2/catch.hpp>

#include <thread>

#include <phasescale/kube/informer.hpp>
#include <phasescale/loan/controller.hpp>

#include "kube_support.hpp"

namespace kube = phasescale::kube;
namespace loan = phasescale::loan;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kPoolKey = "loan-it/pool";

json gpu_node(const std::string& name, const std::string& pool, const std::string& run) {
    const json resources = {
        {"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
    return {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", name},
              {"labels", {{"type", "kwok"}, {"kubernetes.io/hostname", name}, {kPoolKey, pool}}},
              {"annotations",
               {{"kwok.x-k8s.io/node", "fake"}, {"node.alpha.kubernetes.io/ttl", "0"}}}}},
            // Keeps the scheduler's pods of other tests off; our pods are bound by nodeName.
            {"spec",
             {{"taints",
               json::array({{{"key", "loan-it"}, {"value", run}, {"effect", "NoSchedule"}}})}}},
            {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

json gpu_pod(const std::string& name, const std::string& node, int gpus, const json& labels,
             const json& owner = nullptr) {
    kube_test::PodResources r;
    json pod = kube_test::make_pod(name, node, r, labels);
    json& res = pod["spec"]["containers"][0]["resources"];
    if (gpus > 0) {
        res["requests"]["nvidia.com/gpu"] = std::to_string(gpus);
        res["limits"]["nvidia.com/gpu"] = std::to_string(gpus);
    }
    if (!owner.is_null()) pod["metadata"]["ownerReferences"] = json::array({owner});
    return pod;
}

json training_job_crd(const std::string& group) {
    json schema = {
        {"type", "object"},
        {"properties",
         {{"spec",
           {{"type", "object"},
            {"properties", {{"replicas", {{"type", "integer"}, {"minimum", 0}}}}}}},
          {"status",
           {{"type", "object"},
            {"properties",
             {{"replicas", {{"type", "integer"}}}, {"selector", {{"type", "string"}}}}}}}}}};
    return {{"apiVersion", "apiextensions.k8s.io/v1"},
            {"kind", "CustomResourceDefinition"},
            {"metadata", {{"name", "trainingjobs." + group}}},
            {"spec",
             {{"group", group},
              {"scope", "Namespaced"},
              {"names",
               {{"plural", "trainingjobs"},
                {"singular", "trainingjob"},
                {"kind", "TrainingJob"},
                {"listKind", "TrainingJobList"}}},
              {"versions", json::array({{{"name", "v1"},
                                         {"served", true},
                                         {"storage", true},
                                         {"schema", {{"openAPIV3Schema", schema}}},
                                         {"subresources",
                                          {{"status", json::object()},
                                           {"scale",
                                            {{"specReplicasPath", ".spec.replicas"},
                                             {"statusReplicasPath", ".status.replicas"},
                                             {"labelSelectorPath", ".status.selector"}}}}}}})}}}};
}

bool established(const kube::Client& client, const std::string& crd) {
    json c = client.get(kube::resources::custom_resource_definitions, "", crd);
    for (const auto& cond : c["status"].value("conditions", json::array()))
        if (cond["type"] == "Established" && cond["status"] == "True") return true;
    return false;
}

bool has_taint(const json& node, const std::string& key) {
    for (const json& t : node["spec"].value("taints", json::array()))
        if (t.value("key", "") == key && t.value("effect", "") == "NoSchedule") return true;
    return false;
}

std::string loaned_label(const json& node) {
    const json labels = node["metadata"].value("labels", json::object());
    return labels.value(loan::kLoanedLabel, "");
}

// Whether an Event with `reason` about `name` exists in `ns` (its message containing `text`).
bool has_event(const kube::Client& client, const std::string& ns, const std::string& name,
               const std::string& reason, const std::string& text = {}) {
    json events = client.list(kube::resources::events, ns,
                              kube_test::selecting("", "involvedObject.name=" + name));
    for (const json& e : events["items"])
        if (e.value("reason", "") == reason &&
            e.value("message", "").find(text) != std::string::npos)
            return true;
    return false;
}

struct Cleanup {
    kube::Client client;
    std::vector<std::pair<kube::Resource, std::string>> objects;  // cluster-scoped
    ~Cleanup() {
        for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
            try {
                client.remove(it->first, "", it->second);
            } catch (...) {
            }
        }
    }
};

// The CapacityLoan CRD, and a TrainingJob CRD of a group of its own (returned) with /scale; the
// latter removed by `cleanup`.
std::string install_crds(const kube::Client& client, Cleanup& cleanup, const std::string& run) {
    kube_test::run("kubectl apply -f " + std::string(PHASESCALE_SOURCE_DIR) +
                   "/crds/phasescale.io_capacityloans.yaml");
    REQUIRE(wait_until([&] { return established(client, "capacityloans.phasescale.io"); }, 30s));
    const std::string group = "it-" + run + ".phasescale.io";
    client.create(kube::resources::custom_resource_definitions, "", training_job_crd(group));
    cleanup.objects.push_back(
        {kube::resources::custom_resource_definitions, "trainingjobs." + group});
    REQUIRE(wait_until([&] { return established(client, "trainingjobs." + group); }, 30s));
    return group;
}

// A CapacityLoan over the run's inference and training pools (gpu_node's pool labels), whose
// elastic jobs are the TrainingJobs labelled elastic=true of `ns`, at most 6 replicas each.
json capacity_loan(const std::string& name, const std::string& run, int required_servers,
                   const json& training, const std::string& group, const std::string& ns) {
    const json elastic = {{"group", group},
                          {"version", "v1"},
                          {"resource", "trainingjobs"},
                          {"namespace", ns},
                          {"maxReplicas", 6},
                          {"selector", {{"matchLabels", {{"elastic", "true"}}}}}};
    return {
        {"apiVersion", "phasescale.io/v1alpha1"},
        {"kind", "CapacityLoan"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"inferencePool",
           {{"nodeSelector", {{"matchLabels", {{kPoolKey, run + "-inference"}}}}}}},
          {"trainingPool", {{"nodeSelector", {{"matchLabels", {{kPoolKey, run + "-training"}}}}}}},
          {"inference", {{"requiredServers", required_servers}}},
          {"training",
           {{"podSelector", {{"matchLabels", training}}},
            {"elasticJobs", json::array({elastic})}}}}}};
}

}  // namespace

TEST_CASE(
    "capacity loan: loans idle inference nodes, returns the cheapest, evicts only what must go, "
    "scales jobs",
    "[integration][loan]") {
    auto client = kube_test::admin_client();
    const std::string run = kube_test::suffix();
    Cleanup cleanup{client, {}};

    const std::string group = install_crds(client, cleanup, run);
    const kube::Resource jobs{group, "v1", "trainingjobs", "TrainingJob", true};

    // 4 inference and 2 training nodes of 8 GPUs.
    std::vector<std::string> inf, trn;
    for (int i = 0; i < 4; ++i) inf.push_back("loan-" + run + "-inf-" + std::to_string(i));
    for (int i = 0; i < 2; ++i) trn.push_back("loan-" + run + "-trn-" + std::to_string(i));
    for (const auto& n : inf) {
        client.create(kube::resources::nodes, "", gpu_node(n, run + "-inference", run));
        cleanup.objects.push_back({kube::resources::nodes, n});
    }
    for (const auto& n : trn) {
        client.create(kube::resources::nodes, "", gpu_node(n, run + "-training", run));
        cleanup.objects.push_back({kube::resources::nodes, n});
    }

    kube_test::TestNamespace ns(client, "loan-it");
    // Elastic jobs a and b: 4 GPUs per worker, 1..6 workers; a has twice b's remaining time.
    for (const auto& [name, remaining] :
         {std::pair<std::string, std::string>{"a", "7200"}, {"b", "3600"}}) {
        client.create(jobs, ns.name(),
                      {{"apiVersion", group + "/v1"},
                       {"kind", "TrainingJob"},
                       {"metadata",
                        {{"name", name},
                         {"labels", {{"elastic", "true"}}},
                         {"annotations",
                          {{loan::kMinReplicasAnnotation, "1"},
                           {loan::kMaxReplicasAnnotation, "6"},
                           {loan::kGpusPerWorkerAnnotation, "4"},
                           {loan::kRemainingSecondsAnnotation, remaining}}}}},
                       {"spec", {{"replicas", 1}}}});
        kube::PatchOptions po;
        po.subresource = "status";
        client.patch(jobs, ns.name(), name,
                     json{{"status", {{"replicas", 1}, {"selector", "job=" + name}}}},
                     kube::PatchType::Merge, po);
    }
    auto replicas = [&](const std::string& name) {
        return client.get_scale(jobs, ns.name(), name)["spec"].value("replicas", -1);
    };

    // Inelastic job Y (2 workers of 4 GPUs) is owned by a ConfigMap; X is a lone pod.
    json y =
        client.create(kube::resources::config_maps, ns.name(),
                      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "y"}}}});
    const json y_owner = {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"name", "y"},
                          {"uid", y["metadata"]["uid"]},
                          {"controller", true}};
    const json training = {{"role", "training"}};
    auto create_pod = [&](const json& pod) {
        client.create(kube::resources::pods, ns.name(), pod);
    };
    // Inference on every inference node; a-0, b-0 and y-0 on the training nodes.
    for (int i = 0; i < 4; ++i)
        create_pod(gpu_pod("server-" + std::to_string(i), inf[i], 8, {{"app", "inference"}}));
    create_pod(gpu_pod("a-0", trn[0], 4, {{"job", "a"}}));
    create_pod(gpu_pod("b-0", trn[1], 4, {{"job", "b"}}));
    create_pod(gpu_pod("y-0", trn[0], 4, training, y_owner));

    const std::string cl = "loan-it-" + run;
    client.create(loan::resources::capacity_loans, "",
                  capacity_loan(cl, run, 4, training, group, ns.name()));
    cleanup.objects.push_back({loan::resources::capacity_loans, cl});
    auto status = [&] {
        return client.get(loan::resources::capacity_loans, "", cl).value("status", json::object());
    };
    auto node = [&](const std::string& name) {
        return client.get(kube::resources::nodes, "", name);
    };

    loan::ControllerOptions options;
    options.interval = 200ms;
    loan::Controller controller(client, options);
    std::jthread loop([&](std::stop_token stop) { controller.run(stop); });

    {
        // Inference needs all 4 servers: nothing is loaned; every inference node is tainted
        // inference-only. The training pool has 16 GPUs, y-0 holds 4, the minimums 8: one more
        // worker fits, and a (more remaining time) gets it.
        INFO("phase 1: no loan");
        REQUIRE(wait_until(
            [&] {
                for (const auto& n : inf) {
                    json o = node(n);
                    if (!has_taint(o, loan::kInferenceOnlyTaint) || !loaned_label(o).empty())
                        return false;
                }
                return replicas("a") == 2 && replicas("b") == 1 &&
                       status().value("loanedCount", -1) == 0;
            },
            30s));
        for (const auto& n : trn) CHECK_FALSE(has_taint(node(n), loan::kInferenceOnlyTaint));
        CHECK(status()["conditions"][0]["status"] == "True");
        CHECK(has_event(client, ns.name(), "a", "Scaled", "1 -> 2"));

        // The inference load drops: two servers are enough, inf-2 and inf-3 go idle and are
        // loaned; 16 more GPUs: a gets 3 extra workers and b 2 (the knapsack's optimum).
        INFO("phase 2: load drops");
        client.remove(kube::resources::pods, ns.name(), "server-2", kube_test::immediately());
        client.remove(kube::resources::pods, ns.name(), "server-3", kube_test::immediately());
        client.patch(loan::resources::capacity_loans, "", cl,
                     json{{"spec", {{"inference", {{"requiredServers", 2}}}}}},
                     kube::PatchType::Merge);
        REQUIRE(wait_until(
            [&] {
                const json s = status();
                return s.value("loanedNodes", json::array()) == json::array({inf[2], inf[3]}) &&
                       replicas("a") == 4 && replicas("b") == 3;
            },
            30s));
        for (int i : {2, 3}) {
            json o = node(inf[i]);
            CHECK(loaned_label(o) == "true");
            CHECK_FALSE(has_taint(o, loan::kInferenceOnlyTaint));
            CHECK(has_taint(o, "loan-it"));  // taints of others are kept
            CHECK(wait_until([&] { return has_event(client, "default", inf[i], "Loaned", cl); },
                             10s));
        }
        for (int i : {0, 1}) {
            CHECK(loaned_label(node(inf[i])).empty());
            CHECK(has_taint(node(inf[i]), loan::kInferenceOnlyTaint));
        }
        CHECK(status().value("loanedGPUs", 0) == 16);
        CHECK(
            wait_until([&] { return has_event(client, ns.name(), "b", "Scaled", "1 -> 3"); }, 10s));

        // Training moves onto the loaned nodes: X (alone) on inf-2, Y's second worker and one
        // of a's on inf-3.
        INFO("phase 3: training on loaned nodes");
        create_pod(gpu_pod("x-0", inf[2], 4, training));
        create_pod(gpu_pod("y-1", inf[3], 4, training, y_owner));
        create_pod(gpu_pod("a-1", inf[3], 4, {{"job", "a"}}));
        // 32 GPUs - X, Y (12) - minimums (8) = 12: a 3, b 2.
        REQUIRE(wait_until([&] { return replicas("a") == 3 && replicas("b") == 2; }, 30s));

        // The load rises: 3 servers needed, one loaned node comes back. inf-2 would preempt X
        // (cost 4/4 = 1); inf-3 preempts Y (4/8 = 0.5) and shrinks a: inf-3 is returned, and
        // only y-1 and a-1 are evicted.
        INFO("phase 4: load rises");
        client.patch(loan::resources::capacity_loans, "", cl,
                     json{{"spec", {{"inference", {{"requiredServers", 3}}}}}},
                     kube::PatchType::Merge);
        REQUIRE(wait_until(
            [&] {
                const json s = status();
                return s.value("loanedNodes", json::array()) == json::array({inf[2]}) &&
                       s.value("returnedNodes", json::array()) == json::array({inf[3]});
            },
            30s));
        json returned = node(inf[3]);
        CHECK(loaned_label(returned).empty());
        CHECK(has_taint(returned, loan::kInferenceOnlyTaint));
        CHECK(has_taint(returned, loan::kReturnedTaint));
        CHECK(loaned_label(node(inf[2])) == "true");
        auto gone = [&](const std::string& pod) {
            auto p = client.try_get(kube::resources::pods, ns.name(), pod);
            return !p || (*p)["metadata"].contains("deletionTimestamp");
        };
        REQUIRE(wait_until([&] { return gone("y-1") && gone("a-1"); }, 30s));
        for (const char* kept : {"x-0", "y-0", "a-0", "b-0", "server-0", "server-1"}) {
            INFO(kept);
            CHECK_FALSE(gone(kept));
        }
        // 24 GPUs - X, y-0 (8) - minimums (8) = 8: a 2, b 2.
        REQUIRE(wait_until([&] { return replicas("a") == 2 && replicas("b") == 2; }, 30s));
        CHECK(wait_until(
            [&] {
                return has_event(client, "default", inf[3], "Returned",
                                 "least preemption cost 0.5");
            },
            10s));
        CHECK(wait_until([&] { return has_event(client, ns.name(), "y-1", "Evicted", inf[3]); },
                         10s));
        CHECK(wait_until([&] { return has_event(client, "default", inf[3], "Evicted", "a-1"); },
                         10s));
        CHECK_FALSE(has_event(client, ns.name(), "x-0", "Evicted"));

        const json s = status();
        CHECK(s["conditions"][0]["type"] == "Ready");
        CHECK(s["requiredServers"] == 3);
        CHECK(s["inferenceNodes"] == 4);
        CHECK(s["trainingNodes"] == 2);
        std::set<std::string> actions;
        for (const json& d : s["lastDecisions"]) actions.insert(d.value("action", ""));
        CHECK(actions == std::set<std::string>{"Loan", "Return", "Evict", "Scale"});
        bool return_recorded = false;
        for (const json& d : s["lastDecisions"])
            if (d["action"] == "Return" && d["object"] == "node/" + inf[3]) return_recorded = true;
        CHECK(return_recorded);
        json elastic = s["elasticJobs"];
        REQUIRE(elastic.size() == 2);
        CHECK(elastic[0]["replicas"] == 2);
        CHECK(elastic[0]["maxReplicas"] == 6);
    }
    loop.request_stop();
}

TEST_CASE("capacity loan: a problem becomes the Ready condition, the rest is still done",
          "[integration][loan]") {
    auto client = kube_test::admin_client();
    const std::string run = kube_test::suffix();
    kube_test::run("kubectl apply -f " + std::string(PHASESCALE_SOURCE_DIR) +
                   "/crds/phasescale.io_capacityloans.yaml");
    REQUIRE(wait_until([&] { return established(client, "capacityloans.phasescale.io"); }, 30s));
    Cleanup cleanup{client, {}};
    const std::string n = "loan-" + run + "-bad-0";
    client.create(kube::resources::nodes, "", gpu_node(n, run + "-inference", run));
    cleanup.objects.push_back({kube::resources::nodes, n});
    // Valid for the CRD, but the elastic jobs' resource does not exist: that is reported, and
    // the node is still handled.
    const std::string cl = "loan-it-bad-" + run;
    client.create(
        loan::resources::capacity_loans, "",
        {{"apiVersion", "phasescale.io/v1alpha1"},
         {"kind", "CapacityLoan"},
         {"metadata", {{"name", cl}}},
         {"spec",
          {{"inferencePool",
            {{"nodeSelector", {{"matchLabels", {{kPoolKey, run + "-inference"}}}}}}},
           {"trainingPool", {{"nodeSelector", {{"matchLabels", {{kPoolKey, run + "-training"}}}}}}},
           {"inference", {{"requiredServers", 1}}},
           {"training",
            {{"elasticJobs", json::array({{{"group", "nowhere.example.com"},
                                           {"version", "v1"},
                                           {"resource", "jobs"}}})}}}}}});
    cleanup.objects.push_back({loan::resources::capacity_loans, cl});

    loan::ControllerOptions options;
    options.interval = 200ms;
    loan::Controller controller(client, options);
    controller.start();
    REQUIRE(controller.wait_for_sync(30s));
    json s;
    REQUIRE(wait_until(
        [&] {
            controller.reconcile(0);
            s = client.get(loan::resources::capacity_loans, "", cl).value("status", json::object());
            return s.contains("conditions");
        },
        30s));
    CHECK(s["conditions"][0]["status"] == "False");
    CHECK(s["conditions"][0]["reason"] == "Problems");
    CHECK_THAT(s["conditions"][0]["message"].get<std::string>(),
               Catch::Contains("cannot list jobs"));
    // requiredServers 1 of 1 node: nothing loaned, the node is marked inference-only.
    CHECK(s["loanedCount"] == 0);
    CHECK(wait_until(
        [&] {
            controller.reconcile(0);
            return has_taint(client.get(kube::resources::nodes, "", n), loan::kInferenceOnlyTaint);
        },
        30s));
    controller.stop();
}

// A reclaim in the middle of an elastic scale-up (issue 12's faults while it runs). Job e grew
// 1 -> 5 through /scale onto two loaned nodes, and its own controller has started only two of the
// four new workers (e-1 on inf-1, e-2 on inf-2) when the inference load rises and one loaned node
// must come back; a fifth worker, e-3, lands on the returned node just after (its controller was
// still placing workers). The controller's passes are driven one at a time, so the reclaim is
// the very next pass after the scale-up. Only training pods on the returned node go (e-1, e-3),
// e shrinks to the knapsack's answer, and /scale is written exactly once per change (two Scaled
// Events, the job's generation bumped twice).
TEST_CASE(
    "capacity loan: a reclaim during an elastic scale-up evicts only what is on the returned "
    "node, replicas converge, one /scale write per change",
    "[integration][loan]") {
    auto client = kube_test::admin_client();
    const std::string run = kube_test::suffix();
    Cleanup cleanup{client, {}};
    const std::string group = install_crds(client, cleanup, run);
    const kube::Resource jobs{group, "v1", "trainingjobs", "TrainingJob", true};

    // 3 inference nodes and 1 training node of 8 GPUs.
    std::vector<std::string> inf;
    for (int i = 0; i < 3; ++i) inf.push_back("loan-" + run + "-scale-inf-" + std::to_string(i));
    const std::string trn = "loan-" + run + "-scale-trn-0";
    for (const auto& n : inf) {
        client.create(kube::resources::nodes, "", gpu_node(n, run + "-inference", run));
        cleanup.objects.push_back({kube::resources::nodes, n});
    }
    client.create(kube::resources::nodes, "", gpu_node(trn, run + "-training", run));
    cleanup.objects.push_back({kube::resources::nodes, trn});

    kube_test::TestNamespace ns(client, "loan-scale");
    client.create(jobs, ns.name(),
                  {{"apiVersion", group + "/v1"},
                   {"kind", "TrainingJob"},
                   {"metadata",
                    {{"name", "e"},
                     {"labels", {{"elastic", "true"}}},
                     {"annotations",
                      {{loan::kMinReplicasAnnotation, "1"},
                       {loan::kMaxReplicasAnnotation, "6"},
                       {loan::kGpusPerWorkerAnnotation, "4"},
                       {loan::kRemainingSecondsAnnotation, "3600"}}}}},
                   {"spec", {{"replicas", 1}}}});
    client.patch(jobs, ns.name(), "e", json{{"status", {{"replicas", 1}, {"selector", "job=e"}}}},
                 kube::PatchType::Merge, kube_test::on_subresource("status"));
    auto replicas = [&] {
        return client.get_scale(jobs, ns.name(), "e")["spec"].value("replicas", -1);
    };
    auto generation = [&] {
        return client.get(jobs, ns.name(), "e")["metadata"].value("generation", -1);
    };
    const long long generation_at_start = generation();

    const json training = {{"role", "training"}};
    const json worker = {{"job", "e"}};
    auto create_pod = [&](const json& pod) {
        client.create(kube::resources::pods, ns.name(), pod);
    };
    for (int i = 0; i < 3; ++i)
        create_pod(gpu_pod("server-" + std::to_string(i), inf[i], 8, {{"app", "inference"}}));
    create_pod(gpu_pod("e-0", trn, 4, worker));
    create_pod(gpu_pod("y-0", trn, 4, training));  // inelastic: the training node is full

    const std::string cl = "loan-it-scale-" + run;
    client.create(loan::resources::capacity_loans, "",
                  capacity_loan(cl, run, 3, training, group, ns.name()));
    cleanup.objects.push_back({loan::resources::capacity_loans, cl});
    auto status = [&] {
        return client.get(loan::resources::capacity_loans, "", cl).value("status", json::object());
    };
    auto events = [&](const std::string& name, const std::string& reason) {
        std::vector<std::string> messages;
        json list = client.list(kube::resources::events, ns.name(),
                                kube_test::selecting("", "involvedObject.name=" + name));
        for (const json& e : list["items"])
            if (e.value("reason", "") == reason) messages.push_back(e.value("message", ""));
        return messages;
    };
    auto gone = [&](const std::string& pod) {
        auto p = client.try_get(kube::resources::pods, ns.name(), pod);
        return !p || (*p)["metadata"].contains("deletionTimestamp");
    };

    // The controller reads this pod informer (as the operator shares its own), so that the test
    // can wait until the controller sees a pod instead of sleeping a guess.
    kube::InformerOptions pod_options;
    pod_options.field_selector = loan::kPodFieldSelector;
    pod_options.transform = loan::trim_pod;
    auto pods = std::make_shared<kube::Informer>(client, kube::resources::pods, pod_options);
    pods->start();
    REQUIRE(pods->wait_for_sync(30s));
    loan::ControllerOptions options;
    options.pods = pods;
    loan::Controller controller(client, options);
    controller.start();
    REQUIRE(controller.wait_for_sync(30s));
    // Passes until `done` holds, one at a time (as the operator's loop runs them).
    auto passes_until = [&](const std::function<bool()>& done) {
        return wait_until(
            [&] {
                controller.reconcile(0);
                return done();
            },
            30s, 200ms);
    };
    // Until the controller's pod cache holds these pods (or, with present false, no longer does).
    auto cached = [&](const std::vector<std::string>& names, bool present = true) {
        return wait_until(
            [&] {
                for (const std::string& n : names)
                    if (pods->store().contains(ns.name() + "/" + n) != present) return false;
                return true;
            },
            30s);
    };

    // Every server needed: nothing loaned, no spare GPU (8 - y-0 4 - e's minimum 4): e stays 1.
    REQUIRE(passes_until([&] { return status().value("loanedCount", -1) == 0; }));
    CHECK(replicas() == 1);

    // The load drops to one server: inf-1 and inf-2 are loaned, 16 GPUs more, e grows 1 -> 5.
    client.remove(kube::resources::pods, ns.name(), "server-1", kube_test::immediately());
    client.remove(kube::resources::pods, ns.name(), "server-2", kube_test::immediately());
    // A pass that saw one server gone but not the other would loan one node, then the other: two
    // /scale writes (1 -> 3 -> 5) where the test counts one.
    REQUIRE(cached({"server-1", "server-2"}, false));
    client.patch(loan::resources::capacity_loans, "", cl,
                 json{{"spec", {{"inference", {{"requiredServers", 1}}}}}}, kube::PatchType::Merge);
    REQUIRE(passes_until([&] {
        return status().value("loanedNodes", json::array()) == json::array({inf[1], inf[2]});
    }));
    CHECK(replicas() == 5);

    // Mid scale-up: e's controller has placed e-1 and e-2; an inelastic pod x-0 shares inf-2.
    create_pod(gpu_pod("e-1", inf[1], 4, worker));
    create_pod(gpu_pod("e-2", inf[2], 4, worker));
    create_pod(gpu_pod("x-0", inf[2], 4, training));
    REQUIRE(cached({"e-1", "e-2", "x-0"}));  // the controller's first pass must see them

    // The load rises: 2 servers, one loaned node comes back. inf-1 costs one elastic worker,
    // inf-2 the inelastic x-0: inf-1 is returned, e-1 evicted. 16 GPUs left - y-0, x-0 (8) -
    // e's minimum (4) = 4: e shrinks 5 -> 2.
    client.patch(loan::resources::capacity_loans, "", cl,
                 json{{"spec", {{"inference", {{"requiredServers", 2}}}}}}, kube::PatchType::Merge);
    controller.reconcile(0);  // the first pass after the scale-up
    CHECK(status().value("returnedNodes", json::array()) == json::array({inf[1]}));
    CHECK(replicas() == 2);
    // A worker e's controller was still placing lands on the returned node: it goes too.
    create_pod(gpu_pod("e-3", inf[1], 4, worker));
    REQUIRE(cached({"e-3"}));
    REQUIRE(passes_until([&] { return gone("e-1") && gone("e-3"); }));
    // A few more passes: nothing else moves.
    for (int i = 0; i < 5; ++i) {
        controller.reconcile(0);
        std::this_thread::sleep_for(100ms);
    }

    const json s = status();
    CHECK(s.value("loanedNodes", json::array()) == json::array({inf[2]}));
    CHECK(s.value("returnedNodes", json::array()) == json::array({inf[1]}));
    for (const char* kept : {"e-0", "e-2", "x-0", "y-0", "server-0"}) {
        INFO(kept);
        CHECK_FALSE(gone(kept));
    }
    CHECK(replicas() == 2);
    // One /scale write per change, none lost, none repeated.
    CHECK(generation() == generation_at_start + 2);
    const auto scaled = events("e", "Scaled");
    REQUIRE(scaled.size() == 2);
    std::set<std::string> moves;
    for (const std::string& m : scaled) moves.insert(m.substr(0, m.find(" by ")));
    CHECK(moves == std::set<std::string>{"replicas 1 -> 5", "replicas 5 -> 2"});
    CHECK(events("e-1", "Evicted").size() == 1);
    CHECK(events("e-3", "Evicted").size() == 1);
    for (const char* kept : {"e-0", "e-2", "x-0", "y-0"}) {
        INFO(kept);
        CHECK(events(kept, "Evicted").empty());
    }
    controller.stop();
}
