// The loan controller's pure decisions on hand-made clusters: loans, returns by preemption cost,
// evictions, replicas per elastic job; and the spec, selectors and node patches.
#include <catch2/catch.hpp>

#include <phasescale/control/pod.hpp>
#include <phasescale/loan/controller.hpp>
#include <phasescale/loan/decision.hpp>
#include <phasescale/loan/spec.hpp>

using namespace phasescale::loan;
using nlohmann::json;

namespace {

NodeView node(const std::string& name, int gpus = 8, bool loaned = false) {
    NodeView n;
    n.name = name;
    n.gpus = gpus;
    n.loaned = loaned;
    return n;
}

PodView pod(const std::string& name, const std::string& node, PodRole role,
            std::optional<std::size_t> job = {}, int gpus = 4) {
    PodView p;
    p.ns = "ns";
    p.name = name;
    p.node = node;
    p.role = role;
    p.job = job;
    p.gpus = gpus;
    return p;
}

JobView elastic(const std::string& name, int replicas, int min, int max, double remaining,
                int gpw = 4) {
    JobView j;
    j.ns = "ns";
    j.name = name;
    j.elastic = true;
    j.replicas = replicas;
    j.min_replicas = min;
    j.max_replicas = max;
    j.remaining_seconds = remaining;
    j.gpus_per_worker = gpw;
    return j;
}

JobView inelastic(const std::string& name, int workers, int gpw = 4) {
    JobView j;
    j.ns = "ns";
    j.name = name;
    j.replicas = j.min_replicas = j.max_replicas = workers;
    j.gpus_per_worker = gpw;
    return j;
}

std::vector<std::string> names(const std::vector<NodeView>& nodes,
                               const std::vector<std::size_t>& idx) {
    std::vector<std::string> out;
    for (std::size_t i : idx) out.push_back(nodes[i].name);
    return out;
}

}  // namespace

TEST_CASE("loan target: schedulable inference nodes minus required servers and headroom",
          "[unit]") {
    std::vector<NodeView> inf{node("a"), node("b"), node("c"), node("d")};
    CHECK(loan_target(inf, 1, 0) == 3);
    CHECK(loan_target(inf, 1, 1) == 2);
    CHECK(loan_target(inf, 4, 0) == 0);
    CHECK(loan_target(inf, 9, 0) == 0);
    inf[0].schedulable = false;  // cordoned: neither serves inference nor is loaned
    CHECK(loan_target(inf, 1, 0) == 2);
}

TEST_CASE("loans: only idle, schedulable, not loaned nodes, in name order", "[unit]") {
    std::vector<NodeView> inf{node("inf-3"), node("inf-1"), node("inf-2", 8, true), node("inf-0"),
                              node("inf-4")};
    inf[4].schedulable = false;
    std::vector<PodView> pods{
        pod("server", "inf-0", PodRole::Inference),
        pod("exporter", "inf-1", PodRole::System),  // a DaemonSet pod does not make it busy
        pod("t", "inf-3", PodRole::Training, 0)};   // nor does a training pod
    CHECK(idle("inf-1", pods));
    CHECK_FALSE(idle("inf-0", pods));
    CHECK(names(inf, choose_loans(inf, pods, 5)) == std::vector<std::string>{"inf-1", "inf-3"});
    CHECK(names(inf, choose_loans(inf, pods, 1)) == std::vector<std::string>{"inf-1"});
    CHECK(choose_loans(inf, pods, 0).empty());
}

TEST_CASE("plan: idle nodes are loaned as the inference load drops, never a busy one", "[unit]") {
    LoanInputs in;
    in.inference = {node("inf-0"), node("inf-1"), node("inf-2"), node("inf-3")};
    in.training = {node("trn-0")};
    in.pods = {pod("s0", "inf-0", PodRole::Inference), pod("s1", "inf-1", PodRole::Inference)};
    in.required_servers = 4;
    LoanPlan p = plan(in);
    CHECK(p.target_loaned == 0);
    CHECK(p.loan.empty());
    CHECK(p.ret.empty());

    in.required_servers = 2;
    p = plan(in);
    CHECK(p.target_loaned == 2);
    CHECK(names(in.inference, p.loan) == std::vector<std::string>{"inf-2", "inf-3"});
    CHECK(p.loaned_after == std::vector<bool>{false, false, true, true});
    CHECK(p.evict.empty());

    // Load drops further, but the busy nodes are not idle: only what is idle is loaned.
    in.required_servers = 0;
    p = plan(in);
    CHECK(p.target_loaned == 4);
    CHECK(names(in.inference, p.loan) == std::vector<std::string>{"inf-2", "inf-3"});

    // Headroom keeps one more idle.
    in.required_servers = 2;
    in.headroom_servers = 1;
    p = plan(in);
    CHECK(names(in.inference, p.loan) == std::vector<std::string>{"inf-2"});
}

