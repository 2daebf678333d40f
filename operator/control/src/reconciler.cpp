#include "phasescale/control/reconciler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <phasescale/kube/json.hpp>
#include <phasescale/model/error.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/policy/actuator.hpp>

#include "phasescale/control/pod.hpp"
#include "phasescale/control/quantity.hpp"

namespace phasescale::control {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Samples a restarted operator reads back per container: enough for the model's history and the
// debounce of the default model and spec.
constexpr int kWarmUpSamples = 8;

long long generation_of(const json& o) {
    if (o.contains("metadata") && o["metadata"].contains("generation") &&
        o["metadata"]["generation"].is_number_integer())
        return o["metadata"]["generation"].get<long long>();
    return 0;
}

// A blocked resize's reason (decide_pod's Action::Blocked) as the resizes metric names it.
std::string metric_reason(const std::string& reason) {
    static const std::map<std::string, std::string> known = {
        {"ResizeInfeasible", "infeasible"},
        {"RestartRequired", "restart_required"},
        {"QoSChange", "qos_change"},
        {"NodeCapacity", "node_capacity"}};
    const auto it = known.find(reason);
    return it != known.end() ? it->second : "other";
}

// A refused resize's error as the resizes metric names it.
std::string error_reason(const std::string& error) {
    return error.find("onflict") != std::string::npos || error.find("409") != std::string::npos
               ? "conflict"
               : "api_error";
}

std::optional<std::string> label(const json& pod, const char* key) {
    if (!pod.contains("metadata") || !pod["metadata"].contains("labels")) return std::nullopt;
    const json& l = pod["metadata"]["labels"];
    if (!l.is_object() || !l.contains(key) || !l[key].is_string()) return std::nullopt;
    return l[key].get<std::string>();
}

std::optional<std::string> annotation(const json& pod, const char* key) {
    if (!pod.contains("metadata") || !pod["metadata"].contains("annotations")) return std::nullopt;
    const json& a = pod["metadata"]["annotations"];
    if (!a.is_object() || !a.contains(key) || !a[key].is_string()) return std::nullopt;
    return a[key].get<std::string>();
}

// The container's resources and status as a tracker input states them.
void set_resources(TrackerInput& in, const ContainerResources& c, const json& pod) {
    const policy::Allocation a = allocation_of(c);
    in.allocated = a.request;
    in.limits = a.limit;
    const ContainerStatus r = container_status(pod, c.name);
    in.restart_count = r.restart_count;
    in.last_oom_killed = r.last_oom_killed;
    in.applied_cpu_limit = r.applied_cpu_limit.value_or(0);
}

// Feeds a new tracker the container's recent samples (a range query's answer), in time order;
// then restores the phase the pod's label shows and when it began. The CPU limit is taken to
// change `now`: the operator before this one may have grown it within a rate window, and the
// shares of the next ticks, throttled under the old limit, would grow it once more.
void warm_up(ContainerTracker& tracker, const prom::FeatureHistory& history,
             const prom::ContainerKey& key, const ContainerResources& resources, const json& pod,
             double now) {
    const auto found = history.series.find(key);
    if (found == history.series.end()) return;
    const auto& series = found->second;             // per history.features
    std::map<long long, std::vector<double>> rows;  // by time (ms)
    for (std::size_t f = 0; f < series.size(); ++f)
        for (const prom::Sample& s : series[f]) {
            auto& row = rows[std::llround(s.time * 1000)];
            row.resize(history.features.size(), kNaN);
            row[f] = s.value;
        }
    auto column = [&](std::string_view feature) -> std::optional<std::size_t> {
        auto it = std::find(history.features.begin(), history.features.end(), feature);
        if (it == history.features.end()) return std::nullopt;
        return static_cast<std::size_t>(it - history.features.begin());
    };
    std::vector<std::optional<std::size_t>> columns;
    for (const std::string& f : tracker.model().features) columns.push_back(column(f));
    const auto cpu = column(prom::kCpuFeature), memory = column(prom::kMemoryFeature),
               throttled = column(prom::kThrottledFeature),
               throttled_cores = column(prom::kThrottledCoresFeature);
    TrackerInput in_force;  // the resources and status now, the same for every sample
    set_resources(in_force, resources, pod);
    for (const auto& [t, row] : rows) {
        TrackerInput in = in_force;
        in.timestamp = static_cast<double>(t) / 1000.0;
        for (const auto& c : columns) in.features.push_back(c ? row[*c] : kNaN);
        in.usage = {cpu ? row[*cpu] : kNaN, memory ? row[*memory] : kNaN};
        in.cpu_throttled = throttled ? row[*throttled] : kNaN;
        in.cpu_throttled_cores = throttled_cores ? row[*throttled_cores] : kNaN;
        tracker.step(in);
    }
    tracker.cpu_limits_unknown_before(now);
    // The phase the pod showed, by its name in this model, goes on showing (since when, if an
    // annotation says so: mode Off writes none).
    const auto shown = label(pod, kPhaseLabel);
    const auto since = annotation(pod, kPhaseSinceAnnotation);
    const auto& names = tracker.model().phase_names;
    const auto named = shown ? std::find(names.begin(), names.end(), *shown) : names.end();
    if (named != names.end())
        tracker.restore_shown(static_cast<int>(named - names.begin()),
                              since ? kube::parse_time(*since).value_or(0) : 0);
}

}  // namespace

namespace {

prom::ClientConfig with_timeout(prom::ClientConfig config, std::chrono::milliseconds timeout) {
    config.timeout = timeout;
    return config;
}

}  // namespace

Reconciler::Reconciler(kube::Client kube, prom::ClientConfig prom, ReconcilerOptions options,
                       ReconcilerHooks hooks)
    : Reconciler(kube_cluster_api(kube, options.field_manager),
                 prometheus_reader(with_timeout(std::move(prom), options.prometheus_timeout)),
                 std::move(options), std::move(hooks)) {
    kube_ = std::move(kube);
}

