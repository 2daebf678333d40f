// The control loop (README.md): every tick, for each PhaseAutoscaler, select its Running pods,
// read their features with one Prometheus query per feature and namespace, step the container
// trackers, and act by mode: label and annotate (all modes), resize (InPlace).
// The status is written at most once per tick per PhaseAutoscaler, and only when it changed.
// Nothing here throws out of tick(): a bad spec, model or answer becomes a condition.
//
// The tick decides; its API writes (pod marks, resizes, Events, status) go to a WriteQueue and
// are sent by its workers, so a tick over thousands of pods does not wait for each write. What
// a write returned is taken in at the start of the next tick (a failed resize backs off and
// shows in the ResizeBlocked condition then).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/events.hpp>
#include <phasescale/kube/informer.hpp>
#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>

#include "phasescale/control/cluster_api.hpp"
#include "phasescale/control/decision.hpp"
#include "phasescale/control/metrics_reader.hpp"
#include "phasescale/control/node.hpp"
#include "phasescale/control/recommendation.hpp"
#include "phasescale/control/spec.hpp"
#include "phasescale/control/tracker.hpp"
#include "phasescale/control/write_queue.hpp"

namespace phasescale::control {

// How often the VerticalPodAutoscaler CRD and objects are looked at again.
inline constexpr double kVpaRefreshSeconds = 60;
// ReconcilerOptions::phase_label_hold's default (docs/model.md, "The phase label").
inline constexpr std::chrono::milliseconds kDefaultPhaseLabelHold{120000};

struct ReconcilerOptions {
    std::vector<std::string> namespaces;  // watched namespaces; empty: all
    // A pod informer to read instead of its own (the operator shares one with the loan
    // controller): it must hold the Running pods of the watched namespaces, each keeping at
    // least what trim_pod keeps. Its owner starts and stops it.
    std::shared_ptr<kube::Informer> pods;
    // A node informer to read instead of its own (shared with the loan controller): every node,
    // each keeping at least what trim_node keeps. Its owner starts and stops it.
    std::shared_ptr<kube::Informer> nodes;
    std::chrono::milliseconds tick{15000};
    // Prometheus' scrape interval: what the rates cover, and the window they are found in
    // (policy::rate_window).
    std::chrono::milliseconds scrape_interval{15000};
    std::string field_manager = "phasescale-operator";
    std::size_t max_recent_decisions = 20;
    std::chrono::milliseconds prometheus_timeout{10000};
    // Threads sending the API writes (the client's QPS and burst limit them too).
    std::size_t write_workers = 8;
    // Prometheus servers a spec's prometheus.url may name, besides the operator's own: the
    // operator sends its credentials to them. A spec naming another is not Ready.
    std::vector<std::string> allowed_prometheus_urls;
    // A tick's budget (0: the tick interval): each Prometheus query waits at most what is left
    // of it, and a namespace reached, or whose answers came, after it is skipped this tick.
    std::chrono::milliseconds tick_deadline{0};
    // Whether the API server has pods/resize (server_check.hpp): without it InPlace autoscalers
    // recommend as Off does and are not Ready (InPlaceResizeUnavailable, with this message).
    bool in_place_available = true;
    std::string in_place_unavailable_message;
    // A pod's phasescale.io/phase label (and phase annotations) moves to a new stable phase once
    // that phase has held this long (ShownPhase; 0: at once). The default is measured in
    // docs/model.md ("The phase label").
    std::chrono::milliseconds phase_label_hold = kDefaultPhaseLabelHold;
};

// Warning Events on a PhaseAutoscaler repeat at most this often while what blocks it lasts.
inline constexpr double kAutoscalerWarningRepeatSeconds = 600;

// One PhaseAutoscaler after a tick, for the operator's per-autoscaler metrics.
struct AutoscalerReport {
    std::string ns, name;
    bool ready = false;
    std::vector<ContainerSummary> containers;
    std::map<std::string, int> containers_per_phase;  // by phase name
};

// Whether a spec's prometheus.url ("" is the operator's own) is one the installer allowed. URLs
// compare without trailing slashes.
bool prometheus_allowed(const std::string& url, const std::string& own,
                        const std::vector<std::string>& allowed);

// Optional callbacks, for the operator's own metrics and logs. Called on the tick's thread, but
// api_request, which the write workers call too.
struct ReconcilerHooks {
    std::function<void(std::size_t pods)> pods_tracked;
    std::function<void()> phase_transition;
    // A container's sample not believed (TrackerStep::rejected: non_finite, not_positive,
    // too_large).
    std::function<void(const std::string& reason)> sample_rejected;
    // A resize of one of the autoscaler's ("namespace/name") pods: result "ok", "error" or
    // "blocked", and a short reason (applied, api_error, conflict, infeasible, ...).
    std::function<void(const std::string& autoscaler, const std::string& result,
                       const std::string& reason)>
        resize;
    // An OOM kill of a container on a pod this operator resized.
    std::function<void(const std::string& autoscaler)> oom_after_resize;
    // Each autoscaler once per tick, and once it is gone ("namespace/name").
    std::function<void(const AutoscalerReport& report)> autoscaler_observed;
    std::function<void(const std::string& autoscaler)> autoscaler_gone;
    std::function<void(double seconds)> inference;
    // verb: "patch", "resize", "status", "event", "get"
    std::function<void(const std::string& verb, double seconds, bool ok)> api_request;
    std::function<void(const std::string& level, const std::string& message,
                       const nlohmann::json& fields)>
        log;
};

struct TickSummary {
    std::size_t autoscalers = 0;
    std::size_t pods_tracked = 0;
    std::size_t prometheus_queries = 0;
    std::size_t resizes = 0;
    std::size_t resize_errors = 0;
    std::size_t blocked = 0;
    // Writes queued anew (one that replaced a waiting write of the same pod or status is not
    // counted).
    std::size_t pod_patches = 0;
    std::size_t status_updates = 0;
    std::size_t writes_completed = 0;  // writes of earlier ticks whose result this tick took in
    std::size_t writes_waiting = 0;    // queued, not yet sent, when the tick ended
    // Namespaces left alone because the tick passed its deadline (nothing read, stepped or
    // written for them; their state kept for the next tick).
    std::size_t namespaces_skipped = 0;
    // Seconds spent in each step of the tick (kTickSteps), summed over namespaces and pods.
    std::map<std::string, double> step_seconds;
};

// The steps of a tick, in order, as TickSummary::step_seconds names them.
inline const std::vector<std::string> kTickSteps = {"select", "plan",   "read",
                                                    "step",   "decide", "status"};

class Reconciler {
public:
    // `prom` is the default Prometheus (a spec's prometheus.url gets a client of its own).
    Reconciler(kube::Client kube, prom::ClientConfig prom, ReconcilerOptions options,
               ReconcilerHooks hooks = {});
    // Over any cluster and metrics (tests: in-memory ones); start() then watches nothing, and
    // tick(autoscalers, pods, now) is the way in.
    Reconciler(std::unique_ptr<ClusterApi> cluster, std::unique_ptr<MetricsReader> metrics,
               ReconcilerOptions options, ReconcilerHooks hooks = {});
    ~Reconciler();
    Reconciler(const Reconciler&) = delete;
    Reconciler& operator=(const Reconciler&) = delete;