TEST_CASE("plan: returns the node of least preemption cost and evicts only the training pods on it",
          "[unit]") {
    LoanInputs in;
    in.inference = {node("inf-0"), node("inf-1", 8, true), node("inf-2", 8, true),
                    node("inf-3", 8, true)};
    in.training = {node("trn-0")};
    // job 0: inelastic X, 1 worker, all on inf-1 (cost 1.0 to return inf-1)
    // job 1: inelastic Y, 2 workers: one on inf-2, one on trn-0 (cost 0.5 to return inf-2)
    // job 2: elastic A at 3 workers, min 1: one on inf-2, one on inf-3, one on trn-0
    // job 3: inelastic Z, 4 workers: one on inf-3, three on trn-0 (cost 0.25 to return inf-3)
    in.jobs = {inelastic("x", 1), inelastic("y", 2), elastic("a", 3, 1, 4, 3600),
               inelastic("z", 4, 1)};
    in.pods = {pod("s0", "inf-0", PodRole::Inference),
               pod("x-0", "inf-1", PodRole::Training, 0),
               pod("y-0", "inf-2", PodRole::Training, 1),
               pod("y-1", "trn-0", PodRole::Training, 1),
               pod("a-0", "inf-2", PodRole::Training, 2),
               pod("a-1", "inf-3", PodRole::Training, 2),
               pod("a-2", "trn-0", PodRole::Training, 2),
               pod("z-0", "inf-3", PodRole::Training, 3, 1),
               pod("z-1", "trn-0", PodRole::Training, 3, 1),
               pod("z-2", "trn-0", PodRole::Training, 3, 1),
               pod("z-3", "trn-0", PodRole::Training, 3, 1),
               pod("server-on-loaned", "inf-3", PodRole::Inference, {}, 0)};
    in.required_servers = 2;  // 4 nodes, 3 loaned, 2 may be: return 1
    LoanPlan p = plan(in);
    REQUIRE(p.ret.size() == 1);
    CHECK(in.inference[p.ret[0]].name == "inf-3");
    CHECK(p.reclaim[0].kind == phasescale::policy::ReclaimKind::preempt);
    CHECK(p.reclaim[0].cost == Approx(0.25));
    CHECK(p.loaned_after == std::vector<bool>{false, true, true, false});
    CHECK(p.returned_after == std::vector<bool>{false, false, false, true});
    // Only the training pods on inf-3 go: not the inference pod there, not Z's other workers.
    std::vector<std::string> evicted;
    for (std::size_t i : p.evict) evicted.push_back(in.pods[i].name);
    CHECK(evicted == std::vector<std::string>{"a-1", "z-0"});

    // Two to return: inf-3 (0.25), then inf-2 (Y: 0.5) before inf-1 (X: 1.0).
    in.required_servers = 3;
    p = plan(in);
    CHECK(names(in.inference, p.ret) == std::vector<std::string>{"inf-3", "inf-2"});
}