Reconciler::Reconciler(std::unique_ptr<ClusterApi> cluster, std::unique_ptr<MetricsReader> metrics,
                       ReconcilerOptions options, ReconcilerHooks hooks)
    : cluster_(std::move(cluster)),
      metrics_(std::move(metrics)),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      writes_(options_.write_workers) {
    try {
        default_model_ = std::make_shared<const model::PhaseModel>(
            model::resolve_model(model::kDefaultModelName));
    } catch (const std::exception& e) {
        default_model_error_ = e.what();
    }
}

Reconciler::~Reconciler() {
    stop();
}

void Reconciler::start() {
    if (!kube_ || !autoscaler_informers_.empty()) return;
    std::vector<std::string> namespaces = options_.namespaces;
    if (namespaces.empty()) namespaces.push_back("");
    for (const std::string& ns : namespaces) {
        kube::InformerOptions a;
        a.ns = ns;
        a.resync_period = std::chrono::milliseconds(0);
        autoscaler_informers_.push_back(
            std::make_unique<kube::Informer>(*kube_, kube::resources::phase_autoscalers, a));
        if (options_.pods) continue;  // shared
        kube::InformerOptions p;
        p.ns = ns;
        p.field_selector = "status.phase=Running";
        p.transform = trim_pod;  // the cache keeps what the controller reads, not whole pods
        pod_informers_.push_back(
            std::make_unique<kube::Informer>(*kube_, kube::resources::pods, p));
    }
    if (!options_.nodes) {  // cluster-scoped: one for all namespaces
        kube::InformerOptions n;
        n.transform = trim_node;  // name and size only
        node_informer_ = std::make_unique<kube::Informer>(*kube_, kube::resources::nodes, n);
    }
    for (auto& i : autoscaler_informers_) i->start();
    for (auto& i : pod_informers_) i->start();
    if (node_informer_) node_informer_->start();
}

void Reconciler::stop() {
    for (auto& i : autoscaler_informers_) i->stop();
    for (auto& i : pod_informers_) i->stop();
    if (node_informer_) node_informer_->stop();
    drop_pending_writes();
    writes_.wait_idle();
}

std::size_t Reconciler::drop_pending_writes() {
    return writes_.drop_waiting();
}

void Reconciler::wait_for_writes() {
    writes_.wait_idle();
}

bool Reconciler::wait_for_sync(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const auto synced = [&](const kube::Informer& i) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        return i.wait_for_sync(std::max(left, std::chrono::milliseconds(0)));
    };
    for (const auto* list : {&autoscaler_informers_, &pod_informers_})
        for (const auto& i : *list)
            if (!synced(*i)) return false;
    if (node_informer_ && !synced(*node_informer_)) return false;
    if (options_.nodes && !synced(*options_.nodes)) return false;
    return !options_.pods || synced(*options_.pods);
}

void Reconciler::log(const std::string& level, const std::string& message,
                     const json& fields) const {
    if (hooks_.log) hooks_.log(level, message, fields);
}

template <class F>
auto Reconciler::api(const char* verb, F&& f) -> decltype(f()) {
    const auto start = std::chrono::steady_clock::now();
    auto done = [&](bool ok) {
        if (hooks_.api_request)
            hooks_.api_request(
                verb,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                ok);
    };
    try {
        if constexpr (std::is_void_v<decltype(f())>) {
            f();
            done(true);
        } else {
            auto r = f();
            done(true);
            return r;
        }
    } catch (...) {
        done(false);
        throw;
    }
}

bool prometheus_allowed(const std::string& url, const std::string& own,
                        const std::vector<std::string>& allowed) {
    auto bare = [](std::string u) {
        while (!u.empty() && u.back() == '/') u.pop_back();
        return u;
    };
    if (url.empty() || bare(url) == bare(own)) return true;
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](const std::string& a) { return bare(a) == bare(url); });
}

Reconciler::ModelEntry Reconciler::load_model(const std::string& ns, const ModelRef& ref) {
    ModelEntry e;
    e.id = ref.id();
    if (ref.config_map.empty()) {
        e.model = default_model_;
        e.error = default_model_error_;
        return e;
    }
    const std::string key = ns + "/" + e.id;
    try {
        const json cm = api("get", [&] { return cluster_->config_map(ns, ref.config_map); });
        e.version = kube::string_field(cm, "metadata", "resourceVersion");
        auto cached = models_.find(key);
        if (cached != models_.end() && cached->second.version == e.version) return cached->second;
        if (!cm.contains("data") || !cm["data"].contains(ref.key) ||
            !cm["data"][ref.key].is_string()) {
            e.error = "ConfigMap " + ns + "/" + ref.config_map + " has no key \"" + ref.key + "\"";
        } else {
            const std::string source = "ConfigMap " + ns + "/" + ref.config_map + " key " + ref.key;
            auto m = std::make_shared<const model::PhaseModel>(
                model::parse_model(cm["data"][ref.key].get<std::string>(), source));
            policy::PhaseRecommender check(
                *m, policy::PhaseOptions{});  // throws if the phase policy cannot use it
            e.model = m;
        }
    } catch (const std::exception& ex) {
        e.error = ex.what();
    }
    models_[key] = e;
    return e;
}

const std::vector<json>& Reconciler::vpas(const std::string& ns, double now) {
    static const std::vector<json> none;
    if (!vpa_installed_ || now - vpa_checked_ >= kVpaRefreshSeconds) {
        vpa_checked_ = now;
        try {
            vpa_installed_ = api("get", [&] { return cluster_->vpa_installed(); });
        } catch (const std::exception& e) {
            log("warning", "cannot tell whether the VerticalPodAutoscaler CRD is installed",
                {{"error", e.what()}});
            vpa_installed_ = false;
        }
    }
    if (!*vpa_installed_) return none;
    VpaList& list = vpas_[ns];
    if (list.fetched == 0 || now - list.fetched >= kVpaRefreshSeconds) {
        list.fetched = now;
        try {
            list.items = api("list", [&] { return cluster_->vpas(ns); });
        } catch (const std::exception& e) {
            log("warning", "cannot list VerticalPodAutoscalers",
                {{"namespace", ns}, {"error", e.what()}});
        }
    }
    return list.items;
}

