// Controller::reconcile over an in-memory cluster: the cases the integration test covers on a
// real control plane (no loan while inference needs every server, idle nodes loaned as the load
// drops, the cheapest loaned node returned as it rises with only the training pods there
// evicted, elastic jobs scaled within their bounds, a problem in the Ready condition), and what
// a real server makes hard to arrange (a disruption budget, a failed node patch, a restart).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <phasescale/kube/error.hpp>
#include <phasescale/loan/controller.hpp>

using namespace phasescale;
using namespace phasescale::loan;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

const kube::Resource kJobs{"example.com", "v1", "trainingjobs", "TrainingJob", true};

// The API server as the loan controller sees it: CapacityLoans, nodes, pods, TrainingJobs with a
// scale subresource; writes apply as a merge patch would, and are remembered.
class FakeCluster final : public ClusterApi {
public:
    struct Event {
        std::string ns, name, reason, message;
        kube::EventType type;
    };

    std::map<std::string, json> loans, nodes;         // by name
    std::map<std::string, json> trainingjobs;         // ns/name
    std::map<std::string, json> pods;                 // ns/name
    std::set<std::string> blocked_evictions;          // ns/name: a disruption budget says no
    std::set<std::string> failing_nodes;              // node patches fail
    std::vector<std::string> evicted;                 // ns/name
    std::vector<std::pair<std::string, int>> scaled;  // ns/name, replicas
    std::vector<Event> events;
    int node_patches = 0, status_patches = 0;

    json capacity_loans() override {
        json list = {{"kind", "CapacityLoanList"}, {"items", json::array()}};
        for (const auto& [name, l] : loans) list["items"].push_back(l);
        return list;
    }
    json jobs(const kube::Resource& resource, const std::string& ns,
              const std::string& label_selector) override {
        if (resource.plural != kJobs.plural || resource.group != kJobs.group)
            throw kube::NotFound(404, "NotFound",
                                 "the server could not find the requested resource", "GET",
                                 "/apis/" + resource.group);
        const kube::LabelSelector selector = kube::parse_label_selector(label_selector);
        json list = {{"kind", "TrainingJobList"}, {"items", json::array()}};
        for (const auto& [key, job] : trainingjobs)
            if ((ns.empty() || job["metadata"]["namespace"] == ns) && selector.matches(job))
                list["items"].push_back(job);
        return list;
    }
    json scale(const kube::Resource&, const std::string& ns, const std::string& name) override {
        const json& job = trainingjobs.at(ns + "/" + name);
        return {{"spec", {{"replicas", job["spec"]["replicas"]}}},
                {"status", {{"selector", "job=" + name}}}};
    }
    json patch_node(const std::string& node, const json& patch) override {
        if (failing_nodes.count(node) != 0)
            throw kube::ServerError(500, "InternalError", "etcd is down", "PATCH", "/api/v1/nodes");
        json& n = nodes.at(node);
        if (patch["metadata"].contains("resourceVersion") &&
            patch["metadata"]["resourceVersion"] != n["metadata"]["resourceVersion"])
            throw kube::Conflict(409, "Conflict", "the object has been modified", "PATCH", node);
        n.merge_patch(patch);
        n["metadata"]["resourceVersion"] = std::to_string(++version_);
        ++node_patches;
        return n;
    }
    void evict(const std::string& ns, const std::string& pod) override {
        const std::string key = ns + "/" + pod;
        if (blocked_evictions.count(key) != 0)
            throw kube::TooManyRequests(
                429, "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.", "POST", key);
        if (pods.erase(key) == 0)
            throw kube::NotFound(404, "NotFound", "pod not found", "POST", key);
        evicted.push_back(key);
    }
    void set_scale(const kube::Resource&, const std::string& ns, const std::string& name,
                   int replicas) override {
        trainingjobs.at(ns + "/" + name)["spec"]["replicas"] = replicas;
        scaled.push_back({ns + "/" + name, replicas});
    }
    void patch_status(const std::string& loan, const json& status) override {
        json& l = loans.at(loan);
        if (!l.contains("status")) l["status"] = json::object();
        l["status"].merge_patch(status);
        ++status_patches;
    }
    void record_event(const kube::ObjectReference& object, kube::EventType type,
                      const std::string& reason, const std::string& message) override {
        events.push_back({object.ns, object.name, reason, message, type});
    }