    // Informers of PhaseAutoscalers and Running pods in the watched namespaces, and of nodes
    // (their sizes bound the recommendations).
    void start();
    void stop();
    bool wait_for_sync(std::chrono::milliseconds timeout) const;

    // One pass over the informers' stores, at `now` (unix seconds).
    TickSummary tick(double now);
    // The same over given objects (tests); pods on nodes not given keep the absolute ceiling.
    TickSummary tick(const std::vector<kube::Store::ObjectPtr>& autoscalers,
                     const std::vector<kube::Store::ObjectPtr>& pods, double now);
    TickSummary tick(const std::vector<kube::Store::ObjectPtr>& autoscalers,
                     const std::vector<kube::Store::ObjectPtr>& pods,
                     const std::vector<kube::Store::ObjectPtr>& nodes, double now);
    // Forgets the writes not sent yet (this replica stopped leading).
    std::size_t drop_pending_writes();
    // Blocks until every queued write was sent (tests: their results come in the next tick).
    void wait_for_writes();

private:
    struct ModelEntry {
        std::string id;
        std::string version;  // the ConfigMap's resourceVersion
        std::shared_ptr<const model::PhaseModel> model;
        std::string error;
    };
    struct Tracked {
        std::string uid;
        std::string config;  // spec and model the tracker was made for
        std::unique_ptr<ContainerTracker> tracker;
        std::optional<ContainerTarget> target;
        std::optional<policy::Amount> uncapped;  // the recommendation before the policy's bounds
        std::optional<int> phase;
        bool seen = false;
    };
    struct PodState {
        std::string uid;
        PodGate gate;
        bool seen = false;
        std::string blocked;   // the last reason a resize was blocked, until one is made
        bool resized = false;  // by phasescale (an OOM kill then counts as one after a resize)
    };
    struct AutoscalerState {
        std::set<int> phases_seen;
        nlohmann::json recent = nlohmann::json::array();
        nlohmann::json last_resize;
        nlohmann::json conditions = nlohmann::json::array();
        // A resize that failed since the last status: shown in ResizeBlocked once.
        std::string failed_reason, failed_message;
        nlohmann::json recommendation;         // status.recommendation as last published
        std::map<std::string, double> warned;  // Warning Events on it: reason -> when
        bool seen = false;
    };