void Reconciler::remember(AutoscalerState& state, json decision) {
    state.recent.push_back(std::move(decision));
    while (state.recent.size() > options_.max_recent_decisions)
        state.recent.erase(state.recent.begin());
}

void Reconciler::remember_targets(AutoscalerState& state, const std::string& pod,
                                  const std::vector<ContainerTarget>& targets, int phase,
                                  const std::string& action, const std::string& reason,
                                  double now) {
    for (const ContainerTarget& t : targets) {
        if (!t.worth_resizing) continue;
        remember(state, {{"time", kube::format_time(now)},
                         {"pod", pod},
                         {"container", t.name},
                         {"phase", phase},
                         {"cpu", t.wanted.requests.cpu ? format_cpu(*t.wanted.requests.cpu) : ""},
                         {"memory",
                          t.wanted.requests.memory ? format_memory(*t.wanted.requests.memory) : ""},
                         {"action", action},
                         {"reason", reason}});
    }
}

void Reconciler::record_event(const kube::ObjectReference& pod, kube::EventType type,
                              const std::string& reason, const std::string& message) {
    const std::string what = pod.ns + "/" + pod.name + " " + reason;
    writes_.submit(
        "event/" + std::to_string(++events_queued_),
        [this, pod, type, reason, message] {
            api("event", [&] { cluster_->record_event(pod, type, reason, message); });
        },
        [this, what](const std::string& error) {
            if (!error.empty())
                log("warning", "event not recorded", {{"event", what}, {"error", error}});
        });
}

void Reconciler::resize_done(const std::string& autoscaler, const std::string& pod_key,
                             const kube::ObjectReference& pod, const PodDecision& d, int phase,
                             double decided, const std::string& error) {
    auto ps = pods_.find(pod_key);
    auto found = autoscalers_.find(autoscaler);
    AutoscalerState* state = found == autoscalers_.end() ? nullptr : &found->second;
    const std::string container = d.resized.front().name;
    if (error.empty()) {
        if (ps != pods_.end()) {
            ps->second.gate.backoff_level = 0;
            ps->second.blocked.clear();
            ps->second.resized = true;
        }
        if (hooks_.resize) hooks_.resize(autoscaler, "ok", "applied");
        if (state) {
            remember_targets(*state, pod.name, d.resized, phase, "Resize", "Resized", decided);
            state->last_resize = {{"time", kube::format_time(decided)},
                                  {"pod", pod.name},
                                  {"container", container},
                                  {"result", "Resized"}};
        }
        log("info", "resized", {{"pod", pod_key}, {"message", d.message}});
        record_event(pod, kube::EventType::Normal, "Resized", d.message);
        return;
    }
    if (ps != pods_.end()) {
        back_off(ps->second.gate, decided);
    }
    if (hooks_.resize) hooks_.resize(autoscaler, "error", error_reason(error));
    if (state) {
        state->failed_reason = "ResizeFailed";
        state->failed_message = pod_key + ": " + error;
        remember_targets(*state, pod.name, d.resized, phase, "Blocked", "ResizeFailed", decided);
        state->last_resize = {{"time", kube::format_time(decided)},
                              {"pod", pod.name},
                              {"container", container},
                              {"result", "Failed"}};
    }
    log("error", "resize failed", {{"pod", pod_key}, {"error", error}});
    record_event(pod, kube::EventType::Warning, "ResizeFailed", error);
}

void Reconciler::set_condition(AutoscalerState& state, const std::string& type, bool status,
                               const std::string& reason, const std::string& message, double now,
                               long long generation) {
    const std::string s = status ? "True" : "False";
    for (json& c : state.conditions) {
        if (c["type"] != type) continue;
        if (c["status"] != s) c["lastTransitionTime"] = kube::format_time(now);
        c["status"] = s;
        c["reason"] = reason;
        c["message"] = message;
        c["observedGeneration"] = generation;
        return;
    }
    state.conditions.push_back({{"type", type},
                                {"status", s},
                                {"reason", reason},
                                {"message", message},
                                {"lastTransitionTime", kube::format_time(now)},
                                {"observedGeneration", generation}});
}

// The tick's budget: Prometheus waits are cut to what is left, and a namespace reached or
// answered after it is skipped, its state kept (a stuck Prometheus must not stall the loop).
class Reconciler::Deadline {
public:
    Deadline(std::chrono::milliseconds budget, std::chrono::milliseconds max_wait)
        : end_(std::chrono::steady_clock::now() + budget), max_wait_(max_wait) {}
    bool passed() const { return left().count() <= 0; }
    // A query waits at most what is left of the tick (the client rounds it down a little).
    prom::QueryOptions query_options() const {
        prom::QueryOptions qo;
        qo.timeout = std::clamp(left(), std::chrono::milliseconds(1), max_wait_);
        return qo;
    }
    // Whether a wait of query_options() was cut short by the tick rather than by the timeout.
    bool cuts_waits() const { return left() < max_wait_; }
    // The tick's time is spent (a query waited out what was left of it).
    void expire() { end_ = std::chrono::steady_clock::now(); }

private:
    std::chrono::milliseconds left() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            end_ - std::chrono::steady_clock::now());
    }
    std::chrono::steady_clock::time_point end_;
    std::chrono::milliseconds max_wait_;
};

