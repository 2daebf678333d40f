#include "phasescale/loan/controller.hpp"

#include <phasescale/kube/json.hpp>
#include <phasescale/kube/time.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <stdexcept>

namespace phasescale::loan {

namespace {

using json = nlohmann::json;

using kube::string_field;

const json& metadata(const json& o) {
    static const json empty = json::object();
    return o.is_object() && o.contains("metadata") && o["metadata"].is_object() ? o["metadata"]
                                                                                : empty;
}

// An int, or nothing for anything that is not one or does not fit (never a wrapped value).
std::optional<int> int_of(const json& v) {
    auto fits = [](double d) -> std::optional<int> {
        if (!(d >= std::numeric_limits<int>::min() && d <= std::numeric_limits<int>::max()))
            return std::nullopt;
        return static_cast<int>(d);
    };
    if (v.is_number_unsigned()) return fits(static_cast<double>(v.get<std::uint64_t>()));
    if (v.is_number_integer()) return fits(static_cast<double>(v.get<std::int64_t>()));
    if (v.is_number()) return fits(v.get<double>());
    if (!v.is_string()) return std::nullopt;
    try {
        std::size_t used = 0;
        const std::string s = v.get<std::string>();
        const long long n = std::stoll(s, &used);
        if (used != s.size()) return std::nullopt;
        return fits(static_cast<double>(n));
    } catch (...) {
        return std::nullopt;
    }
}

std::optional<double> double_of(const std::string& s) {
    try {
        std::size_t used = 0;
        const double d = std::stod(s, &used);
        if (used != s.size() || !std::isfinite(d)) return std::nullopt;
        return d;
    } catch (...) {
        return std::nullopt;
    }
}

// The controller of a pod (kind/name), if it has one.
std::optional<json> controller_of(const json& pod) {
    const json& md = metadata(pod);
    if (!md.contains("ownerReferences") || !md["ownerReferences"].is_array()) return std::nullopt;
    for (const json& o : md["ownerReferences"])
        if (o.value("controller", false)) return o;
    return std::nullopt;
}

kube::ObjectReference ref(const std::string& api_version, const std::string& kind,
                          const json& object) {
    kube::ObjectReference r;
    r.api_version = api_version;
    r.kind = kind;
    const json& md = metadata(object);
    r.ns = string_field(md, "namespace");
    r.name = string_field(md, "name");
    r.uid = string_field(md, "uid");
    return r;
}

bool has_taint(const json& node, const char* key) {
    if (!node.contains("spec") || !node["spec"].contains("taints") ||
        !node["spec"]["taints"].is_array())
        return false;
    for (const json& t : node["spec"]["taints"])
        if (string_field(t, "key") == key && string_field(t, "effect") == "NoSchedule") return true;
    return false;
}

// One elastic job as the controller knows it: its view, where to scale it and which pods are its.
struct Job {
    JobView view;
    kube::Resource resource;
    kube::ObjectReference ref;
    std::optional<kube::LabelSelector> pods;
};

// resourceVersion is etcd's revision, an integer in every kube-apiserver (client-go's mutation
// cache orders versions the same way); none when it is not one.
std::optional<unsigned long long> resource_version(const json& object) {
    const std::string v = string_field(metadata(object), "resourceVersion");
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    try {
        return std::stoull(v);
    } catch (const std::out_of_range&) {
        return std::nullopt;
    }
}

}  // namespace

void trim_node(json& node) {
    const json& md = metadata(node);
    json out = {{"metadata", json::object()}};
    for (const char* k : {"name", "uid", "resourceVersion", "labels"})
        if (md.contains(k)) out["metadata"][k] = md[k];
    if (node.contains("spec")) {
        out["spec"] = json::object();
        for (const char* k : {"taints", "unschedulable"})
            if (node["spec"].contains(k)) out["spec"][k] = node["spec"][k];
    }
    if (node.contains("status") && node["status"].is_object()) {
        out["status"] = json::object();
        for (const char* k : {"allocatable", "capacity"})
            if (node["status"].contains(k)) out["status"][k] = node["status"][k];
    }
    node = std::move(out);
}

void trim_pod(json& pod) {
    const json& md = metadata(pod);
    json out = {{"metadata", json::object()}, {"spec", json::object()}};
    for (const char* k : {"name", "namespace", "uid", "labels", "deletionTimestamp"})
        if (md.contains(k)) out["metadata"][k] = md[k];
    if (md.contains("ownerReferences") && md["ownerReferences"].is_array()) {
        json owners = json::array();
        for (const json& o : md["ownerReferences"]) {
            json kept = json::object();  // what controller_of's callers read
            for (const char* k : {"kind", "name", "controller"})
                if (o.is_object() && o.contains(k)) kept[k] = o[k];
            owners.push_back(kept);
        }
        out["metadata"]["ownerReferences"] = owners;
    }
    if (pod.contains("spec")) {
        const json& spec = pod["spec"];
        if (spec.contains("nodeName")) out["spec"]["nodeName"] = spec["nodeName"];
        json containers = json::array();
        if (spec.contains("containers") && spec["containers"].is_array())
            for (const json& c : spec["containers"]) {
                json r = json::object();
                if (c.contains("resources") && c["resources"].contains("requests"))
                    r["requests"] = c["resources"]["requests"];
                containers.push_back({{"resources", r}});
            }
        out["spec"]["containers"] = containers;
    }
    pod = std::move(out);
}

int pod_requests(const json& pod, const std::string& resource) {
    int total = 0;
    if (!pod.contains("spec") || !pod["spec"].contains("containers")) return 0;
    for (const json& c : pod["spec"]["containers"]) {
        if (!c.contains("resources") || !c["resources"].contains("requests")) continue;
        const json& req = c["resources"]["requests"];
        if (req.contains(resource)) total += std::max(0, int_of(req[resource]).value_or(0));
    }
    return total;
}

Controller::Controller(kube::Client kube, ControllerOptions options, ControllerHooks hooks)
    : Controller(kube_cluster_api(kube, options.field_manager), std::move(options),
                 std::move(hooks)) {
    kube_ = std::move(kube);
    own_nodes_ = !options_.nodes;
    if (own_nodes_) {
        kube::InformerOptions node_options;
        node_options.transform = trim_node;
        nodes_ = std::make_shared<kube::Informer>(*kube_, kube::resources::nodes, node_options);
    } else {
        nodes_ = options_.nodes;
    }
    own_pods_ = !options_.pods;
    if (!own_pods_) {
        pods_ = options_.pods;
        return;
    }
    kube::InformerOptions pod_options;
    pod_options.field_selector = kPodFieldSelector;
    pod_options.transform = trim_pod;
    pods_ = std::make_shared<kube::Informer>(*kube_, kube::resources::pods, pod_options);
}

Controller::Controller(std::unique_ptr<ClusterApi> cluster, ControllerOptions options,
                       ControllerHooks hooks)
    : cluster_(std::move(cluster)), options_(std::move(options)), hooks_(std::move(hooks)) {}

Controller::~Controller() {
    stop();
}

void Controller::start() {
    if (!nodes_) return;  // over another cluster: nothing to watch
    if (own_nodes_) nodes_->start();
    if (own_pods_) pods_->start();
}

void Controller::stop() {
    if (!nodes_) return;
    if (own_pods_) pods_->stop();
    if (own_nodes_) nodes_->stop();
}

bool Controller::wait_for_sync(std::chrono::milliseconds timeout) const {
    if (!nodes_) return true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!nodes_->wait_for_sync(timeout)) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return pods_->wait_for_sync(std::max(left, std::chrono::milliseconds(0)));
}