TEST_CASE("plan: an empty loaned node goes first, then one whose elastic jobs only shrink",
          "[unit]") {
    LoanInputs in;
    in.inference = {node("inf-0", 8, true), node("inf-1", 8, true), node("inf-2", 8, true)};
    in.jobs = {inelastic("x", 2), elastic("a", 3, 1, 4, 3600)};
    in.pods = {pod("x-0", "inf-0", PodRole::Training, 0), pod("x-1", "trn-0", PodRole::Training, 0),
               pod("a-0", "inf-1", PodRole::Training, 1), pod("a-1", "trn-0", PodRole::Training, 1),
               pod("a-2", "trn-0", PodRole::Training, 1)};
    in.required_servers = 1;  // 3 loaned, 2 may be: return 1
    LoanPlan p = plan(in);
    CHECK(names(in.inference, p.ret) == std::vector<std::string>{"inf-2"});
    CHECK(p.reclaim[0].kind == phasescale::policy::ReclaimKind::empty);
    CHECK(p.evict.empty());

    in.required_servers = 2;  // return 2: inf-2 (empty), then inf-1 (A shrinks from 3 to 2)
    p = plan(in);
    CHECK(names(in.inference, p.ret) == std::vector<std::string>{"inf-2", "inf-1"});
    CHECK(p.reclaim[1].kind == phasescale::policy::ReclaimKind::shrink);
    REQUIRE(p.evict.size() == 1);
    CHECK(in.pods[p.evict[0]].name == "a-0");
}

TEST_CASE("plan: training pods left on a node returned earlier are evicted again", "[unit]") {
    LoanInputs in;
    in.inference = {node("inf-0"), node("inf-1")};
    in.inference[1].returned = true;  // its eviction was blocked last time
    in.jobs = {inelastic("x", 1)};
    in.pods = {pod("x-0", "inf-1", PodRole::Training, 0), pod("s", "inf-0", PodRole::Inference)};
    in.required_servers = 2;
    LoanPlan p = plan(in);
    CHECK(p.ret.empty());
    REQUIRE(p.evict.size() == 1);
    CHECK(in.pods[p.evict[0]].name == "x-0");
    // Loaned again, the node is no longer returned and nothing is evicted.
    in.required_servers = 1;
    p = plan(in);
    CHECK(names(in.inference, p.loan) == std::vector<std::string>{"inf-1"});
    CHECK(p.evict.empty());
    CHECK(p.returned_after == std::vector<bool>{false, false});
}

TEST_CASE("spare GPUs: training pool plus loaned nodes, minus other pods and base demands",
          "[unit]") {
    LoanInputs in;
    in.inference = {node("inf-0"), node("inf-1")};
    in.training = {node("trn-0"), node("trn-1")};
    in.jobs = {elastic("a", 2, 1, 6, 7200), elastic("b", 1, 1, 6, 3600), inelastic("y", 1),
               elastic("suspended", 0, 2, 6, 3600)};
    in.pods = {pod("a-0", "trn-0", PodRole::Training, 0), pod("a-1", "inf-1", PodRole::Training, 0),
               pod("b-0", "trn-1", PodRole::Training, 1), pod("y-0", "trn-0", PodRole::Training, 2),
               pod("s", "inf-0", PodRole::Inference, {}, 2)};
    // training 16 - y 4 - base (a 4 + b 4) = 4; a-1 on a node not loaned does not count
    CHECK(spare_gpus(in, {false, false}) == 4);
    // + inf-1's 8
    CHECK(spare_gpus(in, {false, true}) == 12);
    // + inf-0's 8, minus the 2 GPUs its inference pod holds
    CHECK(spare_gpus(in, {true, true}) == 18);
    in.jobs[2].gpus_per_worker = 40;
    in.pods[3].gpus = 40;
    CHECK(spare_gpus(in, {false, false}) == 0);  // never below 0
}

TEST_CASE("replicas: the knapsack of JCT reductions, from the minimum", "[unit]") {
    // Linear curves: k workers above 1 reduce the JCT by remaining * k / (1 + k).
    std::vector<JobView> jobs{elastic("a", 1, 1, 6, 7200), elastic("b", 1, 1, 6, 3600)};
    // 1 worker: a (3600) beats b (1800)
    CHECK(elastic_replicas(jobs, 4) == std::vector<int>{2, 1});
    // 2 workers: (1,1) = 3600 + 1800 beats (2,0) = 4800
    CHECK(elastic_replicas(jobs, 8) == std::vector<int>{2, 2});
    // 3 workers: (2,1) = 4800 + 1800 beats (1,2) = 6000 and (3,0) = 5400
    CHECK(elastic_replicas(jobs, 12) == std::vector<int>{3, 2});
    // 5 workers: (3,2) = 5400 + 2400 = 7800 beats (4,1) = 7560 and (2,3) = 7500
    CHECK(elastic_replicas(jobs, 20) == std::vector<int>{4, 3});
    // capped by max
    CHECK(elastic_replicas(jobs, 1000) == std::vector<int>{6, 6});
    // nothing spare: both at their minimum, also when they run above it now
    jobs[0].replicas = 5;
    CHECK(elastic_replicas(jobs, 0) == std::vector<int>{1, 1});
    // 3 GPUs spare, 4 per worker: nothing fits
    CHECK(elastic_replicas(jobs, 3) == std::vector<int>{1, 1});
}