namespace {

// Adds the time from its making to its end to one step of the summary.
class StepTimer {
public:
    StepTimer(TickSummary& summary, const char* step)
        : seconds_(summary.step_seconds[step]), started_(std::chrono::steady_clock::now()) {}
    ~StepTimer() {
        seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }
    StepTimer(const StepTimer&) = delete;
    StepTimer& operator=(const StepTimer&) = delete;

private:
    double& seconds_;
    std::chrono::steady_clock::time_point started_;
};

struct Namespace {
    std::vector<const json*> autoscalers;
    std::vector<const json*> pods;  // Running
};

// The autoscalers and Running pods of each namespace that has autoscalers (a shared pod cache
// holds every namespace's pods; the others are not looked at).
std::map<std::string, Namespace> by_namespace(
    const std::vector<kube::Store::ObjectPtr>& autoscalers,
    const std::vector<kube::Store::ObjectPtr>& pods) {
    std::map<std::string, Namespace> namespaces;
    for (const auto& a : autoscalers)
        namespaces[kube::string_field(*a, "metadata", "namespace")].autoscalers.push_back(a.get());
    for (const auto& p : pods) {
        const auto ns = namespaces.find(pod_namespace(*p));
        if (ns != namespaces.end() && pod_running(*p)) ns->second.pods.push_back(p.get());
    }
    return namespaces;
}

using Columns = Reconciler::Columns;

// Where each of the model's features is in the snapshot's columns; none for a feature whose
// query failed or that is not there.
Columns columns_for(const prom::FeatureSnapshot& snap, const model::PhaseModel& model) {
    std::set<std::string> failed;
    for (const auto& f : snap.failures) failed.insert(f.feature);
    auto column = [&](const std::string& feature) -> std::optional<std::size_t> {
        if (failed.count(feature) != 0 || failed.count("*") != 0) return std::nullopt;
        auto it = std::find(snap.features.begin(), snap.features.end(), feature);
        if (it == snap.features.end()) return std::nullopt;
        return static_cast<std::size_t>(it - snap.features.begin());
    };
    Columns c;
    for (const std::string& f : model.features) c.features.push_back(column(f));
    c.cpu = column(std::string(prom::kCpuFeature));
    c.memory = column(std::string(prom::kMemoryFeature));
    c.throttled = column(std::string(prom::kThrottledFeature));
    c.throttled_cores = column(std::string(prom::kThrottledCoresFeature));
    return c;
}

// A container's input for this tick: its row of the snapshot (features only when all are
// there), its resources and status.
TrackerInput tracker_input(const prom::FeatureSnapshot& snap, const Columns& columns,
                           const prom::ContainerKey& key, const ContainerResources& c,
                           const json& pod, double now) {
    TrackerInput in;
    in.timestamp = now;
    in.usage = {kNaN, kNaN};
    const auto row = snap.values.find(key);
    if (row != snap.values.end()) {
        bool complete = true;
        for (const auto& col : columns.features) {
            if (!col)
                complete = false;
            else
                in.features.push_back(row->second[*col]);
        }
        if (!complete) in.features.clear();
        if (columns.cpu) in.usage.cpu = row->second[*columns.cpu];
        if (columns.memory) in.usage.memory = row->second[*columns.memory];
        if (columns.throttled) in.cpu_throttled = row->second[*columns.throttled];
        if (columns.throttled_cores) in.cpu_throttled_cores = row->second[*columns.throttled_cores];
    }
    set_resources(in, c, pod);
    return in;
}

}  // namespace

TickSummary Reconciler::tick(double now) {
    std::vector<kube::Store::ObjectPtr> autoscalers, pods;
    for (const auto& i : autoscaler_informers_) {
        auto l = i->store().list();
        autoscalers.insert(autoscalers.end(), l.begin(), l.end());
    }
    for (const auto& i : pod_informers_) {
        auto l = i->store().list();
        pods.insert(pods.end(), l.begin(), l.end());
    }
    if (options_.pods) pods = options_.pods->store().list();  // shared: every namespace
    const kube::Informer* nodes = options_.nodes ? options_.nodes.get() : node_informer_.get();
    return tick(autoscalers, pods,
                nodes ? nodes->store().list() : std::vector<kube::Store::ObjectPtr>{}, now);
}

TickSummary Reconciler::tick(const std::vector<kube::Store::ObjectPtr>& autoscalers,
                             const std::vector<kube::Store::ObjectPtr>& pods, double now) {
    return tick(autoscalers, pods, {}, now);
}

TickSummary Reconciler::tick(const std::vector<kube::Store::ObjectPtr>& autoscaler_objects,
                             const std::vector<kube::Store::ObjectPtr>& pod_objects,
                             const std::vector<kube::Store::ObjectPtr>& node_objects, double now) {
    node_sizes_ = node_sizes(node_objects);
    TickSummary summary;
    begin_tick(summary);
    Deadline deadline(options_.tick_deadline.count() > 0 ? options_.tick_deadline : options_.tick,
                      options_.prometheus_timeout);
    std::set<std::string> skipped;
    const auto skip = [&](const std::string& ns) {
        skipped.insert(ns);
        ++summary.namespaces_skipped;
        log("warning", "tick past its deadline: namespace skipped", {{"namespace", ns}});
    };
    for (auto& [ns, objects] : by_namespace(autoscaler_objects, pod_objects)) {
        if (deadline.passed()) {
            skip(ns);
            continue;
        }
        NamespacePass pass{ns, {}, {}, {}, {}};
        {
            StepTimer timer(summary, "select");
            pass.work = select_pods(ns, objects.autoscalers, objects.pods, now);
        }
        summary.autoscalers += pass.work.size();
        {
            StepTimer timer(summary, "plan");
            plan_queries(pass);
        }
        {
            StepTimer timer(summary, "read");
            read_metrics(pass, deadline, summary);
        }
        if (deadline.passed()) {  // the answers came too late to act on
            skip(ns);
            continue;
        }
        for (Work& w : pass.work) {
            AutoscalerState& state = autoscalers_[w.key];
            state.seen = true;
            Outcome outcome;
            if (w.servable()) track_pods(pass, w, state, outcome, deadline, summary, now);
            summary.pods_tracked += outcome.tracked_pods;
            StepTimer timer(summary, "status");
            update_status(pass, w, state, outcome, summary, now);
        }
    }
    forget_gone(skipped);
    if (hooks_.pods_tracked) hooks_.pods_tracked(summary.pods_tracked);
    summary.writes_waiting = writes_.waiting();
    return summary;
}

void Reconciler::begin_tick(TickSummary& summary) {
    summary.writes_completed = writes_.run_completions();
    for (const std::string& step : kTickSteps) summary.step_seconds[step] = 0;
    for (auto& [k, t] : trackers_) t.seen = false;
    for (auto& [k, p] : pods_) p.seen = false;
    for (auto& [k, a] : autoscalers_) a.seen = false;
}