// A job's annotations narrow what its CapacityLoan entry says, never beyond it: replicas within
// [1, the entry's maxReplicas] (a tenant cannot make one job take every spare GPU, or the
// planner's tables huge), GPUs per worker within [1, 1024]; anything else is a problem, and the
// entry's value stands.
void apply_job_annotations(const json& annotations, const JobSource& source, const std::string& who,
                           JobView& v, std::vector<std::string>& problems) {
    auto annotation = [&](const char* k) -> std::optional<std::string> {
        if (annotations.is_object() && annotations.contains(k) && annotations[k].is_string())
            return annotations[k].get<std::string>();
        return std::nullopt;
    };
    auto int_annotation = [&](const char* k, int& out, int lo, int hi) {
        if (auto a = annotation(k)) {
            const std::string shown = a->size() > 40 ? a->substr(0, 40) + "..." : *a;
            auto n = int_of(json(*a));
            if (n && *n >= lo && *n <= hi)
                out = *n;
            else
                problems.push_back(who + ": annotation " + k + " (\"" + shown +
                                   "\") is not an integer in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "], the CapacityLoan's limits");
        }
    };
    int_annotation(kMinReplicasAnnotation, v.min_replicas, 1, source.max_replicas);
    int_annotation(kMaxReplicasAnnotation, v.max_replicas, 1, source.max_replicas);
    int_annotation(kGpusPerWorkerAnnotation, v.gpus_per_worker, 1, 1024);
    if (v.max_replicas < v.min_replicas) {
        problems.push_back(who + ": max replicas below min replicas, taken as min");
        v.max_replicas = v.min_replicas;
    }
    if (auto a = annotation(kRemainingSecondsAnnotation)) {
        auto d = double_of(*a);
        if (d && *d >= 0 && *d <= 1e9)
            v.remaining_seconds = *d;
        else
            problems.push_back(who + ": annotation " + std::string(kRemainingSecondsAnnotation) +
                               " is not a number in [0, 1e9]");
    }
    if (auto a = annotation(kScalingCurveAnnotation)) {
        if (auto c = parse_curve(*a))
            v.curve = *c;
        else
            problems.push_back(who + ": annotation " + std::string(kScalingCurveAnnotation) +
                               " is malformed");
    }
}