TEST_CASE("replicas: remaining time at the minimum, curves and odd jobs", "[unit]") {
    // The remaining time is read at the minimum: running above it now changes nothing.
    std::vector<JobView> jobs{elastic("a", 4, 1, 4, 3900), elastic("b", 1, 1, 4, 3600)};
    CHECK(elastic_replicas(jobs, 4) == std::vector<int>{2, 1});
    jobs[0].replicas = 1;
    CHECK(elastic_replicas(jobs, 4) == std::vector<int>{2, 1});
    // A job that does not scale (2 workers no faster than 1) gets nothing.
    jobs[0].curve = *parse_curve("1:1,2:1,4:1");
    CHECK(elastic_replicas(jobs, 4) == std::vector<int>{1, 2});
    // A sub-linear curve: a's second extra worker adds less than b's first.
    jobs[0].curve = *parse_curve("1:1,2:1.9,3:2.2");
    // a: 3900 * (1 - 1/1.9) = 1847 for one, 3900 * (1 - 1/2.2) = 2127 for two; b: 1800, 2400
    CHECK(elastic_replicas(jobs, 8) == std::vector<int>{2, 2});
    // Suspended (0 replicas) and inelastic jobs keep their replicas; no remaining time, no extra.
    std::vector<JobView> odd{elastic("zero", 0, 1, 4, 3600), inelastic("x", 3),
                             elastic("done", 2, 1, 4, 0)};
    CHECK(elastic_replicas(odd, 100) == std::vector<int>{0, 3, 1});
}

TEST_CASE("node patch: the labels and taints of each state, nothing else touched", "[unit]") {
    json n = {{"metadata",
               {{"name", "n"}, {"resourceVersion", "42"}, {"labels", {{"pool", "inference"}}}}},
              {"spec",
               {{"taints",
                 json::array({{{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}}})}}}};
    json p = node_patch(n, NodeState::Inference);
    REQUIRE(p.is_object());
    CHECK(p["metadata"]["resourceVersion"] == "42");
    CHECK_FALSE(p["metadata"].contains("labels"));
    CHECK(p["spec"]["taints"] ==
          json::array({{{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}},
                       {{"key", kInferenceOnlyTaint}, {"effect", "NoSchedule"}}}));
    // applied: nothing more to do
    n["spec"]["taints"] = p["spec"]["taints"];
    CHECK(node_patch(n, NodeState::Inference).is_null());

    p = node_patch(n, NodeState::Loaned);
    CHECK(p["metadata"]["labels"][kLoanedLabel] == "true");
    CHECK(p["spec"]["taints"] ==
          json::array({{{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}}}));
    n["metadata"]["labels"][kLoanedLabel] = "true";
    n["spec"]["taints"] = p["spec"]["taints"];
    CHECK(node_patch(n, NodeState::Loaned).is_null());

    p = node_patch(n, NodeState::Returned);
    CHECK(p["metadata"]["labels"][kLoanedLabel].is_null());
    CHECK(p["spec"]["taints"].size() == 3);
    CHECK(p["spec"]["taints"][2] == json({{"key", kReturnedTaint}, {"effect", "NoSchedule"}}));

    // A node with no taints left gets them removed with null.
    json bare = {
        {"metadata", {{"name", "b"}, {"labels", {{kLoanedLabel, "true"}}}}},
        {"spec",
         {{"taints", json::array({{{"key", kInferenceOnlyTaint}, {"effect", "NoSchedule"}}})}}}};
    p = node_patch(bare, NodeState::Loaned);
    CHECK(p["spec"]["taints"].is_null());
    CHECK_FALSE(p["metadata"].contains("resourceVersion"));
}