    // What the informers would hold now.
    std::vector<kube::Store::ObjectPtr> node_objects() const { return objects(nodes); }
    std::vector<kube::Store::ObjectPtr> pod_objects() const { return objects(pods); }

    bool has_event(const std::string& name, const std::string& reason,
                   const std::string& text = {}) const {
        return std::any_of(events.begin(), events.end(), [&](const Event& e) {
            return e.name == name && e.reason == reason &&
                   e.message.find(text) != std::string::npos;
        });
    }
    int replicas(const std::string& job) const {
        return trainingjobs.at("ml/" + job)["spec"]["replicas"].get<int>();
    }
    json status(const std::string& loan = "gpus") const {
        return loans.at(loan).value("status", json::object());
    }

private:
    static std::vector<kube::Store::ObjectPtr> objects(const std::map<std::string, json>& m) {
        std::vector<kube::Store::ObjectPtr> out;
        for (const auto& [k, o] : m) out.push_back(std::make_shared<const json>(o));
        return out;
    }
    int version_ = 100;
};

bool has_taint(const json& node, const std::string& key) {
    for (const json& t : node["spec"].value("taints", json::array()))
        if (t.value("key", "") == key && t.value("effect", "") == "NoSchedule") return true;
    return false;
}

std::string loaned_label(const json& node) {
    return node["metadata"].value("labels", json::object()).value(kLoanedLabel, "");
}

json gpu_node(const std::string& name, const std::string& pool) {
    return {{"metadata",
             {{"name", name},
              {"uid", "uid-" + name},
              {"resourceVersion", "1"},
              {"labels", {{"pool", pool}}}}},
            {"spec", {{"taints", json::array({{{"key", "other"}, {"effect", "NoSchedule"}}})}}},
            {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "32"}}}}}};
}

json gpu_pod(const std::string& name, const std::string& node, int gpus, const json& labels,
             const json& owner = nullptr) {
    const json requests = {{"nvidia.com/gpu", std::to_string(gpus)}};
    json pod = {{"metadata",
                 {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"labels", labels}}},
                {"spec",
                 {{"nodeName", node},
                  {"containers", json::array({{{"resources", {{"requests", requests}}}}})}}}};
    if (!owner.is_null()) pod["metadata"]["ownerReferences"] = json::array({owner});
    return pod;
}

json training_job(const std::string& name, const std::string& remaining) {
    return {{"apiVersion", "example.com/v1"},
            {"kind", "TrainingJob"},
            {"metadata",
             {{"name", name},
              {"namespace", "ml"},
              {"uid", "uid-" + name},
              {"labels", {{"elastic", "true"}}},
              {"annotations",
               {{kMinReplicasAnnotation, "1"},
                {kMaxReplicasAnnotation, "6"},
                {kGpusPerWorkerAnnotation, "4"},
                {kRemainingSecondsAnnotation, remaining}}}}},
            {"spec", {{"replicas", 1}}}};
}

json capacity_loan(const std::string& name, int required,
                   const std::string& inference = "inference",
                   const std::string& training = "training") {
    return {{"apiVersion", "phasescale.io/v1alpha1"},
            {"kind", "CapacityLoan"},
            {"metadata", {{"name", name}, {"generation", 1}}},
            {"spec",
             {{"inferencePool", {{"nodeSelector", {{"matchLabels", {{"pool", inference}}}}}}},
              {"trainingPool", {{"nodeSelector", {{"matchLabels", {{"pool", training}}}}}}},
              {"inference", {{"requiredServers", required}}},
              {"training",
               {{"podSelector", {{"matchLabels", {{"role", "training"}}}}},
                {"elasticJobs",
                 json::array({{{"group", kJobs.group},
                               {"version", kJobs.version},
                               {"resource", kJobs.plural},
                               {"namespace", "ml"},
                               {"maxReplicas", 6},
                               {"selector", {{"matchLabels", {{"elastic", "true"}}}}}}})}}}}}};
}