void Controller::run(std::stop_token stop, const std::function<bool()>& active) {
    start();
    while (!stop.stop_requested() && !wait_for_sync(std::chrono::milliseconds(200))) {
    }
    std::mutex mutex;
    std::condition_variable_any wake;
    while (!stop.stop_requested()) {
        if (!active || active()) {
            try {
                const double now = std::chrono::duration<double>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
                reconcile(now);
            } catch (const std::exception& e) {
                log("error", "capacity loan reconcile failed", {{"error", e.what()}});
            }
        }
        std::unique_lock lock(mutex);
        wake.wait_for(lock, stop, options_.interval, [] { return false; });
    }
    this->stop();
}

void Controller::log(const std::string& level, const std::string& message,
                     const json& fields) const {
    if (hooks_.log) hooks_.log(level, message, fields);
}

void Controller::event(const kube::ObjectReference& object, kube::EventType type,
                       const std::string& reason, const std::string& message) {
    try {
        cluster_->record_event(object, type, reason, message);
    } catch (const std::exception& e) {
        log("warning", "cannot record event",
            {{"object", object.name}, {"reason", reason}, {"error", e.what()}});
    }
}

void Controller::decide(LoanState& state, double now, const std::string& action,
                        const std::string& object, const std::string& message) {
    state.decisions.push_back({{"time", kube::format_time(now)},
                               {"action", action},
                               {"object", object},
                               {"message", message}});
    while (state.decisions.size() > options_.max_recent_decisions)
        state.decisions.erase(state.decisions.begin());
}

// One CapacityLoan in a pass, as its steps fill it in.
struct Controller::Pass {
    std::string name;
    long long generation = 0;
    json old_status;
    LoanState* state = nullptr;
    ParsedLoan parsed;
    std::vector<std::string> problems;  // for the Ready condition

    LoanInputs in;
    std::map<std::string, kube::Store::ObjectPtr> inference_objects;  // by name
    std::set<std::string> pool;                                       // nodes of both pools
    std::vector<Job> jobs;                                  // elastic jobs, the first in.jobs
    std::map<std::size_t, kube::ObjectReference> pod_refs;  // by index into in.pods
    LoanPlan plan;
    std::set<std::string> marked;  // inference nodes that carry their state's marks after this pass
    json status = json::object();
};