std::vector<Reconciler::Work> Reconciler::select_pods(const std::string& ns,
                                                      std::vector<const json*> autoscalers,
                                                      const std::vector<const json*>& pods,
                                                      double now) {
    // In name order: the first autoscaler to select a pod owns it.
    std::sort(autoscalers.begin(), autoscalers.end(), [](const json* a, const json* b) {
        return kube::string_field(*a, "metadata", "name") <
               kube::string_field(*b, "metadata", "name");
    });
    std::vector<Work> work;
    std::set<std::string> claimed;
    for (const json* a : autoscalers) {
        Work w;
        w.object = a;
        w.key = ns + "/" + kube::string_field(*a, "metadata", "name");
        w.generation = generation_of(*a);
        w.parsed = parse_spec(*a);
        if (w.parsed.ok() &&
            !prometheus_allowed(w.parsed.spec.prometheus_url, metrics_->default_url(),
                                options_.allowed_prometheus_urls))
            w.refused = "spec.prometheus.url " + prom::redact_url(w.parsed.spec.prometheus_url) +
                        " is not a Prometheus the operator may send its credentials to (the "
                        "installer allows "
                        "more with --prometheus-allowed-urls, chart value prometheus.allowedUrls)";
        if (w.parsed.ok() && w.refused.empty()) {
            w.model = load_model(ns, w.parsed.spec.model);
            const std::vector<json>& vpa_list = vpas(ns, now);
            for (const json* p : pods) {
                if (!w.parsed.spec.selector.matches(*p)) continue;
                if (!claimed.insert(pod_name(*p)).second) continue;
                if (std::any_of(vpa_list.begin(), vpa_list.end(),
                                [&](const json& v) { return vpa_controls(v, *p); })) {
                    w.vpa_pods.push_back(pod_name(*p));
                    continue;
                }
                w.pods.push_back(p);
            }
        }
        work.push_back(std::move(w));
    }
    return work;
}

void Reconciler::plan_queries(NamespacePass& pass) {
    for (Work& w : pass.work) {
        if (!w.parsed.ok() || !w.refused.empty() || !w.model.model || w.pods.empty()) continue;
        prom::FeatureQueries& q = pass.queries[w.parsed.spec.prometheus_url];
        // The throttled share and seconds are read beside the model's features (the phase
        // policy's CPU signals above a limit); a spec's own query replaces a default below.
        const std::vector<std::string> queried = q.features();
        const auto add_default = [&](std::string_view feature, std::string_view promql) {
            if (std::find(queried.begin(), queried.end(), feature) == queried.end())
                q.set_template(feature, promql);
        };
        add_default(prom::kThrottledFeature, prom::kDefaultThrottledTemplate);
        add_default(prom::kThrottledCoresFeature, prom::kDefaultThrottledCoresTemplate);
        try {
            for (const auto& [feature, tmpl] : w.parsed.spec.feature_queries)
                q.set_template(feature, tmpl);
        } catch (const std::exception& e) {
            w.metrics_error = e.what();
        }
        const std::vector<std::string> have = q.features();
        for (const std::string& f : w.model.model->features)
            if (std::find(have.begin(), have.end(), f) == have.end())
                w.metrics_error = "no Prometheus query for the model's feature \"" + f +
                                  "\" (set spec.prometheus.featureQueries)";
    }
}

void Reconciler::read_metrics(NamespacePass& pass, Deadline& deadline, TickSummary& summary) {
    for (auto& [url, q] : pass.queries) {
        prom::FeatureSnapshot& snap = pass.snapshots[url];
        const bool cut = deadline.cuts_waits();
        try {
            snap = metrics_->features(url, q, pass.ns,
                                      policy::rate_window(options_.tick, options_.scrape_interval),
                                      deadline.query_options());
            // A query that timed out waiting what was left of the tick spent it: this namespace
            // and the next are skipped, as if it had waited to the very end.
            if (cut && std::any_of(snap.failures.begin(), snap.failures.end(),
                                   [](const prom::FeatureQueryFailure& f) { return f.timed_out; }))
                deadline.expire();
            summary.prometheus_queries += snap.queries;
        } catch (const std::exception& e) {  // a client that cannot be made (bad URL)
            snap = prom::FeatureSnapshot{};
            snap.failures.push_back({"*", pass.ns, e.what(), false, {}});
        }
        for (const auto& f : snap.failures) {
            log("warning", "Prometheus query failed",
                {{"namespace", pass.ns}, {"feature", f.feature}, {"error", f.message}});
            if (!f.reply.empty())
                log("debug", "Prometheus' reply",
                    {{"namespace", pass.ns}, {"feature", f.feature}, {"reply", f.reply}});
        }
    }
}

const prom::FeatureHistory* Reconciler::history(NamespacePass& pass, const std::string& url,
                                                const Deadline& deadline, TickSummary& summary,
                                                double now) {
    auto it = pass.histories.find(url);
    if (it == pass.histories.end()) {
        std::optional<prom::FeatureHistory> h;
        try {
            const auto step = std::max(options_.tick, std::chrono::milliseconds(1000));
            const auto end = prom::TimePoint(std::chrono::duration_cast<prom::TimePoint::duration>(
                                 std::chrono::duration<double>(now))) -
                             step;
            const auto start = end - step * kWarmUpSamples;
            h = metrics_->history(url, pass.queries[url], pass.ns,
                                  policy::rate_window(options_.tick, options_.scrape_interval),
                                  start, end, step, deadline.query_options());
            summary.prometheus_queries += h->queries;
        } catch (const std::exception& e) {
            log("warning", "history query failed",
                {{"namespace", pass.ns}, {"error", prom::describe_without_reply(e)}});
        }
        it = pass.histories.emplace(url, std::move(h)).first;
    }
    return it->second ? &*it->second : nullptr;
}

