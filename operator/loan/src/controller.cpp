#include "phasescale/loan/controller.hpp"

#include <phasescale/kube/time.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ctime>

namespace phasescale::loan {

namespace {

using json = nlohmann::json;
using kube::format_time;

std::string str(const json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

const json& metadata(const json& o) {
    static const json empty = json::object();
    return o.is_object() && o.contains("metadata") && o["metadata"].is_object() ? o["metadata"] : empty;
}

// An int, or nothing for anything that is not one or does not fit (never a wrapped value).
std::optional<int> int_of(const json& v) {
    auto fits = [](double d) -> std::optional<int> {
        if (!(d >= std::numeric_limits<int>::min() && d <= std::numeric_limits<int>::max())) return std::nullopt;
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

kube::ObjectReference ref(const std::string& api_version, const std::string& kind, const json& object) {
    kube::ObjectReference r;
    r.api_version = api_version;
    r.kind = kind;
    const json& md = metadata(object);
    r.ns = str(md, "namespace");
    r.name = str(md, "name");
    r.uid = str(md, "uid");
    return r;
}

bool has_taint(const json& node, const char* key) {
    if (!node.contains("spec") || !node["spec"].contains("taints") || !node["spec"]["taints"].is_array()) return false;
    for (const json& t : node["spec"]["taints"])
        if (str(t, "key") == key && str(t, "effect") == "NoSchedule") return true;
    return false;
}

// One elastic job as the controller knows it: its view, where to scale it and which pods are its.
struct Job {
    JobView view;
    kube::Resource resource;
    kube::ObjectReference ref;
    std::optional<LabelSelector> pods;
};

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
    if (node.contains("status") && node["status"].contains("allocatable"))
        out["status"] = {{"allocatable", node["status"]["allocatable"]}};
    node = std::move(out);
}

void trim_pod(json& pod) {
    const json& md = metadata(pod);
    json out = {{"metadata", json::object()}, {"spec", json::object()}};
    for (const char* k : {"name", "namespace", "uid", "labels", "ownerReferences", "deletionTimestamp"})
        if (md.contains(k)) out["metadata"][k] = md[k];
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
    : kube_(std::move(kube)), options_(std::move(options)), hooks_(std::move(hooks)),
      events_(kube_, options_.field_manager) {
    kube::InformerOptions node_options;
    node_options.transform = trim_node;
    nodes_ = std::make_unique<kube::Informer>(kube_, kube::resources::nodes, node_options);
    kube::InformerOptions pod_options;
    pod_options.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
    pod_options.transform = trim_pod;
    pods_ = std::make_unique<kube::Informer>(kube_, kube::resources::pods, pod_options);
}

Controller::~Controller() { stop(); }

void Controller::start() {
    nodes_->start();
    pods_->start();
}

void Controller::stop() {
    pods_->stop();
    nodes_->stop();
}

bool Controller::wait_for_sync(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!nodes_->wait_for_sync(timeout)) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return pods_->wait_for_sync(std::max(left, std::chrono::milliseconds(0)));
}

// A job's annotations narrow what its CapacityLoan entry says, never beyond it: replicas within
// [1, the entry's maxReplicas] (a tenant cannot make one job take every spare GPU, or the
// planner's tables huge), GPUs per worker within [1, 1024]; anything else is a problem, and the
// entry's value stands.
void apply_job_annotations(const json& annotations, const JobSource& source, const std::string& who, JobView& v,
                           std::vector<std::string>& problems) {
    auto annotation = [&](const char* k) -> std::optional<std::string> {
        if (annotations.is_object() && annotations.contains(k) && annotations[k].is_string())
            return annotations[k].get<std::string>();
        return std::nullopt;
    };
    auto int_annotation = [&](const char* k, int& out, int lo, int hi) {
        if (auto a = annotation(k)) {
            const std::string shown = a->size() > 40 ? a->substr(0, 40) + "..." : *a;
            auto n = int_of(json(*a));
            if (n && *n >= lo && *n <= hi) out = *n;
            else problems.push_back(who + ": annotation " + k + " (\"" + shown + "\") is not an integer in [" +
                                    std::to_string(lo) + ", " + std::to_string(hi) + "], the CapacityLoan's limits");
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
        if (d && *d >= 0 && *d <= 1e9) v.remaining_seconds = *d;
        else problems.push_back(who + ": annotation " + std::string(kRemainingSecondsAnnotation) + " is not a number in [0, 1e9]");
    }
    if (auto a = annotation(kScalingCurveAnnotation)) {
        if (auto c = parse_curve(*a)) v.curve = *c;
        else problems.push_back(who + ": annotation " + std::string(kScalingCurveAnnotation) + " is malformed");
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
                const double now =
                    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

void Controller::log(const std::string& level, const std::string& message, const json& fields) const {
    if (hooks_.log) hooks_.log(level, message, fields);
}

void Controller::event(const kube::ObjectReference& object, kube::EventType type, const std::string& reason,
                       const std::string& message) {
    try {
        events_.record(object, type, reason, message);
    } catch (const std::exception& e) {
        log("warning", "cannot record event", {{"object", object.name}, {"reason", reason}, {"error", e.what()}});
    }
}

void Controller::decide(LoanState& state, double now, const std::string& action, const std::string& object,
                        const std::string& message) {
    state.decisions.push_back({{"time", format_time(now)}, {"action", action}, {"object", object}, {"message", message}});
    while (state.decisions.size() > options_.max_recent_decisions) state.decisions.erase(state.decisions.begin());
}

ReconcileSummary Controller::reconcile(double now) {
    ReconcileSummary sum;
    json list;
    try {
        list = kube_.list(resources::capacity_loans, "");
    } catch (const std::exception& e) {
        log("error", "cannot list CapacityLoans", {{"error", e.what()}});
        ++sum.errors;
        return sum;
    }
    std::vector<json> items = list.value("items", json::array());
    std::sort(items.begin(), items.end(),
              [](const json& a, const json& b) { return str(metadata(a), "name") < str(metadata(b), "name"); });
    std::set<std::string> claimed;  // nodes owned by an earlier CapacityLoan
    std::set<std::string> names;
    for (const json& loan : items) {
        names.insert(str(metadata(loan), "name"));
        reconcile_one(loan, claimed, now, sum);
        ++sum.loans;
    }
    for (auto it = loans_.begin(); it != loans_.end();) it = names.count(it->first) ? std::next(it) : loans_.erase(it);
    return sum;
}

void Controller::reconcile_one(const json& loan, std::set<std::string>& claimed, double now, ReconcileSummary& sum) {
    const std::string name = str(metadata(loan), "name");
    const long long generation = metadata(loan).value("generation", 0LL);
    const json old_status = loan.value("status", json::object());
    auto [it, fresh] = loans_.try_emplace(name);
    LoanState& state = it->second;
    if (fresh && old_status.contains("lastDecisions") && old_status["lastDecisions"].is_array())
        state.decisions = old_status["lastDecisions"];

    std::vector<std::string> problems;
    json status = json::object();
    const ParsedLoan parsed = parse_loan(loan);
    if (parsed.ok()) {
        const LoanSpec& spec = parsed.spec;
        LoanInputs in;
        in.required_servers = spec.required_servers;
        in.headroom_servers = spec.headroom_servers;

        // Nodes of the two pools (an inference node is never a training node too).
        std::map<std::string, kube::Store::ObjectPtr> inference_objects;
        std::set<std::string> pool;
        auto nodes = nodes_->store().list();
        std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
            return str(metadata(*a), "name") < str(metadata(*b), "name");
        });
        for (const auto& node : nodes) {
            const std::string node_name = str(metadata(*node), "name");
            const bool inf = spec.inference_nodes.matches(*node);
            const bool trn = !inf && spec.training_nodes.matches(*node);
            if (!inf && !trn) continue;
            if (claimed.count(node_name) != 0) {
                problems.push_back("node " + node_name + " belongs to an earlier CapacityLoan");
                continue;
            }
            claimed.insert(node_name);
            pool.insert(node_name);
            NodeView v;
            v.name = node_name;
            if (node->contains("status") && (*node)["status"].contains("allocatable") &&
                (*node)["status"]["allocatable"].contains(spec.gpu_resource))
                v.gpus = std::max(0, int_of((*node)["status"]["allocatable"][spec.gpu_resource]).value_or(0));
            v.schedulable = !(node->contains("spec") && (*node)["spec"].value("unschedulable", false));
            if (inf) {
                const auto labels = labels_of(*node);
                auto l = labels.find(kLoanedLabel);
                v.loaned = l != labels.end() && l->second == "true";
                v.returned = has_taint(*node, kReturnedTaint);
                inference_objects[node_name] = node;
                in.inference.push_back(std::move(v));
            } else {
                in.training.push_back(std::move(v));
            }
        }

        // Elastic jobs, with their scale subresources.
        std::vector<Job> jobs;
        std::set<std::string> seen_jobs;
        for (const JobSource& source : spec.jobs) {
            json objects;
            kube::ListOptions lo;
            lo.label_selector = source.selector.to_string();
            try {
                objects = kube_.list(source.resource, source.ns, lo);
            } catch (const std::exception& e) {
                problems.push_back("cannot list " + source.resource.plural + ": " + e.what());
                continue;
            }
            std::string kind = str(objects, "kind");
            if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
            for (const json& object : objects.value("items", json::array())) {
                const json& md = metadata(object);
                const std::string ns = str(md, "namespace"), job_name = str(md, "name");
                const std::string key = source.resource.group + "/" + source.resource.plural + "/" + ns + "/" + job_name;
                if (!seen_jobs.insert(key).second) continue;
                Job job;
                job.resource = source.resource;
                job.resource.kind = str(object, "kind").empty() ? kind : str(object, "kind");
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
                apply_job_annotations(md.value("annotations", json::object()), source, who, v, problems);
                try {
                    const json scale = kube_.get_scale(source.resource, ns, job_name);
                    v.replicas = scale.contains("spec") ? scale["spec"].value("replicas", 0) : 0;
                    const std::string selector =
                        scale.contains("status") ? str(scale["status"], "selector") : std::string();
                    try {
                        if (!selector.empty()) job.pods = kube::parse_label_selector(selector);
                    } catch (const std::invalid_argument&) {
                    }
                    if (!job.pods) problems.push_back(who + ": its scale subresource has no usable status.selector");
                } catch (const std::exception& e) {
                    problems.push_back(who + ": cannot read its scale subresource: " + e.what());
                    continue;
                }
                jobs.push_back(std::move(job));
            }
        }
        for (const Job& j : jobs) in.jobs.push_back(j.view);

        // Pods on the pools' nodes, and training pods wherever they run.
        std::map<std::string, std::size_t> inelastic;  // controller (ns/kind/name) or pod -> job index
        std::map<std::size_t, kube::ObjectReference> pod_refs;
        for (const auto& pod : pods_->store().list()) {
            const json& md = metadata(*pod);
            if (md.contains("deletionTimestamp") && !md["deletionTimestamp"].is_null()) continue;
            const std::string node = pod->contains("spec") ? str((*pod)["spec"], "nodeName") : std::string();
            if (node.empty()) continue;
            PodView p;
            p.ns = str(md, "namespace");
            p.name = str(md, "name");
            p.node = node;
            p.gpus = pod_requests(*pod, spec.gpu_resource);
            const auto owner = controller_of(*pod);
            const auto labels = labels_of(*pod);
            if (owner && str(*owner, "kind") == "DaemonSet") {
                p.role = PodRole::System;
            } else {
                for (std::size_t j = 0; j < jobs.size() && !p.job; ++j)
                    if (jobs[j].pods && jobs[j].view.ns == p.ns && jobs[j].pods->matches(labels)) p.job = j;
                if (p.job) {
                    p.role = PodRole::Training;
                } else if (spec.training_pods && spec.training_pods->matches(labels)) {
                    p.role = PodRole::Training;
                    const std::string group = owner ? p.ns + "/" + str(*owner, "kind") + "/" + str(*owner, "name")
                                                    : p.ns + "/Pod/" + p.name;
                    auto [g, added] = inelastic.try_emplace(group, in.jobs.size());
                    if (added) {
                        JobView v;
                        v.ns = p.ns;
                        v.name = owner ? str(*owner, "name") : p.name;
                        in.jobs.push_back(v);
                    }
                    JobView& v = in.jobs[g->second];
                    v.gpus_per_worker = std::max(v.gpus_per_worker, p.gpus);
                    ++v.replicas;
                    v.min_replicas = v.max_replicas = v.replicas;
                    p.job = g->second;
                }
            }
            if (pool.count(node) == 0 && p.role != PodRole::Training) continue;
            pod_refs[in.pods.size()] = ref("v1", "Pod", *pod);
            in.pods.push_back(std::move(p));
        }

        const LoanPlan plan = loan::plan(in);

        // Nodes: every inference node gets the marks of its state; returns and loans are events.
        std::set<std::size_t> returning(plan.ret.begin(), plan.ret.end()), loaning(plan.loan.begin(), plan.loan.end());
        std::map<std::size_t, std::string> why;
        for (const policy::ReclaimStep& s : plan.reclaim) {
            why[s.server] = s.kind == policy::ReclaimKind::empty    ? "no training pods on it"
                            : s.kind == policy::ReclaimKind::shrink ? "only elastic jobs' extra workers on it"
                                                                    : "least preemption cost " + json(s.cost).dump();
        }
        std::set<std::string> marked;  // inference nodes that carry their state's marks after this pass
        for (std::size_t i = 0; i < in.inference.size(); ++i) {
            const NodeView& n = in.inference[i];
            const NodeState target = plan.loaned_after[i]     ? NodeState::Loaned
                                     : plan.returned_after[i] ? NodeState::Returned
                                                              : NodeState::Inference;
            const auto& object = inference_objects[n.name];
            const json patch = node_patch(*object, target);
            const kube::ObjectReference node_ref = ref("v1", "Node", *object);
            if (!patch.is_null()) {
                try {
                    kube::PatchOptions po;
                    po.field_manager = options_.field_manager;
                    kube_.patch(kube::resources::nodes, "", n.name, patch, kube::PatchType::Merge, po);
                } catch (const std::exception& e) {
                    ++sum.errors;
                    problems.push_back("cannot mark node " + n.name + " " + to_string(target) + ": " + e.what());
                    log("warning", "cannot mark node", {{"node", n.name}, {"state", to_string(target)}, {"error", e.what()}});
                    continue;
                }
            }
            marked.insert(n.name);
            if (loaning.count(i) != 0) {
                const std::string msg = "loaned to training by CapacityLoan " + name + " (" + std::to_string(n.gpus) +
                                        " GPUs; " + std::to_string(plan.target_loaned) + " inference nodes may be loaned)";
                event(node_ref, kube::EventType::Normal, "Loaned", msg);
                decide(state, now, "Loan", "node/" + n.name, msg);
                log("info", "node loaned", {{"capacityloan", name}, {"node", n.name}});
                ++sum.loaned;
            } else if (returning.count(i) != 0) {
                const std::string msg = "returned to inference by CapacityLoan " + name + ": " + why[i];
                event(node_ref, kube::EventType::Normal, "Returned", msg);
                decide(state, now, "Return", "node/" + n.name, msg);
                log("info", "node returned", {{"capacityloan", name}, {"node", n.name}, {"reason", why[i]}});
                ++sum.returned;
            }
        }

        // Evictions: the training pods on returned nodes, once the node keeps new ones off.
        for (std::size_t p : plan.evict) {
            const PodView& pod = in.pods[p];
            if (marked.count(pod.node) == 0) continue;
            const kube::ObjectReference& pod_ref = pod_refs[p];
            const std::string job = pod.job ? in.jobs[*pod.job].ns + "/" + in.jobs[*pod.job].name : std::string("?");
            try {
                kube_.evict(pod.ns, pod.name);
            } catch (const kube::TooManyRequests& e) {
                event(pod_ref, kube::EventType::Warning, "EvictionBlocked",
                      "node " + pod.node + " was returned to inference, but a disruption budget blocks the eviction: " +
                          e.api_message());
                continue;
            } catch (const kube::NotFound&) {
                continue;
            } catch (const std::exception& e) {
                ++sum.errors;
                problems.push_back("cannot evict " + pod.ns + "/" + pod.name + ": " + e.what());
                continue;
            }
            const std::string msg = "evicted training pod " + pod.ns + "/" + pod.name + " (job " + job + ") from node " +
                                    pod.node + ", returned to inference";
            event(pod_ref, kube::EventType::Normal, "Evicted", msg);
            if (auto node = inference_objects.find(pod.node); node != inference_objects.end())
                event(ref("v1", "Node", *node->second), kube::EventType::Normal, "Evicted", msg);
            decide(state, now, "Evict", "pod/" + pod.ns + "/" + pod.name, msg);
            log("info", "pod evicted", {{"capacityloan", name}, {"pod", pod.ns + "/" + pod.name}, {"node", pod.node}});
            ++sum.evicted;
        }

        // Elastic jobs' replicas.
        json elastic = json::array();
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            const JobView& v = in.jobs[j];
            const int want = plan.replicas[j];
            if (want != v.replicas) {
                try {
                    kube_.set_scale(jobs[j].resource, v.ns, v.name, want);
                    const std::string msg = "replicas " + std::to_string(v.replicas) + " -> " + std::to_string(want) +
                                            " by CapacityLoan " + name + " (" + std::to_string(plan.spare_gpus) +
                                            " GPUs spare above the minimums; min " + std::to_string(v.min_replicas) +
                                            ", max " + std::to_string(v.max_replicas) + ")";
                    event(jobs[j].ref, kube::EventType::Normal, "Scaled", msg);
                    decide(state, now, "Scale", jobs[j].resource.plural + "/" + v.ns + "/" + v.name, msg);
                    log("info", "job scaled", {{"capacityloan", name}, {"job", v.ns + "/" + v.name}, {"from", v.replicas}, {"to", want}});
                    ++sum.scaled;
                } catch (const std::exception& e) {
                    ++sum.errors;
                    problems.push_back("cannot scale " + v.ns + "/" + v.name + ": " + e.what());
                }
            }
            elastic.push_back({{"namespace", v.ns},
                               {"name", v.name},
                               {"resource", jobs[j].resource.plural},
                               {"replicas", want},
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
        status = {{"requiredServers", spec.required_servers},
                  {"inferenceNodes", in.inference.size()},
                  {"trainingNodes", in.training.size()},
                  {"idleNodes", idle_nodes},
                  {"loanedCount", loaned.size()},
                  {"loanedNodes", loaned},
                  {"returnedNodes", returned},
                  {"loanedGPUs", loaned_gpus},
                  {"spareGPUs", plan.spare_gpus},
                  {"elasticJobs", elastic}};
    } else {
        problems.push_back(parsed.message());
    }

    // Conditions: Ready says whether the spec is valid and the last pass did everything it decided.
    std::string reason = "Reconciled", message;
    bool ready = problems.empty();
    if (!parsed.ok()) reason = "InvalidSpec";
    else if (!ready) reason = "Problems";
    for (const std::string& p : problems) message += (message.empty() ? "" : "; ") + p;
    if (ready)
        message = std::to_string(status.value("loanedCount", 0)) + " of " + std::to_string(status.value("inferenceNodes", 0)) +
                  " inference nodes loaned";
    if (message.size() > 1024) message = message.substr(0, 1021) + "...";
    json condition = {{"type", "Ready"},
                      {"status", ready ? "True" : "False"},
                      {"reason", reason},
                      {"message", message},
                      {"observedGeneration", generation},
                      {"lastTransitionTime", format_time(now)}};
    for (const json& c : old_status.value("conditions", json::array()))
        if (str(c, "type") == "Ready" && str(c, "status") == condition["status"] && c.contains("lastTransitionTime"))
            condition["lastTransitionTime"] = c["lastTransitionTime"];
    if (!parsed.ok()) {
        // Keep what the status said about the cluster; only the condition changes.
        status = old_status;
        status.erase("conditions");
        status.erase("lastDecisions");
        status.erase("observedGeneration");
    }
    status["observedGeneration"] = generation;
    status["conditions"] = json::array({condition});
    status["lastDecisions"] = state.decisions;
    if (!problems.empty()) log("warning", "capacity loan problems", {{"capacityloan", name}, {"problems", problems}});

    if (status != old_status) {
        try {
            kube::PatchOptions po;
            po.subresource = "status";
            po.field_manager = options_.field_manager;
            // A merge patch replaces lists whole; fields no longer reported are cleared.
            json patch_status = status;
            for (auto o = old_status.begin(); o != old_status.end(); ++o)
                if (!patch_status.contains(o.key())) patch_status[o.key()] = nullptr;
            kube_.patch(resources::capacity_loans, "", name, json{{"status", patch_status}}, kube::PatchType::Merge, po);
            ++sum.status_updates;
        } catch (const std::exception& e) {
            ++sum.errors;
            log("warning", "cannot update CapacityLoan status", {{"capacityloan", name}, {"error", e.what()}});
        }
    }
}

}  // namespace phasescale::loan