ReconcileSummary Controller::reconcile(double now) {
    // One snapshot of each cache for every CapacityLoan of the pass.
    return reconcile(nodes_ ? nodes_->store().list() : Objects{},
                     pods_ ? pods_->store().list() : Objects{}, now);
}

Controller::Objects Controller::with_own_writes(const Objects& nodes) {
    Objects out;
    std::map<std::string, kube::Store::ObjectPtr> still_ahead;
    for (const auto& node : nodes) {
        const std::string name = string_field(metadata(*node), "name");
        auto w = written_nodes_.find(name);
        const auto cached = resource_version(*node);
        const auto written =
            w == written_nodes_.end() ? std::nullopt : resource_version(*w->second);
        if (cached && written && *cached < *written) {
            still_ahead[name] = w->second;
            out.push_back(w->second);
        } else {
            out.push_back(node);  // caught up, never written, or versions not comparable
        }
    }
    written_nodes_ = std::move(still_ahead);
    return out;
}

ReconcileSummary Controller::reconcile(const Objects& cached_nodes, const Objects& pods,
                                       double now) {
    const Objects nodes = with_own_writes(cached_nodes);
    ReconcileSummary sum;
    json list;
    try {
        list = cluster_->capacity_loans();
    } catch (const std::exception& e) {
        log("error", "cannot list CapacityLoans", {{"error", e.what()}});
        ++sum.errors;
        return sum;
    }
    std::vector<json> items = list.value("items", json::array());
    std::sort(items.begin(), items.end(), [](const json& a, const json& b) {
        return string_field(metadata(a), "name") < string_field(metadata(b), "name");
    });
    std::set<std::string> claimed;  // nodes owned by an earlier CapacityLoan
    std::set<std::string> names;
    for (const json& loan : items) {
        const std::string name = string_field(metadata(loan), "name");
        names.insert(name);
        const ReconcileSummary before = sum;
        const std::size_t loaned = reconcile_one(loan, nodes, pods, claimed, now, sum);
        ++sum.loans;
        if (hooks_.loan_reconciled)
            hooks_.loan_reconciled(LoanReport{name, loaned, sum.returned - before.returned,
                                              sum.evicted - before.evicted});
    }
    for (auto it = loans_.begin(); it != loans_.end();) {
        if (names.count(it->first)) {
            ++it;
            continue;
        }
        if (hooks_.loan_gone) hooks_.loan_gone(it->first);
        it = loans_.erase(it);
    }
    return sum;
}

std::size_t Controller::reconcile_one(const json& loan, const Objects& nodes, const Objects& pods,
                                      std::set<std::string>& claimed, double now,
                                      ReconcileSummary& sum) {
    Pass pass = begin_pass(loan);
    if (pass.parsed.ok()) {
        read_nodes(pass, nodes, claimed);
        read_jobs(pass);
        read_pods(pass, pods);
        pass.plan = loan::plan(pass.in);  // the pure decisions (decision.hpp)
        mark_nodes(pass, now, sum);
        evict_pods(pass, now, sum);
        scale_jobs(pass, now, sum);
        report(pass);
    } else {
        pass.problems.push_back(pass.parsed.message());
    }
    update_status(pass, now, sum);
    return pass.status.value("loanedCount", std::size_t{0});
}

Controller::Pass Controller::begin_pass(const json& loan) {
    Pass pass;
    pass.name = string_field(metadata(loan), "name");
    pass.generation = metadata(loan).value("generation", 0LL);
    pass.old_status = loan.value("status", json::object());
    auto [it, fresh] = loans_.try_emplace(pass.name);
    pass.state = &it->second;
    const json& old = pass.old_status;
    if (fresh && old.contains("lastDecisions") && old["lastDecisions"].is_array())
        pass.state->decisions = old["lastDecisions"];
    pass.parsed = parse_loan(loan);
    pass.in.required_servers = pass.parsed.spec.required_servers;
    pass.in.headroom_servers = pass.parsed.spec.headroom_servers;
    return pass;
}