void Reconciler::track_pods(NamespacePass& pass, Work& w, AutoscalerState& state, Outcome& outcome,
                            const Deadline& deadline, TickSummary& summary, double now) {
    const Columns columns =
        columns_for(pass.snapshots[w.parsed.spec.prometheus_url], *w.model.model);
    // The spec and model a tracker was made for.
    const std::string config = json({{"spec", w.object->value("spec", json::object())},
                                     {"model", w.model.id},
                                     {"version", w.model.version}})
                                   .dump();
    for (const json* pod : w.pods) {
        const std::string pod_key = pass.ns + "/" + pod_name(*pod);
        PodState& ps = pods_[pod_key];
        if (ps.uid != pod_uid(*pod)) {
            ps = PodState{};
            ps.uid = pod_uid(*pod);
            // A pod an earlier operator already sized: start with a cooldown rather than a burst
            // of resizes after a restart.
            if (annotation(*pod, kRecommendationAnnotation)) {
                ps.gate.cooldowns.start = now;
                ps.resized = w.parsed.spec.mode == Mode::InPlace;
            }
        }
        ps.seen = true;
        PodReading reading;
        {
            StepTimer timer(summary, "step");
            reading = step_trackers(pass, w, columns, config, *pod, ps, state, outcome, deadline,
                                    summary, now);
        }
        if (!reading.tracked) continue;
        ++outcome.tracked_pods;
        ++outcome.per_phase[phase_name(*w.model.model, reading.phase)];
        StepTimer timer(summary, "decide");
        decide_pod_writes(w, *pod, reading, ps, state, outcome, summary, now);
    }
}

