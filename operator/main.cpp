// phasescale-operator: the controller. Watches PhaseAutoscalers and their pods, recognises each
// training container's phase from Prometheus metrics every tick and sizes it (see
// ../shared/DESIGN.md, "The operator's data flow"). JSON logs, one object per line, on stdout;
// /metrics, /healthz and /readyz on --metrics-addr.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <CivetServer.h>
#include <nlohmann/json.hpp>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <phasescale/control/reconciler.hpp>
#include <phasescale/control/watchdog.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/config.hpp>
#include <phasescale/kube/leader_election.hpp>
#include <phasescale/loan/controller.hpp>
#include <phasescale/model/duration.hpp>
#include <phasescale/prom/client.hpp>

namespace {

namespace control = phasescale::control;
namespace kube = phasescale::kube;
namespace loan = phasescale::loan;
namespace prom = phasescale::prom;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kDescription = R"(phasescale-operator: sizes deep-learning training containers by their phase.

It watches the PhaseAutoscalers (phasescale.io/v1alpha1) of the watched namespaces and their
Running pods. Every --tick it reads the model's features for each namespace from Prometheus (one
query per feature and namespace), infers each container's phase, and by the autoscaler's mode:
  Off        labels pods with phasescale.io/phase
  Recommend  also annotates phasescale.io/phase-name, phase-since and recommendation
  InPlace    also resizes containers in place (pods/<name>/resize), never evicting or restarting
The PhaseAutoscaler's status sums it up; Events record resizes. The tick decides; its API
writes are sent by --write-workers threads within --kube-qps/--kube-burst.

Logs: one JSON object per line on stdout. HTTP on --metrics-addr: /metrics (Prometheus text
format), /healthz (200 while the loop goes round; 503 once no tick has ended for
--stuck-after, so that the kubelet restarts a stuck operator), /readyz (200 once the
caches are synced, 503 before). SIGTERM or SIGINT stop it cleanly (the leader lease is released).

Example:
  phasescale-operator --prometheus-url http://prometheus:9090 --tick 15s --leader-elect
)";

// ----------------------------------------------------------------------------------- logging

enum class Level { Debug = 0, Info = 1, Warning = 2, Error = 3 };

std::optional<Level> parse_level(const std::string& s) {
    if (s == "debug") return Level::Debug;
    if (s == "info") return Level::Info;
    if (s == "warning" || s == "warn") return Level::Warning;
    if (s == "error") return Level::Error;
    return std::nullopt;
}

class Logger {
public:
    void set_level(Level l) { level_ = l; }
    void log(const std::string& level, const std::string& message, const json& fields = {}) {
        const Level l = parse_level(level).value_or(Level::Info);
        if (l < level_) return;
        json line = json::object();
        const auto now = std::chrono::system_clock::now();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
        const std::time_t secs = static_cast<std::time_t>(ms / 1000);
        std::tm tm{};
        gmtime_r(&secs, &tm);
        char buf[40];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
        char full[48];
        std::snprintf(full, sizeof full, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
        line["time"] = full;
        line["level"] = level == "warn" ? "warning" : level;
        line["msg"] = message;
        if (fields.is_object())
            for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = it.value();
        const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
        std::lock_guard lock(mutex_);
        std::cout << text << '\n' << std::flush;
    }

private:
    std::mutex mutex_;
    Level level_ = Level::Info;
};

Logger logger;

// ----------------------------------------------------------------------------------- metrics

struct Metrics {
    std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
    prometheus::Gauge& pods_tracked;
    prometheus::Counter& phase_transitions;
    prometheus::Family<prometheus::Counter>& samples_rejected;
    prometheus::Family<prometheus::Counter>& resizes;
    prometheus::Histogram& inference;
    prometheus::Family<prometheus::Histogram>& prom_latency;
    prometheus::Family<prometheus::Counter>& prom_errors;
    prometheus::Family<prometheus::Histogram>& api_latency;
    prometheus::Family<prometheus::Counter>& api_errors;
    prometheus::Histogram& tick_seconds;
    prometheus::Counter& ticks;
    prometheus::Counter& namespaces_skipped;
    prometheus::Gauge& leader;
    prometheus::Gauge& writes_waiting;
    std::mutex mutex;  // Family::Add is thread-safe; this guards our label lookups

    static prometheus::Histogram::BucketBoundaries latency_buckets() {
        return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    }