void Controller::read_nodes(Pass& pass, const Objects& nodes, std::set<std::string>& claimed) {
    const LoanSpec& spec = pass.parsed.spec;
    Objects sorted = nodes;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return string_field(metadata(*a), "name") < string_field(metadata(*b), "name");
    });
    for (const auto& node : sorted) {
        const std::string node_name = string_field(metadata(*node), "name");
        // An inference node is never a training node too.
        const bool inf = spec.inference_nodes.matches(*node);
        const bool trn = !inf && spec.training_nodes.matches(*node);
        if (!inf && !trn) continue;
        if (claimed.count(node_name) != 0) {
            pass.problems.push_back("node " + node_name + " belongs to an earlier CapacityLoan");
            continue;
        }
        claimed.insert(node_name);
        pass.pool.insert(node_name);
        NodeView v;
        v.name = node_name;
        if (node->contains("status") && (*node)["status"].contains("allocatable")) {
            const json& allocatable = (*node)["status"]["allocatable"];
            if (allocatable.contains(spec.gpu_resource))
                v.gpus = std::max(0, int_of(allocatable[spec.gpu_resource]).value_or(0));
        }
        v.schedulable = !(node->contains("spec") && (*node)["spec"].value("unschedulable", false));
        if (inf) {
            const auto labels = kube::labels_of(*node);
            auto l = labels.find(kLoanedLabel);
            v.loaned = l != labels.end() && l->second == "true";
            v.returned = has_taint(*node, kReturnedTaint);
            pass.inference_objects[node_name] = node;
            pass.in.inference.push_back(std::move(v));
        } else {
            pass.in.training.push_back(std::move(v));
        }
    }
}

void Controller::read_jobs(Pass& pass) {
    std::set<std::string> seen_jobs;
    for (const JobSource& source : pass.parsed.spec.jobs) {
        json objects;
        try {
            objects = cluster_->jobs(source.resource, source.ns, source.selector.to_string());
        } catch (const std::exception& e) {
            pass.problems.push_back("cannot list " + source.resource.plural + ": " + e.what());
            continue;
        }
        std::string kind = string_field(objects, "kind");
        if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
        for (const json& object : objects.value("items", json::array())) {
            const json& md = metadata(object);
            const std::string ns = string_field(md, "namespace"),
                              job_name = string_field(md, "name");
            const std::string key =
                source.resource.group + "/" + source.resource.plural + "/" + ns + "/" + job_name;
            if (!seen_jobs.insert(key).second) continue;
            Job job;
            job.resource = source.resource;
            job.resource.kind =
                string_field(object, "kind").empty() ? kind : string_field(object, "kind");
            job.ref = ref(source.resource.api_version(), job.resource.kind, object);
            job.ref.ns = ns;
            JobView& v = job.view;
            v.ns = ns;
            v.name = job_name;
            v.elastic = true;
            v.min_replicas = source.min_replicas;
            v.max_replicas = source.max_replicas;
            v.gpus_per_worker = source.gpus_per_worker;
            v.remaining_seconds = source.remaining_seconds;
            const std::string who = ns + "/" + job_name;
            apply_job_annotations(md.value("annotations", json::object()), source, who, v,
                                  pass.problems);
            try {
                const json scale = cluster_->scale(source.resource, ns, job_name);
                v.replicas = scale.contains("spec") ? scale["spec"].value("replicas", 0) : 0;
                const std::string selector = scale.contains("status")
                                                 ? string_field(scale["status"], "selector")
                                                 : std::string();
                try {
                    if (!selector.empty()) job.pods = kube::parse_label_selector(selector);
                } catch (const std::invalid_argument&) {
                }
                if (!job.pods)
                    pass.problems.push_back(
                        who + ": its scale subresource has no usable status.selector");
            } catch (const std::exception& e) {
                pass.problems.push_back(who + ": cannot read its scale subresource: " + e.what());
                continue;
            }
            pass.jobs.push_back(std::move(job));
        }
    }
    for (const Job& j : pass.jobs) pass.in.jobs.push_back(j.view);
}