// The integration test's cluster: 4 inference and 2 training nodes of 8 GPUs, a server on every
// inference node; elastic jobs a and b (4 GPUs per worker, 1..6 workers, a with twice b's
// remaining time) with a worker each on the training nodes; inelastic job y (owned by a
// ConfigMap) with a worker there too.
struct World {
    FakeCluster* cluster;  // owned by controller
    Controller controller;
    const json y_owner = {
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "y"}, {"controller", true}};

    explicit World(std::unique_ptr<FakeCluster> c = std::make_unique<FakeCluster>(),
                   ControllerHooks hooks = {})
        : cluster(c.get()), controller(std::move(c), {}, std::move(hooks)) {
        for (int i = 0; i < 4; ++i) cluster->nodes[inf(i)] = gpu_node(inf(i), "inference");
        for (int i = 0; i < 2; ++i) cluster->nodes[trn(i)] = gpu_node(trn(i), "training");
        cluster->trainingjobs["ml/a"] = training_job("a", "7200");
        cluster->trainingjobs["ml/b"] = training_job("b", "3600");
        for (int i = 0; i < 4; ++i)
            add(gpu_pod("server-" + std::to_string(i), inf(i), 8, {{"app", "inference"}}));
        add(gpu_pod("a-0", trn(0), 4, {{"job", "a"}}));
        add(gpu_pod("b-0", trn(1), 4, {{"job", "b"}}));
        add(gpu_pod("y-0", trn(0), 4, {{"role", "training"}}, y_owner));
        cluster->loans["gpus"] = capacity_loan("gpus", 4);
    }
    static std::string inf(int i) { return "inf-" + std::to_string(i); }
    static std::string trn(int i) { return "trn-" + std::to_string(i); }
    void add(const json& pod) {
        cluster->pods["ml/" + pod["metadata"]["name"].get<std::string>()] = pod;
    }
    void remove(const std::string& pod) { cluster->pods.erase("ml/" + pod); }
    void require(int servers) {
        cluster->loans["gpus"]["spec"]["inference"]["requiredServers"] = servers;
    }
    ReconcileSummary reconcile(double now = 1000) {
        return controller.reconcile(cluster->node_objects(), cluster->pod_objects(), now);
    }
    json node(const std::string& name) const { return cluster->nodes.at(name); }
};

// The load drops to 2 servers: inf-2 and inf-3 go idle and are loaned.
void load_drops(World& w) {
    w.remove("server-2");
    w.remove("server-3");
    w.require(2);
    w.reconcile();
}

}  // namespace

TEST_CASE("loan controller: no loan while inference needs every server, and spare GPUs grow a job",
          "[unit][loan]") {
    World w;
    const ReconcileSummary sum = w.reconcile();
    CHECK(sum.loans == 1);
    CHECK(sum.errors == 0);
    CHECK(sum.loaned == 0);
    for (int i = 0; i < 4; ++i) {
        const json n = w.node(World::inf(i));
        CHECK(has_taint(n, kInferenceOnlyTaint));
        CHECK(has_taint(n, "other"));  // taints of others are kept
        CHECK(loaned_label(n).empty());
    }
    for (int i = 0; i < 2; ++i) CHECK_FALSE(has_taint(w.node(World::trn(i)), kInferenceOnlyTaint));
    // 16 training GPUs - y-0 (4) - the minimums (8) = 4: one worker, to a (more time left).
    CHECK(w.cluster->replicas("a") == 2);
    CHECK(w.cluster->replicas("b") == 1);
    CHECK(w.cluster->has_event("a", "Scaled", "1 -> 2"));
    const json s = w.cluster->status();
    CHECK(s["loanedCount"] == 0);
    CHECK(s["inferenceNodes"] == 4);
    CHECK(s["trainingNodes"] == 2);
    CHECK(s["conditions"][0]["type"] == "Ready");
    CHECK(s["conditions"][0]["status"] == "True");
    CHECK(s["conditions"][0]["message"] == "0 of 4 inference nodes loaned");
    CHECK(s["observedGeneration"] == 1);
}

TEST_CASE("loan controller: idle inference nodes are loaned as the load drops, never a busy one",
          "[unit][loan]") {
    World w;
    w.reconcile();
    w.remove("server-3");
    w.require(1);  // 3 may be loaned, but inf-0 .. inf-2 still run a server
    w.reconcile();
    CHECK(w.cluster->status()["loanedNodes"] == json::array({World::inf(3)}));
    CHECK(loaned_label(w.node(World::inf(2))).empty());

    World v;
    v.reconcile();
    load_drops(v);
    const json s = v.cluster->status();
    CHECK(s["loanedNodes"] == json::array({World::inf(2), World::inf(3)}));
    CHECK(s["loanedGPUs"] == 16);
    for (int i : {2, 3}) {
        const json n = v.node(World::inf(i));
        CHECK(loaned_label(n) == "true");
        CHECK_FALSE(has_taint(n, kInferenceOnlyTaint));
        CHECK(has_taint(n, "other"));
        CHECK(v.cluster->has_event(World::inf(i), "Loaned", "CapacityLoan gpus"));
    }
    for (int i : {0, 1}) {
        CHECK(loaned_label(v.node(World::inf(i))).empty());
        CHECK(has_taint(v.node(World::inf(i)), kInferenceOnlyTaint));
    }
    // 16 more GPUs: a gets 3 extra workers and b 2 (the knapsack's optimum).
    CHECK(v.cluster->replicas("a") == 4);
    CHECK(v.cluster->replicas("b") == 3);
    CHECK(v.cluster->has_event("b", "Scaled", "1 -> 3"));
}