TEST_CASE("spec: defaults, every field, and messages naming the field", "[unit]") {
    json loan = {
        {"spec",
         {{"inferencePool", {{"nodeSelector", {{"matchLabels", {{"pool", "inference"}}}}}}},
          {"trainingPool", {{"nodeSelector", {{"matchLabels", {{"pool", "training"}}}}}}},
          {"inference", {{"requiredServers", 3}}},
          {"training",
           {{"podSelector", {{"matchLabels", {{"role", "training"}}}}},
            {"elasticJobs", json::array({{{"group", "apps"},
                                          {"version", "v1"},
                                          {"resource", "deployments"},
                                          {"namespace", "ml"},
                                          {"selector", {{"matchLabels", {{"elastic", "true"}}}}},
                                          {"maxReplicas", 8},
                                          {"gpusPerWorker", 2}}})}}}}}};
    ParsedLoan p = parse_loan(loan);
    REQUIRE(p.ok());
    CHECK(p.spec.required_servers == 3);
    CHECK(p.spec.headroom_servers == 0);
    CHECK(p.spec.gpu_resource == "nvidia.com/gpu");
    REQUIRE(p.spec.training_pods);
    REQUIRE(p.spec.jobs.size() == 1);
    const JobSource& j = p.spec.jobs[0];
    CHECK(j.resource.path("ml", "x", "scale") == "/apis/apps/v1/namespaces/ml/deployments/x/scale");
    CHECK(j.min_replicas == 1);
    CHECK(j.max_replicas == 8);
    CHECK(j.gpus_per_worker == 2);
    CHECK(j.remaining_seconds == 3600);
    CHECK(j.selector.to_string() == "elastic=true");

    json bad = loan;
    bad["spec"]["inference"].erase("requiredServers");
    bad["spec"]["training"]["elasticJobs"][0]["minReplicas"] = 9;
    bad["spec"]["trainingPool"]["nodeSelector"] = {
        {"matchExpressions", json::array({{{"key", "pool"}, {"operator", "In"}}})}};
    p = parse_loan(bad);
    CHECK_FALSE(p.ok());
    CHECK_THAT(p.message(), Catch::Contains("spec.inference.requiredServers: is required"));
    CHECK_THAT(
        p.message(),
        Catch::Contains("spec.training.elasticJobs[0].maxReplicas: must be at least minReplicas"));
    CHECK_THAT(p.message(),
               Catch::Contains("spec.trainingPool.nodeSelector.matchExpressions[0].values"));

    p = parse_loan(json{{"spec", {{"inference", {{"requiredServers", -1}}}}}});
    CHECK_THAT(p.message(), Catch::Contains("spec.inferencePool: is required"));
    CHECK_THAT(p.message(), Catch::Contains("spec.inference.requiredServers: must be between 0"));
}

TEST_CASE("scaling curve annotation and pod requests", "[unit]") {
    auto c = parse_curve("1:1, 2:1.9,4:3.4");
    REQUIRE(c);
    CHECK(c->throughput(2) == Approx(1.9));
    CHECK_FALSE(parse_curve("1:1,2"));
    CHECK_FALSE(parse_curve("0:1"));
    CHECK_FALSE(parse_curve("1:x"));
    CHECK_FALSE(parse_curve(""));

    json p = {
        {"metadata", {{"name", "p"}, {"namespace", "n"}, {"managedFields", json::array()}}},
        {"spec",
         {{"nodeName", "n1"},
          {"containers",
           json::array({{{"name", "a"},
                         {"image", "x"},
                         {"resources", {{"requests", {{"nvidia.com/gpu", "2"}}}}}},
                        {{"name", "b"},
                         {"resources", {{"requests", {{"nvidia.com/gpu", 1}, {"cpu", "1"}}}}}}})}}},
        {"status", {{"phase", "Running"}}}};
    trim_pod(p);
    CHECK_FALSE(p["metadata"].contains("managedFields"));
    CHECK_FALSE(p.contains("status"));
    CHECK(p["spec"]["nodeName"] == "n1");
    CHECK(pod_requests(p, "nvidia.com/gpu") == 3);
    CHECK(pod_requests(p, "example.com/fpga") == 0);
}