void Controller::read_pods(Pass& pass, const Objects& pods) {
    const LoanSpec& spec = pass.parsed.spec;
    LoanInputs& in = pass.in;
    std::map<std::string, std::size_t> inelastic;  // controller (ns/kind/name) or pod -> job index
    for (const auto& pod : pods) {
        const json& md = metadata(*pod);
        if (md.contains("deletionTimestamp") && !md["deletionTimestamp"].is_null()) continue;
        const std::string node =
            pod->contains("spec") ? string_field((*pod)["spec"], "nodeName") : std::string();
        if (node.empty()) continue;
        PodView p;
        p.ns = string_field(md, "namespace");
        p.name = string_field(md, "name");
        p.node = node;
        p.gpus = pod_requests(*pod, spec.gpu_resource);
        const auto owner = controller_of(*pod);
        const auto labels = kube::labels_of(*pod);
        if (owner && string_field(*owner, "kind") == "DaemonSet") {
            p.role = PodRole::System;
        } else {
            for (std::size_t j = 0; j < pass.jobs.size() && !p.job; ++j) {
                const Job& job = pass.jobs[j];
                if (job.pods && job.view.ns == p.ns && job.pods->matches(labels)) p.job = j;
            }
            if (p.job) {
                p.role = PodRole::Training;
            } else if (spec.training_pods && spec.training_pods->matches(labels)) {
                // An inelastic job: the pods of one controller, or a lone pod.
                p.role = PodRole::Training;
                const std::string group = owner ? p.ns + "/" + string_field(*owner, "kind") + "/" +
                                                      string_field(*owner, "name")
                                                : p.ns + "/Pod/" + p.name;
                auto [g, added] = inelastic.try_emplace(group, in.jobs.size());
                if (added) {
                    JobView v;
                    v.ns = p.ns;
                    v.name = owner ? string_field(*owner, "name") : p.name;
                    in.jobs.push_back(v);
                }
                JobView& v = in.jobs[g->second];
                v.gpus_per_worker = std::max(v.gpus_per_worker, p.gpus);
                ++v.replicas;
                v.min_replicas = v.max_replicas = v.replicas;
                p.job = g->second;
            }
        }
        if (pass.pool.count(node) == 0 && p.role != PodRole::Training) continue;
        pass.pod_refs[in.pods.size()] = ref("v1", "Pod", *pod);
        in.pods.push_back(std::move(p));
    }
}

void Controller::mark_nodes(Pass& pass, double now, ReconcileSummary& sum) {
    const LoanInputs& in = pass.in;
    const LoanPlan& plan = pass.plan;
    std::set<std::size_t> returning(plan.ret.begin(), plan.ret.end());
    std::set<std::size_t> loaning(plan.loan.begin(), plan.loan.end());
    std::map<std::size_t, std::string> why;
    for (const policy::ReclaimStep& s : plan.reclaim) {
        why[s.server] = s.kind == policy::ReclaimKind::empty ? "no training pods on it"
                        : s.kind == policy::ReclaimKind::shrink
                            ? "only elastic jobs' extra workers on it"
                            : "least preemption cost " + json(s.cost).dump();
    }
    for (std::size_t i = 0; i < in.inference.size(); ++i) {
        const NodeView& n = in.inference[i];
        const NodeState target = plan.loaned_after[i]     ? NodeState::Loaned
                                 : plan.returned_after[i] ? NodeState::Returned
                                                          : NodeState::Inference;
        const auto& object = pass.inference_objects[n.name];
        const json patch = node_patch(*object, target);
        const kube::ObjectReference node_ref = ref("v1", "Node", *object);
        if (!patch.is_null()) {
            try {
                json after = cluster_->patch_node(n.name, patch);
                if (after.is_object()) {
                    trim_node(after);
                    written_nodes_[n.name] = std::make_shared<const json>(std::move(after));
                }
            } catch (const std::exception& e) {
                ++sum.errors;
                pass.problems.push_back("cannot mark node " + n.name + " " + to_string(target) +
                                        ": " + e.what());
                log("warning", "cannot mark node",
                    {{"node", n.name}, {"state", to_string(target)}, {"error", e.what()}});
                continue;
            }
        }
        pass.marked.insert(n.name);
        if (loaning.count(i) != 0) {
            const std::string msg =
                "loaned to training by CapacityLoan " + pass.name + " (" + std::to_string(n.gpus) +
                " GPUs; " + std::to_string(plan.target_loaned) + " inference nodes may be loaned)";
            event(node_ref, kube::EventType::Normal, "Loaned", msg);
            decide(*pass.state, now, "Loan", "node/" + n.name, msg);
            log("info", "node loaned", {{"capacityloan", pass.name}, {"node", n.name}});
            ++sum.loaned;
        } else if (returning.count(i) != 0) {
            const std::string msg =
                "returned to inference by CapacityLoan " + pass.name + ": " + why[i];
            event(node_ref, kube::EventType::Normal, "Returned", msg);
            decide(*pass.state, now, "Return", "node/" + n.name, msg);
            log("info", "node returned",
                {{"capacityloan", pass.name}, {"node", n.name}, {"reason", why[i]}});
            ++sum.returned;
        }
    }
}