Reconciler::PodReading Reconciler::step_trackers(NamespacePass& pass, Work& w,
                                                 const Columns& columns, const std::string& config,
                                                 const json& pod, PodState& ps,
                                                 AutoscalerState& state, Outcome& outcome,
                                                 const Deadline& deadline, TickSummary& summary,
                                                 double now) {
    const AutoscalerSpec& spec = w.parsed.spec;
    const prom::FeatureSnapshot& snap = pass.snapshots[spec.prometheus_url];
    const std::string name = pod_name(pod), uid = pod_uid(pod), pod_key = pass.ns + "/" + name;
    PodReading reading;
    const std::vector<ContainerResources> containers = container_resources(pod);
    // The pod's node bounds what it is given and what usage is believed; an unscheduled pod, or
    // one whose node is not (yet) in the cache, has the absolute ceiling only.
    const auto node = node_sizes_.find(kube::string_field(pod, "spec", "nodeName"));
    std::optional<NodeRoom> room;
    if (node != node_sizes_.end()) room.emplace(node->second, containers);
    for (std::size_t i = 0; i < containers.size(); ++i) {
        const ContainerResources& c = containers[i];
        const ContainerPolicy policy = spec.policy_for(c.name);
        if (!policy.enabled) continue;
        const std::string key = pod_key + "/" + c.name;
        Tracked& t = trackers_[key];
        if (t.uid != uid || t.config != config || !t.tracker) {
            t = Tracked{};
            t.uid = uid;
            t.config = config;  // a new spec or model makes a new tracker
            try {
                t.tracker = std::make_unique<ContainerTracker>(
                    w.model.model, spec,
                    std::chrono::duration<double>(options_.phase_label_hold).count());
            } catch (const std::exception& e) {
                w.model.error = e.what();
                break;
            }
            // Tracked before (by an operator that restarted): rebuild the recent history from a
            // range query, so the phase is known at once.
            if (label(pod, kPhaseLabel)) {
                const prom::FeatureHistory* h =
                    history(pass, spec.prometheus_url, deadline, summary, now);
                if (h != nullptr)
                    warm_up(*t.tracker, *h, prom::ContainerKey{pass.ns, name, c.name}, c, pod, now);
            }
        }
        t.seen = true;
        reading.tracked = true;
        TrackerInput in =
            tracker_input(snap, columns, prom::ContainerKey{pass.ns, name, c.name}, c, pod, now);
        if (node != node_sizes_.end()) in.node_capacity = node->second.capacity;
        in.rate_window = std::chrono::duration<double>(
                             policy::rate_window(options_.tick, options_.scrape_interval))
                             .count();
        const auto started = std::chrono::steady_clock::now();
        TrackerStep step;
        try {
            step = t.tracker->step(in);
        } catch (const std::exception& e) {
            log("error", "tracker step failed", {{"container", key}, {"error", e.what()}});
        }
        if (hooks_.inference)
            hooks_.inference(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        if (step.observed)
            ++outcome.observed;
        else
            ++outcome.missing;
        if (!step.rejected.empty() && hooks_.sample_rejected) hooks_.sample_rejected(step.rejected);
        if (step.phase_changed) {
            if (hooks_.phase_transition) hooks_.phase_transition();
            log("info", "phase changed", {{"container", key}, {"phase", *step.phase}});
            remember(state, {{"time", kube::format_time(now)},
                             {"pod", name},
                             {"container", c.name},
                             {"phase", *step.phase},
                             {"action", "PhaseChange"},
                             {"reason", phase_name(t.tracker->model(), step.phase)}});
        }
        if (step.oom_killed) {
            log("warning", "OOM kill seen: memory bumped", {{"container", key}});
            if (ps.resized && hooks_.oom_after_resize) hooks_.oom_after_resize(w.key);
        }
        ps.gate.at_risk |= step.at_risk;
        t.phase = step.phase;
        if (step.phase) state.phases_seen.insert(*step.phase);
        if (step.recommendation) {
            t.target =
                target_for(c, *step.recommendation, policy, spec.min_change,
                           room ? std::optional<policy::Amount>(room->room(i)) : std::nullopt);
            t.uncapped = step.recommendation->request;
        } else if (t.target) {
            t.target->worth_resizing = false;  // skipped sample: never act on it
            t.target->node_capped = false;
        }
        if (t.target) {
            ContainerTarget target = *t.target;
            target.current = c;  // against the pod as it is now (a resize may have landed)
            target.worth_resizing = step.recommendation && t.target->worth_resizing;
            reading.targets.push_back(target);
            if (room) room->reserve(i, target.wanted.requests);
        }
        add_container(outcome.containers, c, t.target, t.uncapped);
        // The phase each container shows (its label's), as podsPerPhase counts pods.
        ++outcome.containers_per_phase[phase_name(t.tracker->model(), t.tracker->shown().phase())];
        if (!reading.phase && t.tracker->shown().phase()) {
            reading.phase = t.tracker->shown().phase();
            reading.phase_since = t.tracker->shown().since();
        }
    }
    return reading;
}

void Reconciler::decide_pod_writes(const Work& w, const json& pod, const PodReading& reading,
                                   PodState& ps, AutoscalerState& state, Outcome& outcome,
                                   TickSummary& summary, double now) {
    const AutoscalerSpec& spec = w.parsed.spec;
    const std::string ns = pod_namespace(pod), name = pod_name(pod), pod_key = ns + "/" + name;
    PodMarks marks;
    marks.phase_label = phase_name(*w.model.model, reading.phase);
    {  // every mode recommends (Off as the VPA's Off)
        marks.phase_name = marks.phase_label;
        if (reading.phase && reading.phase_since > 0)
            marks.phase_since = kube::format_time(reading.phase_since);
        const auto annotated = annotation(pod, kRecommendationAnnotation);
        // Rewritten only when it moved (or its phase changed): a small move is not worth an API
        // write per pod and tick.
        const bool phase_moved = label(pod, kPhaseLabel) != marks.phase_label;
        if (!reading.targets.empty() &&
            (phase_moved || recommendation_moved(annotated, reading.targets, spec.min_change)))
            marks.recommendation = recommendation_json(reading.targets).dump();
    }

    // A resize of this pod still queued or on its way is seen through first (its result, taken
    // in at the start of a tick, may set a backoff).
    const std::string resize_key = "resize/" + pod_key;
    if (spec.mode == Mode::InPlace && options_.in_place_available && !reading.targets.empty() &&
        !writes_.busy(resize_key)) {
        PodDecision d = decide_pod(pod, reading.targets, spec.cooldown_seconds,
                                   safety_margins(spec), ps.gate, now);
        const int phase = reading.phase.value_or(-1);
        if (d.action == Action::Resize) {
            // The cooldown runs from the decision, unless this one was let through within it; from
            // one that only raises CPU, the cooldown of CPU cuts.
            ps.gate.cooldowns.record(d.restarts, now);
            ps.gate.at_risk = {};
            ++summary.resizes;
            writes_.submit(
                resize_key,
                [this, ns, name, body = resize_body(d.resized)] {
                    api("resize", [&] { cluster_->resize(ns, name, body); });
                },
                [this, key = w.key, pod_key, ref = kube::reference_to(pod), d, phase,
                 now](const std::string& error) {
                    resize_done(key, pod_key, ref, d, phase, now, error);
                });
        } else if (d.action == Action::Blocked) {
            ++summary.blocked;
            outcome.blocked_reason = d.reason;
            outcome.blocked_message = pod_key + ": " + d.message;
            // Once per reason, not every tick while it lasts.
            if (ps.blocked != d.reason) {
                ps.blocked = d.reason;
                if (hooks_.resize) hooks_.resize(w.key, "blocked", metric_reason(d.reason));
                remember_targets(state, name, d.resized.empty() ? reading.targets : d.resized,
                                 phase, "Blocked", d.reason, now);
                log("warning", "resize blocked",
                    {{"pod", pod_key}, {"reason", d.reason}, {"message", d.message}});
                record_event(kube::reference_to(pod), kube::EventType::Warning, "ResizeBlocked",
                             d.reason + ": " + d.message);
            }
        }
    }

    // Against the cached pod: a patch still waiting is replaced by this one.
    const json patch = marks_patch(pod, marks);
    if (patch.is_null()) return;
    const bool added = writes_.submit(
        "marks/" + pod_key,
        [this, ns, name, patch] { api("patch", [&] { cluster_->patch_pod(ns, name, patch); }); },
        [this, pod_key](const std::string& error) {
            if (!error.empty())
                log("warning", "pod patch failed", {{"pod", pod_key}, {"error", error}});
        });
    if (added) ++summary.pod_patches;
}

void Reconciler::update_status(const NamespacePass& pass, const Work& w, AutoscalerState& state,
                               Outcome& outcome, TickSummary& summary, double now) {
    const AutoscalerSpec& spec = w.parsed.spec;
    const long long gen = w.generation;
    if (!w.parsed.ok()) {
        set_condition(state, "Ready", false, "InvalidSpec", w.parsed.message(), now, gen);
        set_condition(state, "ModelLoaded", false, "InvalidSpec", "the spec is not valid", now,
                      gen);
    } else if (!w.refused.empty()) {
        set_condition(state, "Ready", false, "PrometheusNotAllowed", w.refused, now, gen);
    } else if (!w.model.model || !w.model.error.empty()) {
        set_condition(state, "ModelLoaded", false, "ModelError", w.model.error, now, gen);
        set_condition(state, "Ready", false, "ModelNotLoaded",
                      "model " + w.model.id + ": " + w.model.error, now, gen);
    } else {
        set_condition(state, "ModelLoaded", true, "Loaded", "model " + w.model.id, now, gen);
        if (spec.mode == Mode::InPlace && !options_.in_place_available)
            set_condition(state, "Ready", false, "InPlaceResizeUnavailable",
                          options_.in_place_unavailable_message +
                              " (recommending as mode Off does; nothing is resized)",
                          now, gen);
        else
            set_condition(state, "Ready", true, "Reconciling",
                          std::to_string(outcome.tracked_pods) + " pods tracked", now, gen);
    }
    if (w.parsed.ok() && w.model.model) {
        std::string failure;
        const auto snap = pass.snapshots.find(spec.prometheus_url);
        if (!w.metrics_error.empty())
            failure = w.metrics_error;
        else if (snap != pass.snapshots.end())
            for (const auto& f : snap->second.failures) failure = f.feature + ": " + f.message;
        if (!failure.empty())
            set_condition(state, "MetricsAvailable", false, "QueryFailed", failure, now, gen);
        else if (outcome.missing > 0)
            set_condition(state, "MetricsAvailable", false, "NoMetrics",
                          std::to_string(outcome.missing) + " of " +
                              std::to_string(outcome.missing + outcome.observed) +
                              " containers have no complete metrics (their samples are skipped)",
                          now, gen);
        else
            set_condition(state, "MetricsAvailable", true, "MetricsFound",
                          std::to_string(outcome.observed) + " containers", now, gen);
    }
    if (outcome.blocked_reason.empty() && !state.failed_reason.empty()) {
        outcome.blocked_reason = state.failed_reason;
        outcome.blocked_message = state.failed_message;
    }
    state.failed_reason.clear();
    state.failed_message.clear();
    if (outcome.blocked_reason.empty() && !w.vpa_pods.empty()) {
        outcome.blocked_reason = "VPAControlled";
        outcome.blocked_message =
            std::to_string(w.vpa_pods.size()) +
            " selected pods left alone: a VerticalPodAutoscaler also acts on them:";
        for (const std::string& p : w.vpa_pods) outcome.blocked_message += " " + p;
    }
    if (!outcome.blocked_reason.empty())
        set_condition(state, "ResizeBlocked", true, outcome.blocked_reason, outcome.blocked_message,
                      now, gen);
    else
        set_condition(state, "ResizeBlocked", false, "NotBlocked", "", now, gen);

    warn_autoscaler(w, state, problems(w, outcome, state), now);
    report(w, state, outcome);

    if (w.servable()) {
        const json fresh = recommendation_status(outcome.containers, spec);
        if (recommendation_status_moved(state.recommendation, fresh, spec.min_change))
            state.recommendation = fresh;
    }
    json status = {{"observedGeneration", gen},
                   {"model", w.parsed.ok() ? w.model.id : ""},
                   {"podsTracked", outcome.tracked_pods},
                   {"phasesSeen", state.phases_seen.size()},
                   {"podsPerPhase", json(outcome.per_phase)},
                   {"containersPerPhase", json(outcome.containers_per_phase)},
                   {"recentDecisions", state.recent},
                   {"conditions", state.conditions}};
    if (!state.last_resize.is_null()) status["lastResize"] = state.last_resize;
    if (!state.recommendation.is_null()) status["recommendation"] = state.recommendation;
    const json current = w.object->value("status", json::object());
    if (current == status) return;
    // A merge patch merges maps: phases no pod or container is in any more are removed
    // explicitly.
    for (const char* map : {"podsPerPhase", "containersPerPhase"})
        if (current.contains(map) && current[map].is_object())
            for (auto it = current[map].begin(); it != current[map].end(); ++it)
                if (!status[map].contains(it.key())) status[map][it.key()] = nullptr;
    const bool added = writes_.submit(
        "status/" + w.key,
        [this, ns = pass.ns, name = kube::string_field(*w.object, "metadata", "name"), status] {
            api("status", [&] { cluster_->patch_status(ns, name, status); });
        },
        [this, key = w.key](const std::string& error) {
            if (!error.empty())
                log("warning", "status update failed", {{"autoscaler", key}, {"error", error}});
        });
    if (added) ++summary.status_updates;
}

std::map<std::string, std::string> Reconciler::problems(const Work& w, const Outcome& outcome,
                                                        const AutoscalerState& state) const {
    std::map<std::string, std::string> found;
    // What the Ready condition says is wrong, under its reason.
    for (const json& c : state.conditions)
        if (c.value("type", "") == "Ready" && c.value("status", "") == "False")
            found[c.value("reason", "")] = c.value("message", "");
    if (w.servable() && w.pods.empty() && w.vpa_pods.empty())
        found["NoPodsSelected"] = "no Running pod of the namespace matches spec.selector";
    if (!outcome.blocked_reason.empty()) found[outcome.blocked_reason] = outcome.blocked_message;
    for (const json& c : state.conditions)
        if (c.value("type", "") == "MetricsAvailable" && c.value("reason", "") == "QueryFailed")
            found["MetricsUnavailable"] = c.value("message", "");
    return found;
}

void Reconciler::warn_autoscaler(const Work& w, AutoscalerState& state,
                                 const std::map<std::string, std::string>& problems, double now) {
    std::erase_if(state.warned, [&](const auto& e) { return problems.count(e.first) == 0; });
    kube::ObjectReference ref = kube::reference_to(*w.object);
    if (ref.api_version.empty()) ref.api_version = "phasescale.io/v1alpha1";  // listed objects
    if (ref.kind.empty()) ref.kind = "PhaseAutoscaler";
    for (const auto& [reason, message] : problems) {
        const auto last = state.warned.find(reason);
        if (last != state.warned.end() && now - last->second < kAutoscalerWarningRepeatSeconds)
            continue;
        state.warned[reason] = now;
        record_event(ref, kube::EventType::Warning, reason, message);
    }
}

void Reconciler::report(const Work& w, const AutoscalerState& state, const Outcome& outcome) const {
    if (!hooks_.autoscaler_observed) return;
    AutoscalerReport r;
    r.ns = kube::string_field(*w.object, "metadata", "namespace");
    r.name = kube::string_field(*w.object, "metadata", "name");
    for (const json& c : state.conditions)
        if (c.value("type", "") == "Ready") r.ready = c.value("status", "") == "True";
    r.containers = outcome.containers;
    r.containers_per_phase = outcome.containers_per_phase;
    hooks_.autoscaler_observed(r);
}

void Reconciler::forget_gone(const std::set<std::string>& skipped) {
    // Keys start with "namespace/".
    const auto kept = [&](const std::string& key) {
        return skipped.count(key.substr(0, key.find('/'))) != 0;
    };
    std::erase_if(trackers_, [&](const auto& e) { return !e.second.seen && !kept(e.first); });
    std::erase_if(pods_, [&](const auto& e) { return !e.second.seen && !kept(e.first); });
    std::erase_if(autoscalers_, [&](const auto& e) {
        const bool gone = !e.second.seen && !kept(e.first);
        if (gone && hooks_.autoscaler_gone) hooks_.autoscaler_gone(e.first);
        return gone;
    });
}

}  // namespace phasescale::control