// A watch can lag a write: the pass after a loan may still find the nodes' old marks in the cache.
// It plans from the marks it wrote, so it loans nothing again and writes nothing stale.
TEST_CASE("loan controller: a pass plans from its own node writes while the cache lags them",
          "[unit][loan]") {
    World w;
    w.reconcile();
    const auto before_loan = w.cluster->node_objects();  // what a lagging cache still holds
    load_drops(w);
    const int patches = w.cluster->node_patches;
    const std::size_t events = w.cluster->events.size();
    const ReconcileSummary sum =
        w.controller.reconcile(before_loan, w.cluster->pod_objects(), 1015);
    CHECK(sum.errors == 0);
    CHECK(sum.loaned == 0);
    CHECK(w.cluster->node_patches == patches);
    CHECK(w.cluster->events.size() == events);
    CHECK(w.cluster->status()["loanedNodes"] == json::array({World::inf(2), World::inf(3)}));
    CHECK(w.cluster->replicas("a") == 4);
}

TEST_CASE("loan controller: the cheapest loaned node is returned, only training pods on it evicted",
          "[unit][loan]") {
    World w;
    w.reconcile();
    load_drops(w);
    // Training moves onto the loaned nodes: x (alone) on inf-2, y's second worker and one of a's
    // on inf-3. 32 GPUs - x, y (12) - minimums (8) = 12: a 3, b 2.
    w.add(gpu_pod("x-0", World::inf(2), 4, {{"role", "training"}}));
    w.add(gpu_pod("y-1", World::inf(3), 4, {{"role", "training"}}, w.y_owner));
    w.add(gpu_pod("a-1", World::inf(3), 4, {{"job", "a"}}));
    w.reconcile();
    CHECK(w.cluster->replicas("a") == 3);
    CHECK(w.cluster->replicas("b") == 2);

    // 3 servers needed: inf-2 would preempt x (cost 4/4 = 1); inf-3 preempts y (4/8 = 0.5) and
    // shrinks a: inf-3 is returned, and only y-1 and a-1 are evicted.
    w.require(3);
    const ReconcileSummary sum = w.reconcile();
    CHECK(sum.returned == 1);
    CHECK(sum.evicted == 2);
    std::vector<std::string> evicted = w.cluster->evicted;
    std::sort(evicted.begin(), evicted.end());
    CHECK(evicted == std::vector<std::string>{"ml/a-1", "ml/y-1"});
    const json returned = w.node(World::inf(3));
    CHECK(loaned_label(returned).empty());
    CHECK(has_taint(returned, kInferenceOnlyTaint));
    CHECK(has_taint(returned, kReturnedTaint));
    CHECK(loaned_label(w.node(World::inf(2))) == "true");
    CHECK(w.cluster->has_event(World::inf(3), "Returned", "least preemption cost 0.5"));
    CHECK(w.cluster->has_event("y-1", "Evicted", World::inf(3)));
    CHECK(w.cluster->has_event(World::inf(3), "Evicted", "a-1"));
    CHECK_FALSE(w.cluster->has_event("x-0", "Evicted"));
    // 24 GPUs - x, y-0 (8) - minimums (8) = 8: a 2, b 2.
    w.reconcile();
    CHECK(w.cluster->replicas("a") == 2);
    CHECK(w.cluster->replicas("b") == 2);

    const json s = w.cluster->status();
    CHECK(s["loanedNodes"] == json::array({World::inf(2)}));
    CHECK(s["returnedNodes"] == json::array({World::inf(3)}));
    CHECK(s["requiredServers"] == 3);
    std::set<std::string> actions;
    for (const json& d : s["lastDecisions"]) actions.insert(d.value("action", ""));
    CHECK(actions == std::set<std::string>{"Loan", "Return", "Evict", "Scale"});
    const json elastic = s["elasticJobs"];
    REQUIRE(elastic.size() == 2);
    CHECK(elastic[0]["name"] == "a");
    CHECK(elastic[0]["replicas"] == 2);
    CHECK(elastic[0]["minReplicas"] == 1);
    CHECK(elastic[0]["maxReplicas"] == 6);
    CHECK(elastic[0]["gpusPerWorker"] == 4);
}