void Controller::evict_pods(Pass& pass, double now, ReconcileSummary& sum) {
    const LoanInputs& in = pass.in;
    for (std::size_t p : pass.plan.evict) {
        const PodView& pod = in.pods[p];
        // A node that could not be tainted loses no pod in this pass.
        if (pass.marked.count(pod.node) == 0) continue;
        const kube::ObjectReference& pod_ref = pass.pod_refs[p];
        const std::string job =
            pod.job ? in.jobs[*pod.job].ns + "/" + in.jobs[*pod.job].name : std::string("?");
        try {
            cluster_->evict(pod.ns, pod.name);
        } catch (const kube::TooManyRequests& e) {
            event(pod_ref, kube::EventType::Warning, "EvictionBlocked",
                  "node " + pod.node + " was returned to inference, but a disruption budget " +
                      "blocks the eviction: " + e.api_message());
            continue;
        } catch (const kube::NotFound&) {
            continue;
        } catch (const std::exception& e) {
            ++sum.errors;
            pass.problems.push_back("cannot evict " + pod.ns + "/" + pod.name + ": " + e.what());
            continue;
        }
        const std::string msg = "evicted training pod " + pod.ns + "/" + pod.name + " (job " + job +
                                ") from node " + pod.node + ", returned to inference";
        event(pod_ref, kube::EventType::Normal, "Evicted", msg);
        if (auto node = pass.inference_objects.find(pod.node); node != pass.inference_objects.end())
            event(ref("v1", "Node", *node->second), kube::EventType::Normal, "Evicted", msg);
        decide(*pass.state, now, "Evict", "pod/" + pod.ns + "/" + pod.name, msg);
        log("info", "pod evicted",
            {{"capacityloan", pass.name}, {"pod", pod.ns + "/" + pod.name}, {"node", pod.node}});
        ++sum.evicted;
    }
}

void Controller::scale_jobs(Pass& pass, double now, ReconcileSummary& sum) {
    for (std::size_t j = 0; j < pass.jobs.size(); ++j) {
        const JobView& v = pass.in.jobs[j];
        const Job& job = pass.jobs[j];
        const int want = pass.plan.replicas[j];
        if (want == v.replicas) continue;
        try {
            cluster_->set_scale(job.resource, v.ns, v.name, want);
        } catch (const std::exception& e) {
            ++sum.errors;
            pass.problems.push_back("cannot scale " + v.ns + "/" + v.name + ": " + e.what());
            continue;
        }
        const std::string msg =
            "replicas " + std::to_string(v.replicas) + " -> " + std::to_string(want) +
            " by CapacityLoan " + pass.name + " (" + std::to_string(pass.plan.spare_gpus) +
            " GPUs spare above the minimums; min " + std::to_string(v.min_replicas) + ", max " +
            std::to_string(v.max_replicas) + ")";
        event(job.ref, kube::EventType::Normal, "Scaled", msg);
        decide(*pass.state, now, "Scale", job.resource.plural + "/" + v.ns + "/" + v.name, msg);
        log("info", "job scaled",
            {{"capacityloan", pass.name},
             {"job", v.ns + "/" + v.name},
             {"from", v.replicas},
             {"to", want}});
        ++sum.scaled;
    }
}