    Metrics()
        : pods_tracked(prometheus::BuildGauge().Name("phasescale_pods_tracked").Help("Pods tracked by PhaseAutoscalers in the last tick").Register(*registry).Add({})),
          phase_transitions(prometheus::BuildCounter().Name("phasescale_phase_transitions_total").Help("Stable phase changes of tracked containers").Register(*registry).Add({})),
          samples_rejected(prometheus::BuildCounter().Name("phasescale_samples_rejected_total").Help("Container samples skipped as impossible, by reason (non_finite, not_positive, too_large)").Register(*registry)),
          resizes(prometheus::BuildCounter().Name("phasescale_resizes_total").Help("In-place resizes by result (ok, error, blocked)").Register(*registry)),
          inference(prometheus::BuildHistogram().Name("phasescale_inference_seconds").Help("Time of one container's phase inference and recommendation").Register(*registry).Add({}, prometheus::Histogram::BucketBoundaries{1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2})),
          prom_latency(prometheus::BuildHistogram().Name("phasescale_prometheus_request_seconds").Help("Prometheus API request latency by endpoint").Register(*registry)),
          prom_errors(prometheus::BuildCounter().Name("phasescale_prometheus_request_errors_total").Help("Failed Prometheus requests by endpoint and outcome").Register(*registry)),
          api_latency(prometheus::BuildHistogram().Name("phasescale_kube_request_seconds").Help("Kubernetes API request latency by verb").Register(*registry)),
          api_errors(prometheus::BuildCounter().Name("phasescale_kube_request_errors_total").Help("Failed Kubernetes API requests by verb").Register(*registry)),
          tick_seconds(prometheus::BuildHistogram().Name("phasescale_tick_seconds").Help("Duration of one reconcile tick").Register(*registry).Add({}, latency_buckets())),
          ticks(prometheus::BuildCounter().Name("phasescale_ticks_total").Help("Reconcile ticks run").Register(*registry).Add({})),
          namespaces_skipped(prometheus::BuildCounter().Name("phasescale_namespaces_skipped_total").Help("Namespaces a tick left alone because it passed its deadline (a slow Prometheus)").Register(*registry).Add({})),
          leader(prometheus::BuildGauge().Name("phasescale_leader").Help("1 while this replica leads").Register(*registry).Add({})),
          writes_waiting(prometheus::BuildGauge().Name("phasescale_writes_waiting").Help("API writes queued and not yet sent at the end of the last tick").Register(*registry).Add({})) {
        for (const char* r : {"ok", "error", "blocked"}) resizes.Add({{"result", r}});
    }
};

// ------------------------------------------------------------------------------------- HTTP

class TextHandler : public CivetHandler {
public:
    using Body = std::function<std::pair<int, std::string>()>;
    TextHandler(Body body, std::string content_type) : body_(std::move(body)), type_(std::move(content_type)) {}
    bool handleGet(CivetServer*, struct mg_connection* conn) override {
        const auto [status, text] = body_();
        mg_printf(conn, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
                  status == 200 ? "OK" : "Service Unavailable", type_.c_str(), text.size());
        mg_write(conn, text.data(), text.size());
        return true;
    }

private:
    Body body_;
    std::string type_;
};

// --------------------------------------------------------------------------------- arguments

// A flag's duration (model/duration.hpp); a bad one is said on stderr, naming the flag.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text, const char* flag) {
    try {
        return phasescale::model::parse_duration(text, flag);
    } catch (const std::invalid_argument& e) {
        std::cerr << "phasescale-operator: " << e.what() << "\n";
        return std::nullopt;
    }
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::string identity() {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::random_device rd;
    return std::string(host) + "-" + std::to_string(getpid()) + "-" + std::to_string(rd() % 100000);
}

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
    // glibc gives every thread that allocates an arena of its own (up to 8 per core); with the
    // HTTP client's and the write workers' threads, freed memory then stays spread over many
    // arenas: at 5,000 pods the RSS was 195 MB with them, 108 MB with two (bench/scale).
    // MALLOC_ARENA_MAX in the environment still decides when set.
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
    std::string kubeconfig, context, prometheus_url, token_file, tick_text = "15s", scrape_text = "15s";
    std::string prometheus_ca_file, allowed_prometheus_text, stuck_after_text;
    bool allow_http_kube = false;
    std::string namespaces_text, lease_namespace, lease_name = "phasescale-operator";
    std::string metrics_addr = "127.0.0.1:8080", log_level = "info", prometheus_timeout_text = "10s";
    bool leader_elect = false;
    bool capacity_loans = false;
    double kube_qps = 50;
    int kube_burst = 100;
    std::size_t write_workers = 8;
    if (const char* env = std::getenv("PHASESCALE_PROMETHEUS_URL")) prometheus_url = env;