TEST_CASE("a job's annotations narrow its CapacityLoan entry, never beyond it", "[unit][loan]") {
    JobSource source;
    source.min_replicas = 1;
    source.max_replicas = 6;
    source.gpus_per_worker = 4;
    auto view_of = [&](const json& annotations, std::vector<std::string>& problems) {
        JobView v;
        v.min_replicas = source.min_replicas;
        v.max_replicas = source.max_replicas;
        v.gpus_per_worker = source.gpus_per_worker;
        apply_job_annotations(annotations, source, "ns/job", v, problems);
        return v;
    };
    std::vector<std::string> problems;
    JobView v = view_of({{kMinReplicasAnnotation, "2"}, {kMaxReplicasAnnotation, "3"}}, problems);
    CHECK(problems.empty());
    CHECK(v.min_replicas == 2);
    CHECK(v.max_replicas == 3);

    // A tenant asking for 2e9 workers (once 2.1 GB of planner tables), or a number that wraps.
    for (const std::string bad : {"2000000000", "7", "4294967298", "1e9", "-1", "0"}) {
        problems.clear();
        v = view_of({{kMaxReplicasAnnotation, bad}}, problems);
        INFO(bad);
        CHECK(v.max_replicas == 6);  // the entry's value stands
        REQUIRE(problems.size() == 1);
        CHECK_THAT(problems[0], Catch::Contains("ns/job") && Catch::Contains("[1, 6]") &&
                                    Catch::Contains("CapacityLoan's limits"));
    }
    problems.clear();
    v = view_of({{kGpusPerWorkerAnnotation, "100000"}, {kRemainingSecondsAnnotation, "1e300"}},
                problems);
    CHECK(v.gpus_per_worker == 4);
    CHECK(problems.size() == 2);
    problems.clear();
    v = view_of({{kMaxReplicasAnnotation, std::string(100000, '9')}}, problems);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].size() < 200);  // the value is quoted short
}

namespace {

// Every key of `part` is in `whole` with the same value (objects by key, arrays element-wise).
bool holds(const json& whole, const json& part) {
    if (part.is_object()) {
        if (!whole.is_object()) return false;
        for (auto it = part.begin(); it != part.end(); ++it)
            if (!whole.contains(it.key()) || !holds(whole[it.key()], it.value())) return false;
        return true;
    }
    if (part.is_array()) {
        if (!whole.is_array() || whole.size() != part.size()) return false;
        for (std::size_t i = 0; i < part.size(); ++i)
            if (!holds(whole[i], part[i])) return false;
        return true;
    }
    return whole == part;
}

}  // namespace

TEST_CASE("the control loop's pod cache holds all the loan controller reads (one shared informer)",
          "[unit][loan]") {
    const json pod = {{"metadata",
                       {{"name", "w-0"},
                        {"namespace", "ml"},
                        {"uid", "u1"},
                        {"resourceVersion", "7"},
                        {"labels", {{"job", "a"}}},
                        {"annotations",
                         {{"phasescale.io/phase", "1"},
                          {"kubectl.kubernetes.io/last-applied-configuration", "{}"}}},
                        {"ownerReferences",
                         {{{"apiVersion", "batch/v1"},
                           {"kind", "Job"},
                           {"name", "a"},
                           {"uid", "j"},
                           {"controller", true}}}},
                        {"deletionTimestamp", "2026-12-01T00:00:00Z"},
                        {"managedFields", json::array()}}},
                      {"spec",
                       {{"nodeName", "gpu-3"},
                        {"schedulerName", "default"},
                        {"containers",
                         {{{"name", "main"},
                           {"image", "trainer"},
                           {"env", json::array()},
                           {"resources",
                            {{"requests", {{"nvidia.com/gpu", "2"}, {"cpu", "4"}}},
                             {"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}},
                      {"status", {{"phase", "Running"}, {"podIP", "10.0.0.1"}}}};
    json for_loans = pod, for_control = pod;
    trim_pod(for_loans);
    phasescale::control::trim_pod(for_control);
    CHECK(holds(for_control, for_loans));
    CHECK(for_control["spec"]["nodeName"] == "gpu-3");
    CHECK(pod_requests(for_control, "nvidia.com/gpu") == pod_requests(for_loans, "nvidia.com/gpu"));
    // And the check bites: a field the loan controller reads, gone from the control loop's.
    for_control["metadata"].erase("labels");
    CHECK_FALSE(holds(for_control, for_loans));
}