void Controller::report(Pass& pass) {
    const LoanInputs& in = pass.in;
    const LoanPlan& plan = pass.plan;
    json elastic = json::array();
    for (std::size_t j = 0; j < pass.jobs.size(); ++j) {
        const JobView& v = in.jobs[j];
        elastic.push_back({{"namespace", v.ns},
                           {"name", v.name},
                           {"resource", pass.jobs[j].resource.plural},
                           {"replicas", plan.replicas[j]},
                           {"minReplicas", v.min_replicas},
                           {"maxReplicas", v.max_replicas},
                           {"gpusPerWorker", v.gpus_per_worker}});
    }
    json loaned = json::array(), returned = json::array();
    int loaned_gpus = 0, idle_nodes = 0;
    for (std::size_t i = 0; i < in.inference.size(); ++i) {
        if (plan.loaned_after[i]) {
            loaned.push_back(in.inference[i].name);
            loaned_gpus += in.inference[i].gpus;
        }
        if (plan.returned_after[i]) returned.push_back(in.inference[i].name);
        if (!plan.loaned_after[i] && idle(in.inference[i].name, in.pods)) ++idle_nodes;
    }
    pass.status = {{"requiredServers", pass.parsed.spec.required_servers},
                   {"inferenceNodes", in.inference.size()},
                   {"trainingNodes", in.training.size()},
                   {"idleNodes", idle_nodes},
                   {"loanedCount", loaned.size()},
                   {"loanedNodes", loaned},
                   {"returnedNodes", returned},
                   {"loanedGPUs", loaned_gpus},
                   {"spareGPUs", plan.spare_gpus},
                   {"elasticJobs", elastic}};
}

void Controller::update_status(Pass& pass, double now, ReconcileSummary& sum) {
    // Ready says whether the spec is valid and the last pass did everything it decided.
    const json& old_status = pass.old_status;
    json& status = pass.status;
    std::string reason = "Reconciled", message;
    const bool ready = pass.problems.empty();
    if (!pass.parsed.ok())
        reason = "InvalidSpec";
    else if (!ready)
        reason = "Problems";
    for (const std::string& p : pass.problems) message += (message.empty() ? "" : "; ") + p;
    if (ready)
        message = std::to_string(status.value("loanedCount", 0)) + " of " +
                  std::to_string(status.value("inferenceNodes", 0)) + " inference nodes loaned";
    if (message.size() > 1024) message = message.substr(0, 1021) + "...";
    json condition = {{"type", "Ready"},
                      {"status", ready ? "True" : "False"},
                      {"reason", reason},
                      {"message", message},
                      {"observedGeneration", pass.generation},
                      {"lastTransitionTime", kube::format_time(now)}};
    for (const json& c : old_status.value("conditions", json::array()))
        if (string_field(c, "type") == "Ready" &&
            string_field(c, "status") == condition["status"] && c.contains("lastTransitionTime"))
            condition["lastTransitionTime"] = c["lastTransitionTime"];
    if (!pass.parsed.ok()) {
        // Keep what the status said about the cluster; only the condition changes.
        status = old_status;
        status.erase("conditions");
        status.erase("lastDecisions");
        status.erase("observedGeneration");
    }
    status["observedGeneration"] = pass.generation;
    status["conditions"] = json::array({condition});
    status["lastDecisions"] = pass.state->decisions;
    if (!pass.problems.empty())
        log("warning", "capacity loan problems",
            {{"capacityloan", pass.name}, {"problems", pass.problems}});

    if (status == old_status) return;
    try {
        // A merge patch replaces lists whole; fields no longer reported are cleared.
        json patch_status = status;
        for (auto o = old_status.begin(); o != old_status.end(); ++o)
            if (!patch_status.contains(o.key())) patch_status[o.key()] = nullptr;
        cluster_->patch_status(pass.name, patch_status);
        ++sum.status_updates;
    } catch (const std::exception& e) {
        ++sum.errors;
        log("warning", "cannot update CapacityLoan status",
            {{"capacityloan", pass.name}, {"error", e.what()}});
    }
}

}  // namespace phasescale::loan