    // One PhaseAutoscaler in a tick: its spec, model, and the pods it owns.
    struct Work {
        const nlohmann::json* object = nullptr;
        std::string key;  // namespace/name
        long long generation = 0;
        ParsedSpec parsed;
        ModelEntry model;
        std::vector<const nlohmann::json*> pods;
        std::string metrics_error;
        std::vector<std::string> vpa_pods;  // selected, but a VerticalPodAutoscaler acts on them
        std::string refused;                // why a valid spec is not served
        bool servable() const {
            return parsed.ok() && refused.empty() && model.model && metrics_error.empty();
        }
    };
    // One namespace in a tick: its autoscalers, and what Prometheus answered for them.
    struct NamespacePass {
        std::string ns;
        std::vector<Work> work;
        std::map<std::string, prom::FeatureQueries> queries;  // by Prometheus URL
        std::map<std::string, prom::FeatureSnapshot> snapshots;
        std::map<std::string, std::optional<prom::FeatureHistory>> histories;  // read on demand
    };
    // What one autoscaler's pods gave this tick, for its status.
    struct Outcome {
        std::size_t tracked_pods = 0, missing = 0, observed = 0;
        std::map<std::string, int> per_phase;
        std::map<std::string, int> containers_per_phase;
        std::vector<ContainerSummary> containers;
        std::string blocked_reason, blocked_message;
    };
    // One pod's containers after their trackers stepped.
    struct PodReading {
        std::vector<ContainerTarget> targets;
        std::optional<int> phase;  // the first tracked container's
        double phase_since = 0;
        bool tracked = false;  // some container is under a policy
    };
    class Deadline;

public:
    // Where each of a model's features is in a snapshot's columns (none: not there).
    struct Columns {
        std::vector<std::optional<std::size_t>> features;  // in the model's order
        std::optional<std::size_t> cpu, memory, throttled, throttled_cores;
    };

private:
    // The tick's steps, in order (each timed under its kTickSteps name).
    void begin_tick(TickSummary& summary);
    // Parses the namespace's specs and gives each the Running pods it owns.
    std::vector<Work> select_pods(const std::string& ns,
                                  std::vector<const nlohmann::json*> autoscalers,
                                  const std::vector<const nlohmann::json*>& pods, double now);
    // The feature queries per Prometheus that the namespace's models need.
    void plan_queries(NamespacePass& pass);
    // One instant query per feature and Prometheus, each waiting at most what is left of the tick.
    void read_metrics(NamespacePass& pass, Deadline& deadline, TickSummary& summary);
    // Steps the trackers of the autoscaler's pods, decides and queues each pod's writes.
    void track_pods(NamespacePass& pass, Work& work, AutoscalerState& state, Outcome& outcome,
                    const Deadline& deadline, TickSummary& summary, double now);
    // Steps each container's tracker on this tick's sample.
    PodReading step_trackers(NamespacePass& pass, Work& work, const Columns& columns,
                             const std::string& config, const nlohmann::json& pod,
                             PodState& pod_state, AutoscalerState& state, Outcome& outcome,
                             const Deadline& deadline, TickSummary& summary, double now);
    // By mode: queues the resize (InPlace) and the pod's label and annotations.
    void decide_pod_writes(const Work& work, const nlohmann::json& pod, const PodReading& reading,
                           PodState& pod_state, AutoscalerState& state, Outcome& outcome,
                           TickSummary& summary, double now);
    // Sets the conditions and queues the status when it changed.
    void update_status(const NamespacePass& pass, const Work& work, AutoscalerState& state,
                       Outcome& outcome, TickSummary& summary, double now);
    // Forgets trackers, pods and autoscalers not seen (but those of skipped namespaces).
    void forget_gone(const std::set<std::string>& skipped);