TEST_CASE("loan controller: replicas stay within the job's bounds and the CapacityLoan's",
          "[unit][loan]") {
    World w;
    // Plenty of GPUs: every inference node idle and loanable.
    for (int i = 0; i < 4; ++i) w.remove("server-" + std::to_string(i));
    w.require(0);
    // a may not pass 3; b asks for more than the CapacityLoan's 6, which it does not get.
    w.cluster->trainingjobs["ml/a"]["metadata"]["annotations"][kMaxReplicasAnnotation] = "3";
    w.cluster->trainingjobs["ml/b"]["metadata"]["annotations"][kMaxReplicasAnnotation] = "20";
    w.reconcile();
    CHECK(w.cluster->replicas("a") == 3);
    CHECK(w.cluster->replicas("b") == 6);
    const json s = w.cluster->status();
    CHECK(s["elasticJobs"][1]["maxReplicas"] == 6);
    CHECK(s["conditions"][0]["status"] == "False");
    CHECK(s["conditions"][0]["reason"] == "Problems");
    CHECK_THAT(s["conditions"][0]["message"].get<std::string>(),
               Contains("ml/b") && Contains("CapacityLoan's limits"));

    // A job at its planned replicas is not scaled again.
    w.cluster->scaled.clear();
    CHECK(w.reconcile().scaled == 0);
    CHECK(w.cluster->scaled.empty());
}

TEST_CASE("loan controller: a problem becomes the Ready condition, the rest is still done",
          "[unit][loan]") {
    auto cluster = std::make_unique<FakeCluster>();
    FakeCluster& c = *cluster;
    Controller controller(std::move(cluster));
    c.nodes["bad-0"] = gpu_node("bad-0", "inference");
    json loan = capacity_loan("bad", 1);
    loan["spec"]["training"]["elasticJobs"][0]["group"] = "nowhere.example.com";
    loan["spec"]["training"]["elasticJobs"][0]["resource"] = "jobs";
    c.loans["bad"] = loan;
    controller.reconcile(c.node_objects(), c.pod_objects(), 1000);
    const json s = c.status("bad");
    CHECK(s["conditions"][0]["status"] == "False");
    CHECK(s["conditions"][0]["reason"] == "Problems");
    CHECK_THAT(s["conditions"][0]["message"].get<std::string>(), Contains("cannot list jobs"));
    CHECK(s["loanedCount"] == 0);
    CHECK(has_taint(c.nodes["bad-0"], kInferenceOnlyTaint));

    // An invalid spec: InvalidSpec, and what the status said about the cluster is kept.
    c.loans["bad"]["spec"]["inference"].erase("requiredServers");
    controller.reconcile(c.node_objects(), c.pod_objects(), 1010);
    const json t = c.status("bad");
    CHECK(t["conditions"][0]["reason"] == "InvalidSpec");
    CHECK(t["inferenceNodes"] == 1);
}

TEST_CASE("loan controller: a blocked eviction is a Warning Event and is tried again",
          "[unit][loan]") {
    World w;
    w.reconcile();
    load_drops(w);
    w.add(gpu_pod("x-0", World::inf(3), 4, {{"role", "training"}}));
    w.cluster->blocked_evictions.insert("ml/x-0");
    w.require(4);  // inf-2 (empty) and inf-3 (x-0 on it) are returned
    ReconcileSummary sum = w.reconcile();
    CHECK(sum.returned == 2);
    CHECK(sum.evicted == 0);
    CHECK(sum.errors == 0);  // a budget saying no is not an error
    REQUIRE(w.cluster->has_event("x-0", "EvictionBlocked", "disruption budget"));
    for (const auto& e : w.cluster->events)
        if (e.reason == "EvictionBlocked") CHECK(e.type == kube::EventType::Warning);
    CHECK(w.cluster->pods.count("ml/x-0") == 1);

    // The budget allows it now: the pod on the still returned node goes.
    w.cluster->blocked_evictions.clear();
    sum = w.reconcile();
    CHECK(sum.evicted == 1);
    CHECK(w.cluster->pods.count("ml/x-0") == 0);
    CHECK(w.cluster->has_event("x-0", "Evicted", World::inf(3)));
}

