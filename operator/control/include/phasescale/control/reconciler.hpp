// The control loop (README.md): every tick, for each PhaseAutoscaler, select its Running pods,
// read their features with one Prometheus query per feature and namespace, step the container
// trackers, and act by mode: label (all modes), annotate (Recommend, InPlace), resize (InPlace).
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

#include "phasescale/control/decision.hpp"
#include "phasescale/control/spec.hpp"
#include "phasescale/control/tracker.hpp"
#include "phasescale/control/write_queue.hpp"

namespace phasescale::control {

// How often the VerticalPodAutoscaler CRD and objects are looked at again.
inline constexpr double kVpaRefreshSeconds = 60;

struct ReconcilerOptions {
    std::vector<std::string> namespaces;  // watched namespaces; empty: all
    std::chrono::milliseconds tick{15000};
    // Prometheus' scrape interval, for the rate() window (prom::rate_window).
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
};

// Whether a spec's prometheus.url ("" is the operator's own) is one the installer allowed. URLs
// compare without trailing slashes.
bool prometheus_allowed(const std::string& url, const std::string& own, const std::vector<std::string>& allowed);

// Optional callbacks, for the operator's own metrics and logs. Called on the tick's thread, but
// api_request, which the write workers call too.
struct ReconcilerHooks {
    std::function<void(std::size_t pods)> pods_tracked;
    std::function<void()> phase_transition;
    // A container's sample not believed (TrackerStep::rejected: non_finite, not_positive, too_large).
    std::function<void(const std::string& reason)> sample_rejected;
    std::function<void(const std::string& result)> resize;  // "ok", "error", "blocked"
    std::function<void(double seconds)> inference;
    // verb: "patch", "resize", "status", "event", "get"
    std::function<void(const std::string& verb, double seconds, bool ok)> api_request;
    std::function<void(const std::string& level, const std::string& message, const nlohmann::json& fields)> log;
};

struct TickSummary {
    std::size_t autoscalers = 0;
    std::size_t pods_tracked = 0;
    std::size_t prometheus_queries = 0;
    std::size_t resizes = 0;
    std::size_t resize_errors = 0;
    std::size_t blocked = 0;
    // Writes queued anew (one that replaced a waiting write of the same pod or status is not counted).
    std::size_t pod_patches = 0;
    std::size_t status_updates = 0;
    std::size_t writes_completed = 0;  // writes of earlier ticks whose result this tick took in
    std::size_t writes_waiting = 0;    // queued, not yet sent, when the tick ended
    // Namespaces left alone because the tick passed its deadline (nothing read, stepped or
    // written for them; their state kept for the next tick).
    std::size_t namespaces_skipped = 0;
};

class Reconciler {
public:
    // `prom` is the default Prometheus (a spec's prometheus.url gets a client of its own).
    Reconciler(kube::Client kube, prom::ClientConfig prom, ReconcilerOptions options, ReconcilerHooks hooks = {});
    ~Reconciler();
    Reconciler(const Reconciler&) = delete;
    Reconciler& operator=(const Reconciler&) = delete;

    // Informers of PhaseAutoscalers and Running pods in the watched namespaces.
    void start();
    void stop();
    bool wait_for_sync(std::chrono::milliseconds timeout) const;

    // One pass over the informers' stores, at `now` (unix seconds).
    TickSummary tick(double now);
    // The same over given objects (tests, benchmarks).
    TickSummary tick(const std::vector<kube::Store::ObjectPtr>& autoscalers, const std::vector<kube::Store::ObjectPtr>& pods,
                     double now);
    // Forgets the writes not sent yet (this replica stopped leading).
    std::size_t drop_pending_writes();

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
        std::optional<int> phase;
        bool seen = false;
    };
    struct PodState {
        std::string uid;
        PodGate gate;
        bool seen = false;
        std::string blocked;  // the last reason a resize was blocked, until one is made
    };
    struct AutoscalerState {
        std::set<int> phases_seen;
        nlohmann::json recent = nlohmann::json::array();
        nlohmann::json last_resize;
        nlohmann::json conditions = nlohmann::json::array();
        // A resize that failed since the last status: shown in ResizeBlocked once.
        std::string failed_reason, failed_message;
        bool seen = false;
    };

    ModelEntry load_model(const std::string& ns, const ModelRef& ref);
    // VerticalPodAutoscalers of a namespace (none when their CRD is not installed), re-read every
    // kVpaRefreshSeconds.
    const std::vector<nlohmann::json>& vpas(const std::string& ns, double now);
    prom::Client& prom_for(const std::string& url);
    void log(const std::string& level, const std::string& message, const nlohmann::json& fields = {}) const;
    template <class F>
    auto api(const char* verb, F&& f) -> decltype(f());
    void remember(AutoscalerState& state, nlohmann::json decision);
    void remember_targets(AutoscalerState& state, const std::string& pod, const std::vector<ContainerTarget>& targets,
                          int phase, const std::string& action, const std::string& reason, double now);
    void record_event(const kube::ObjectReference& pod, kube::EventType type, const std::string& reason,
                      const std::string& message);
    // The result of a queued resize, on the tick's thread.
    void resize_done(const std::string& autoscaler, const std::string& pod_key, const kube::ObjectReference& pod,
                     const PodDecision& decision, int phase, double decided, const std::string& error);
    void set_condition(AutoscalerState& state, const std::string& type, bool status, const std::string& reason,
                       const std::string& message, double now, long long generation);

    kube::Client kube_;
    prom::ClientConfig prom_config_;
    ReconcilerOptions options_;
    ReconcilerHooks hooks_;
    kube::EventRecorder events_;
    std::map<std::string, std::unique_ptr<prom::Client>> prom_clients_;
    std::vector<std::unique_ptr<kube::Informer>> autoscaler_informers_;
    std::vector<std::unique_ptr<kube::Informer>> pod_informers_;
    std::shared_ptr<const model::PhaseModel> default_model_;
    std::string default_model_error_;
    std::map<std::string, ModelEntry> models_;  // ns/id
    std::map<std::string, Tracked> trackers_;   // ns/pod/container
    std::map<std::string, PodState> pods_;      // ns/pod
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