    CLI::App app{kDescription, "phasescale-operator"};
    app.add_option("--kubeconfig", kubeconfig, "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)");
    app.add_option("--context", context, "kubeconfig context (default: the current context)");
    app.add_option("--prometheus-url", prometheus_url, "Prometheus base URL (env PHASESCALE_PROMETHEUS_URL)");
    app.add_option("--prometheus-token-file", token_file, "file holding a bearer token for Prometheus (re-read when it changes)");
    app.add_option("--prometheus-ca-file", prometheus_ca_file,
                   "PEM file of CAs that Prometheus' certificate may chain to, besides the system's (a private CA)");
    app.add_option("--prometheus-allowed-urls", allowed_prometheus_text,
                   "comma-separated Prometheus URLs a PhaseAutoscaler's spec.prometheus.url may name, besides "
                   "--prometheus-url; the operator sends them its Prometheus credentials (default: none)");
    app.add_option("--prometheus-timeout", prometheus_timeout_text, "timeout of one Prometheus query (a duration, README: Durations)")->capture_default_str();
    app.add_option("--tick", tick_text, "time between two reconcile passes, e.g. 15s, 500ms, 1m (a duration, README: Durations)")->capture_default_str();
    app.add_option("--scrape-interval", scrape_text, "Prometheus' scrape interval, for the rate() window (a duration, README: Durations)")->capture_default_str();
    app.add_flag("--allow-insecure-kube-http", allow_http_kube,
                 "accept an http:// Kubernetes API server (its token would travel in clear; tests only)");
    app.add_option("--kube-qps", kube_qps, "Kubernetes API requests per second, sustained (client-side limit)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--kube-burst", kube_burst, "Kubernetes API requests allowed in a burst above --kube-qps")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--write-workers", write_workers,
                   "threads sending the API writes (labels, annotations, resizes, Events, status) outside the tick")
        ->capture_default_str()->check(CLI::Range(1, 256));
    app.add_option("--namespaces", namespaces_text, "comma-separated namespaces to watch (default: all)");
    app.add_flag("--capacity-loans", capacity_loans,
                 "also run the CapacityLoan controller (loans idle inference nodes to training, scales elastic jobs; "
                 "every --tick, on a thread of its own)");
    app.add_flag("--leader-elect", leader_elect, "act only while holding the leader Lease (for several replicas)");
    app.add_option("--lease-namespace", lease_namespace, "namespace of the Lease (default: the kubeconfig's or pod's namespace)");
    app.add_option("--lease-name", lease_name, "name of the Lease")->capture_default_str();
    app.add_option("--stuck-after", stuck_after_text,
                   "/healthz fails once no tick has ended for this long (a duration, README: Durations; default: max(5 x --tick, 60s))");
    app.add_option("--metrics-addr", metrics_addr, "HOST:PORT for /metrics, /healthz and /readyz")->capture_default_str();
    app.add_option("--log-level", log_level, "debug, info, warning or error")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    const auto level = parse_level(log_level);
    const auto tick = parse_duration(tick_text, "--tick");
    const auto scrape = parse_duration(scrape_text, "--scrape-interval");
    const auto prom_timeout = parse_duration(prometheus_timeout_text, "--prometheus-timeout");
    using std::chrono::milliseconds;
    const std::optional<milliseconds> stuck_after =
        !stuck_after_text.empty() ? parse_duration(stuck_after_text, "--stuck-after")
        : tick                    ? std::optional(std::max<milliseconds>(*tick * 5, std::chrono::seconds(60)))
                                  : std::nullopt;
    if (!tick || !scrape || !prom_timeout || !stuck_after) return 2;
    if (!level) {
        std::cerr << "phasescale-operator: bad --log-level\n";
        return 2;
    }
    if (prometheus_url.empty()) {
        std::cerr << "phasescale-operator: --prometheus-url (or PHASESCALE_PROMETHEUS_URL) is required\n";
        return 2;
    }
    logger.set_level(*level);

    // SIGTERM and SIGINT go to a thread of their own: blocked everywhere before any thread starts.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    std::atomic<bool> leading{!leader_elect};
    std::atomic<bool> ready{false};

    try {
        kube::Config config = kubeconfig.empty() ? kube::Config::load_default(context)
                                                 : kube::Config::from_kubeconfig(std::filesystem::path(kubeconfig), context);
        config.allow_http = allow_http_kube;
        config.qps = kube_qps;
        config.burst = kube_burst;
        // The Lease has a client of its own; every other write goes through a fence that is open
        // only while this replica holds a fresh lease, so one that lost it mid-tick or mid-pass
        // (a slow Prometheus, a paused process) writes nothing.
        const kube::Config lease_config = config;
        std::unique_ptr<kube::LeaderElector> elector;
        if (leader_elect) config.write_fence = [&elector] { return elector && elector->holds_fresh_lease(); };
        kube::Client kube_client(config);
        Metrics metrics;

        prom::ClientConfig prom_config;
        prom_config.url = prometheus_url;
        prom_config.bearer_token_file = token_file;
        prom_config.ca_file = prometheus_ca_file;
        prom_config.timeout = *prom_timeout;
        prom_config.user_agent = "phasescale-operator";
        prom_config.observer = [&metrics](const prom::RequestRecord& r) {
            const std::string endpoint(r.endpoint);
            metrics.prom_latency.Add({{"endpoint", endpoint}}, Metrics::latency_buckets()).Observe(r.latency.count());
            if (r.outcome != prom::Outcome::Ok)
                metrics.prom_errors.Add({{"endpoint", endpoint}, {"outcome", prom::to_string(r.outcome)}}).Increment();
        };

        control::ReconcilerOptions options;
        options.namespaces = split(namespaces_text, ',');
        options.allowed_prometheus_urls = split(allowed_prometheus_text, ',');
        options.tick = *tick;
        options.scrape_interval = *scrape;
        options.prometheus_timeout = *prom_timeout;
        options.write_workers = write_workers;
        control::ReconcilerHooks hooks;
        hooks.pods_tracked = [&](std::size_t n) { metrics.pods_tracked.Set(static_cast<double>(n)); };
        hooks.phase_transition = [&] { metrics.phase_transitions.Increment(); };
        hooks.sample_rejected = [&](const std::string& reason) { metrics.samples_rejected.Add({{"reason", reason}}).Increment(); };
        hooks.resize = [&](const std::string& result) { metrics.resizes.Add({{"result", result}}).Increment(); };
        hooks.inference = [&](double s) { metrics.inference.Observe(s); };
        hooks.api_request = [&](const std::string& verb, double s, bool ok) {
            metrics.api_latency.Add({{"verb", verb}}, Metrics::latency_buckets()).Observe(s);
            if (!ok) metrics.api_errors.Add({{"verb", verb}}).Increment();
        };
        hooks.log = [](const std::string& l, const std::string& m, const json& f) { logger.log(l, m, f); };

        control::Reconciler reconciler(kube_client, prom_config, options, hooks);

        // HTTP endpoints (the handlers outlive the server).
        TextHandler metrics_handler(
            [&] {
                prometheus::TextSerializer s;
                return std::pair<int, std::string>{200, s.Serialize(metrics.registry->Collect())};
            },
            "text/plain; version=0.0.4");
        // Alive while the loop goes round (a follower too); a pass stuck past the window fails.
        control::LoopWatchdog watchdog(*stuck_after);
        TextHandler healthz(
            [&] {
                return watchdog.stuck() ? std::pair<int, std::string>{503, "no tick has ended for too long\n"}
                                        : std::pair<int, std::string>{200, "ok\n"};
            },
            "text/plain");
        TextHandler readyz(
            [&] {
                return ready ? std::pair<int, std::string>{200, "ok\n"} : std::pair<int, std::string>{503, "not ready\n"};
            },
            "text/plain");
        std::vector<std::string> civet_options{"listening_ports", metrics_addr, "num_threads", "2"};
        std::unique_ptr<CivetServer> server;
        try {
            server = std::make_unique<CivetServer>(civet_options);
        } catch (const std::exception& e) {
            logger.log("error", "cannot serve HTTP", {{"address", metrics_addr}, {"error", e.what()}});
            return 1;
        }
        server->addHandler("/metrics", metrics_handler);
        server->addHandler("/healthz", healthz);
        server->addHandler("/readyz", readyz);

        std::thread signals([&] {
            int sig = 0;
            sigwait(&stop_signals, &sig);
            logger.log("info", "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
            std::lock_guard lock(mutex);
            stopping = true;
            wake.notify_all();
        });
        // Whatever way main leaves this scope, the signal thread ends first (a SIGTERM of our own
        // wakes its sigwait when no signal came).
        struct JoinSignals {
            std::thread& thread;
            std::mutex& mutex;
            bool& stopping;
            ~JoinSignals() {
                bool done = false;
                {
                    std::lock_guard lock(mutex);
                    done = stopping;
                }
                if (!done) pthread_kill(thread.native_handle(), SIGTERM);
                thread.join();
            }
        } join_signals{signals, mutex, stopping};

        if (leader_elect) {
            kube::LeaderElectionConfig lc;
            lc.lease_namespace = lease_namespace.empty() ? config.default_namespace : lease_namespace;
            lc.lease_name = lease_name;
            lc.identity = identity();
            kube::LeaderCallbacks cb;
            const std::string lease = lc.lease_namespace + "/" + lc.lease_name;
            cb.on_started_leading = [&metrics, &leading, &wake, lease] {
                leading = true;
                metrics.leader.Set(1);
                logger.log("info", "started leading", {{"lease", lease}});
                wake.notify_all();
            };
            cb.on_stopped_leading = [&metrics, &leading, &reconciler] {
                leading = false;
                reconciler.drop_pending_writes();  // only a leader writes
                metrics.leader.Set(0);
                logger.log("info", "stopped leading");
            };
            cb.on_new_leader = [](const std::string& who) { logger.log("info", "leader", {{"identity", who}}); };
            elector = std::make_unique<kube::LeaderElector>(kube::Client(lease_config), lc, cb);
            elector->start();
        } else {
            metrics.leader.Set(1);
        }

        logger.log("info", "starting", {{"kube", config.source}, {"prometheus", prom::redact_url(prometheus_url)},
                                        {"tick_ms", tick->count()}, {"namespaces", options.namespaces},
                                        {"leader_elect", leader_elect}, {"metrics_addr", metrics_addr}});
        reconciler.start();
        while (true) {
            {
                std::unique_lock lock(mutex);
                if (stopping) break;
            }
            if (reconciler.wait_for_sync(200ms)) break;
        }
        ready = true;
        logger.log("info", "caches synced");

        // The CapacityLoan controller (operator/loan/), acting only while this replica leads.
        std::unique_ptr<loan::Controller> loans;
        std::jthread loans_thread;
        if (capacity_loans) {
            loan::ControllerOptions loan_options;
            loan_options.interval = *tick;
            loan::ControllerHooks loan_hooks;
            loan_hooks.log = [](const std::string& l, const std::string& m, const json& f) { logger.log(l, m, f); };
            loans = std::make_unique<loan::Controller>(kube_client, loan_options, loan_hooks);
            loans_thread = std::jthread([&loans, &leading](std::stop_token stop) {
                loans->run(stop, [&leading] { return leading.load(); });
            });
            logger.log("info", "capacity loans on");
        }

        auto next = std::chrono::steady_clock::now();
        while (true) {
            {
                std::unique_lock lock(mutex);
                wake.wait_until(lock, next, [&] { return stopping; });
                if (stopping) break;
            }
            watchdog.beat();
            next += *tick;
            if (std::chrono::steady_clock::now() > next) next = std::chrono::steady_clock::now() + *tick;
            if (!leading) continue;
            const auto started = std::chrono::steady_clock::now();
            control::TickSummary s;
            try {
                s = reconciler.tick(unix_now());
            } catch (const std::exception& e) {
                logger.log("error", "tick failed", {{"error", e.what()}});
            }
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            metrics.tick_seconds.Observe(secs);
            metrics.ticks.Increment();
            metrics.namespaces_skipped.Increment(static_cast<double>(s.namespaces_skipped));
            metrics.writes_waiting.Set(static_cast<double>(s.writes_waiting));
            logger.log("debug", "tick", {{"seconds", secs}, {"autoscalers", s.autoscalers}, {"pods_tracked", s.pods_tracked},
                                        {"prometheus_queries", s.prometheus_queries}, {"resizes", s.resizes},
                                        {"blocked", s.blocked}, {"pod_patches", s.pod_patches},
                                        {"status_updates", s.status_updates}, {"writes_completed", s.writes_completed},
                                        {"writes_waiting", s.writes_waiting}});
        }

        ready = false;
        if (loans_thread.joinable()) {
            loans_thread.request_stop();
            loans_thread.join();
        }
        reconciler.stop();
        if (elector) elector->stop();  // releases the lease
        server->close();
        logger.log("info", "stopped");
        return 0;
    } catch (const std::exception& e) {
        logger.log("error", "fatal", {{"error", e.what()}});
        return 1;
    }
}