TEST_CASE("loan controller: a node that cannot be marked loses no pod in that pass",
          "[unit][loan]") {
    World w;
    w.reconcile();
    load_drops(w);
    w.add(gpu_pod("x-0", World::inf(3), 4, {{"role", "training"}}));
    w.cluster->failing_nodes.insert(World::inf(3));
    w.require(4);
    ReconcileSummary sum = w.reconcile();
    CHECK(sum.errors == 1);
    CHECK(sum.evicted == 0);
    CHECK(w.cluster->pods.count("ml/x-0") == 1);
    CHECK_FALSE(w.cluster->has_event(World::inf(3), "Returned"));
    CHECK_THAT(w.cluster->status()["conditions"][0]["message"].get<std::string>(),
               Contains("cannot mark node inf-3 Returned"));

    w.cluster->failing_nodes.clear();
    sum = w.reconcile();
    CHECK(sum.evicted == 1);
    CHECK(has_taint(w.node(World::inf(3)), kReturnedTaint));
}

TEST_CASE("loan controller: status written only when it changed, and a restart keeps the decisions",
          "[unit][loan]") {
    World w;
    w.reconcile();
    load_drops(w);
    CHECK(w.reconcile().status_updates == 0);  // nothing changed, nothing written
    const json decisions = w.cluster->status()["lastDecisions"];
    REQUIRE(decisions.size() >= 3);

    // Another controller (the operator restarted) over the same cluster: it remembers the
    // decisions the status holds, and the cluster stays as it is.
    auto cluster = std::make_unique<FakeCluster>(*w.cluster);
    FakeCluster& c = *cluster;
    Controller restarted(std::move(cluster));
    const ReconcileSummary sum = restarted.reconcile(c.node_objects(), c.pod_objects(), 2000);
    CHECK(sum.loaned + sum.returned + sum.evicted + sum.scaled == 0);
    CHECK(sum.status_updates == 0);
    CHECK(c.status()["lastDecisions"] == decisions);
}

TEST_CASE("loan controller: a node claimed by an earlier CapacityLoan is named in the later one's",
          "[unit][loan]") {
    World w;
    json other_loan = capacity_loan("other", 0, "inference", "none");
    other_loan["spec"]["training"].erase("elasticJobs");  // a and b are "gpus"'s
    w.cluster->loans["other"] = other_loan;
    w.reconcile();
    // "gpus" comes first in name order and keeps its nodes.
    CHECK(w.cluster->status()["inferenceNodes"] == 4);
    const json other = w.cluster->status("other");
    CHECK(other["inferenceNodes"] == 0);
    CHECK_THAT(other["conditions"][0]["message"].get<std::string>(),
               Contains("node inf-0 belongs to an earlier CapacityLoan"));
}

TEST_CASE(
    "loan controller: each pass reports its loans, returns and evictions, and a deleted loan goes",
    "[unit][loan]") {
    std::vector<LoanReport> reports;
    std::vector<std::string> gone;
    ControllerHooks hooks;
    hooks.loan_reconciled = [&](const LoanReport& r) { reports.push_back(r); };
    hooks.loan_gone = [&](const std::string& name) { gone.push_back(name); };
    World w(std::make_unique<FakeCluster>(), hooks);
    w.reconcile();
    REQUIRE(reports.size() == 1);
    CHECK(reports.back().name == "gpus");
    CHECK(reports.back().loaned == 0);
    load_drops(w);
    CHECK(reports.back().loaned == 2);
    // As above: inf-3 (y-1 on it) preempts least and is returned, y-1 evicted.
    w.add(gpu_pod("x-0", World::inf(2), 4, {{"role", "training"}}));
    w.add(gpu_pod("y-1", World::inf(3), 4, {{"role", "training"}}, w.y_owner));
    w.reconcile();
    w.require(3);
    w.reconcile();
    CHECK(reports.back().loaned == 1);
    CHECK(reports.back().returned == 1);
    CHECK(reports.back().evicted == 1);
    w.reconcile();
    CHECK(reports.back().returned == 0);  // per pass, not totals
    CHECK(gone.empty());
    w.cluster->loans.erase("gpus");
    w.reconcile();
    CHECK(gone == std::vector<std::string>{"gpus"});
}