    // The recent samples of a restarted tracker's containers, one range query per Prometheus
    // and namespace per tick.
    const prom::FeatureHistory* history(NamespacePass& pass, const std::string& url,
                                        const Deadline& deadline, TickSummary& summary, double now);
    ModelEntry load_model(const std::string& ns, const ModelRef& ref);
    // VerticalPodAutoscalers of a namespace (none when their CRD is not installed), re-read every
    // kVpaRefreshSeconds.
    const std::vector<nlohmann::json>& vpas(const std::string& ns, double now);
    void log(const std::string& level, const std::string& message,
             const nlohmann::json& fields = {}) const;
    template <class F>
    auto api(const char* verb, F&& f) -> decltype(f());
    void remember(AutoscalerState& state, nlohmann::json decision);
    void remember_targets(AutoscalerState& state, const std::string& pod,
                          const std::vector<ContainerTarget>& targets, int phase,
                          const std::string& action, const std::string& reason, double now);
    void record_event(const kube::ObjectReference& pod, kube::EventType type,
                      const std::string& reason, const std::string& message);
    // The result of a queued resize, on the tick's thread.
    void resize_done(const std::string& autoscaler, const std::string& pod_key,
                     const kube::ObjectReference& pod, const PodDecision& decision, int phase,
                     double decided, const std::string& error);
    // Warning Events on the PhaseAutoscaler for what blocks it (reason -> message), each once
    // when it appears and then every kAutoscalerWarningRepeatSeconds while it lasts.
    std::map<std::string, std::string> problems(const Work& work, const Outcome& outcome,
                                                const AutoscalerState& state) const;
    void warn_autoscaler(const Work& work, AutoscalerState& state,
                         const std::map<std::string, std::string>& problems, double now);
    void report(const Work& work, const AutoscalerState& state, const Outcome& outcome) const;
    void set_condition(AutoscalerState& state, const std::string& type, bool status,
                       const std::string& reason, const std::string& message, double now,
                       long long generation);

    std::optional<kube::Client> kube_;  // for the informers; none over other clusters
    std::unique_ptr<ClusterApi> cluster_;
    std::unique_ptr<MetricsReader> metrics_;
    ReconcilerOptions options_;
    ReconcilerHooks hooks_;
    std::vector<std::unique_ptr<kube::Informer>> autoscaler_informers_;
    std::vector<std::unique_ptr<kube::Informer>> pod_informers_;
    std::unique_ptr<kube::Informer> node_informer_;  // none when options_.nodes is shared
    std::map<std::string, NodeSize> node_sizes_;     // this tick's, by node name
    std::shared_ptr<const model::PhaseModel> default_model_;
    std::string default_model_error_;
    std::map<std::string, ModelEntry> models_;            // ns/id
    std::map<std::string, Tracked> trackers_;             // ns/pod/container
    std::map<std::string, PodState> pods_;                // ns/pod
    std::map<std::string, AutoscalerState> autoscalers_;  // ns/name
    struct VpaList {
        double fetched = 0;
        std::vector<nlohmann::json> items;
    };
    std::map<std::string, VpaList> vpas_;  // by namespace
    std::optional<bool> vpa_installed_;
    double vpa_checked_ = 0;
    std::uint64_t events_queued_ = 0;
    // Last, so that it is destroyed first: its workers use the members above.
    WriteQueue writes_;
};

}  // namespace phasescale::control
