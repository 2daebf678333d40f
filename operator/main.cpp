// phasescale-operator: the controller. Watches PhaseAutoscalers and their pods, recognises each
// training container's phase from Prometheus metrics every tick and sizes it (the control loop:
// control/README.md). This file reads the flags and wires the parts; logs (log.hpp), metrics
// (metrics.hpp) and the HTTP endpoints (http.hpp) live in files of their own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <phasescale/control/pod.hpp>
#include <phasescale/control/reconciler.hpp>
#include <phasescale/control/server_check.hpp>
#include <phasescale/control/watchdog.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/config.hpp>
#include <phasescale/kube/leader_election.hpp>
#include <phasescale/loan/controller.hpp>
#include <phasescale/model/duration.hpp>
#include <phasescale/prom/client.hpp>
#include <phasescale/version.hpp>

#include "http.hpp"
#include "log.hpp"
#include "metrics.hpp"

namespace {

namespace app = phasescale::app;
namespace control = phasescale::control;
namespace kube = phasescale::kube;
namespace loan = phasescale::loan;
namespace prom = phasescale::prom;
using json = nlohmann::json;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

constexpr const char* kDescription =
    R"(phasescale-operator: sizes deep-learning training containers by their phase.

It watches the PhaseAutoscalers (phasescale.io/v1alpha1) of the watched namespaces, their
Running pods and the nodes (no container is given more than its node's allocatable). Every
--tick it reads the model's features for each namespace from Prometheus (one query per feature
and namespace), infers each container's phase, and by the autoscaler's mode:
  Off        recommends (as the VPA's Off): labels pods with phasescale.io/phase, annotates
             phase-name, phase-since and recommendation, writes status.recommendation
             (Recommend, the older name, means the same)
  InPlace    also resizes containers in place (pods/<name>/resize), never evicting or restarting
At start it checks that the API server serves pods/resize; where it does not, InPlace
autoscalers recommend only and are not Ready. The PhaseAutoscaler's status sums it up; Events
record resizes on the pods and what blocks an autoscaler on the PhaseAutoscaler. The tick
decides; its API writes are sent by --write-workers threads within --kube-qps/--kube-burst.

Logs: one JSON object per line on stdout. HTTP on --metrics-addr: /metrics (Prometheus text
format), /healthz (200 while the loop goes round; 503 once no tick has ended for
--stuck-after, so that the kubelet restarts a stuck operator), /readyz (200 once the
caches are synced, 503 before). SIGTERM or SIGINT stop it cleanly (the leader lease is released).

Example:
  phasescale-operator --prometheus-url http://prometheus:9090 --tick 15s --leader-elect
)";

// ---------------------------------------------------------------------------------- settings

// The flags, read and checked.
struct Settings {
    std::string kubeconfig, context, lease_namespace, lease_name = "phasescale-operator";
    bool allow_http_kube = false, leader_elect = false, capacity_loans = false;
    double kube_qps = 50;
    int kube_burst = 100;
    std::size_t write_workers = 8;
    std::vector<std::string> namespaces;
    std::string prometheus_url, token_file, prometheus_ca_file;
    std::vector<std::string> allowed_prometheus_urls;
    milliseconds tick{15s}, scrape{15s}, prometheus_timeout{10s}, stuck_after{60s};
    milliseconds phase_label_hold = control::kDefaultPhaseLabelHold;
    std::string metrics_addr = "127.0.0.1:8080";
    app::Level level = app::Level::Info;
};

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

// Reads the command line: the settings, or the exit code when the program must end here
// (0 after --help, 2 for bad flags, said on stderr).
std::variant<Settings, int> read_flags(int argc, char** argv) {
    Settings s;
    std::string tick = "15s", scrape = "15s", prometheus_timeout = "10s", stuck_after, namespaces,
                allowed;
    std::string log_level = "info";
    std::string phase_label_hold =
        std::to_string(control::kDefaultPhaseLabelHold.count() / 1000) + "s";
    if (const char* env = std::getenv("PHASESCALE_PROMETHEUS_URL")) s.prometheus_url = env;

    CLI::App app{kDescription, "phasescale-operator"};
    app.set_version_flag("--version", std::string("phasescale-operator ") + phasescale::kVersion +
                                          " (revision " + phasescale::kRevision + ")");
    app.add_option("--kubeconfig", s.kubeconfig,
                   "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster); "
                   "exec credential plugins and http:// proxy-url work (docs/kubeconfig.md)");
    app.add_option("--context", s.context, "kubeconfig context (default: the current context)");
    app.add_option("--prometheus-url", s.prometheus_url,
                   "Prometheus base URL (env PHASESCALE_PROMETHEUS_URL)");
    app.add_option("--prometheus-token-file", s.token_file,
                   "file holding a bearer token for Prometheus (re-read when it changes)");
    app.add_option("--prometheus-ca-file", s.prometheus_ca_file,
                   "PEM file of CAs that Prometheus' certificate may chain to, besides the "
                   "system's (a private CA)");
    app.add_option(
        "--prometheus-allowed-urls", allowed,
        "comma-separated Prometheus URLs a PhaseAutoscaler's spec.prometheus.url may name, besides "
        "--prometheus-url; the operator sends them its Prometheus credentials (default: none)");
    app.add_option("--prometheus-timeout", prometheus_timeout,
                   "timeout of one Prometheus query (a duration, docs/cli.md: Durations)")
        ->capture_default_str();
    app.add_option("--tick", tick,
                   "time between two reconcile passes, e.g. 15s, 500ms, 1m (a duration, "
                   "docs/cli.md: Durations)")
        ->capture_default_str();
    app.add_option(
           "--scrape-interval", scrape,
           "Prometheus' scrape interval of the cAdvisor metrics: CPU usage and throttling are "
           "rates over the latest one (irate), found within max(4 scrapes, --tick); a --tick "
           "shorter than it is warned about (a duration, docs/cli.md: Durations)")
        ->capture_default_str();
    app.add_option("--phase-label-hold", phase_label_hold,
                   "a pod's phasescale.io/phase label moves to a new phase once that phase has "
                   "held this long (a duration, docs/cli.md: Durations; 0: at once)")
        ->capture_default_str();
    app.add_flag(
        "--allow-insecure-kube-http", s.allow_http_kube,
        "accept an http:// Kubernetes API server (its token would travel in clear; tests only)");
    app.add_option("--kube-qps", s.kube_qps,
                   "Kubernetes API requests per second, sustained (client-side limit)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--kube-burst", s.kube_burst,
                   "Kubernetes API requests allowed in a burst above --kube-qps")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--write-workers", s.write_workers,
                   "threads sending the API writes (labels, annotations, resizes, Events, status) "
                   "outside the tick")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_option("--namespaces", namespaces,
                   "comma-separated namespaces to watch (default: all)");
    app.add_flag("--capacity-loans", s.capacity_loans,
                 "also run the CapacityLoan controller (loans idle inference nodes to training, "
                 "scales elastic jobs; "
                 "every --tick, on a thread of its own)");
    app.add_flag("--leader-elect", s.leader_elect,
                 "act only while holding the leader Lease (for several replicas)");
    app.add_option("--lease-namespace", s.lease_namespace,
                   "namespace of the Lease (default: the kubeconfig's or pod's namespace)");
    app.add_option("--lease-name", s.lease_name, "name of the Lease")->capture_default_str();
    app.add_option("--stuck-after", stuck_after,
                   "/healthz fails once no tick has ended for this long (a duration, docs/cli.md: "
                   "Durations; default: max(5 x --tick, 60s))");
    app.add_option("--metrics-addr", s.metrics_addr, "HOST:PORT for /metrics, /healthz and /readyz")
        ->capture_default_str();
    app.add_option("--log-level", log_level, "debug, info, warning or error")
        ->capture_default_str();
    try {
        app.parse(argc, argv);
        s.tick = phasescale::model::parse_duration(tick, "--tick");
        s.scrape = phasescale::model::parse_duration(scrape, "--scrape-interval");
        s.prometheus_timeout =
            phasescale::model::parse_duration(prometheus_timeout, "--prometheus-timeout");
        s.phase_label_hold = phase_label_hold == "0" ? milliseconds(0)
                                                     : phasescale::model::parse_duration(
                                                           phase_label_hold, "--phase-label-hold");
        s.stuck_after = stuck_after.empty()
                            ? std::max<milliseconds>(s.tick * 5, 60s)
                            : phasescale::model::parse_duration(stuck_after, "--stuck-after");
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const std::invalid_argument& e) {  // a duration (model/duration.hpp)
        std::cerr << "phasescale-operator: " << e.what() << "\n";
        return 2;
    }
    const auto level = app::parse_level(log_level);
    if (!level) {
        std::cerr << "phasescale-operator: bad --log-level\n";
        return 2;
    }
    if (s.prometheus_url.empty()) {
        std::cerr
            << "phasescale-operator: --prometheus-url (or PHASESCALE_PROMETHEUS_URL) is required\n";
        return 2;
    }
    s.level = *level;
    s.namespaces = split(namespaces, ',');
    s.allowed_prometheus_urls = split(allowed, ',');
    return s;
}

// A tick shorter than the scrape interval reads the same samples again: the phase model then
// steps on repeated features (docs/monitoring.md, "Scrape interval and tick").
void warn_if_tick_below_scrape(const Settings& s, app::Logger& logger) {
    if (s.tick >= s.scrape) return;
    logger.log("warning",
               "--tick is shorter than --scrape-interval: ticks between two scrapes read the same "
               "samples again; set --tick to at least the scrape interval",
               {{"tick_ms", s.tick.count()}, {"scrape_interval_ms", s.scrape.count()}});
}

// ------------------------------------------------------------------------------------ wiring

// SIGTERM and SIGINT, taken by a thread of their own: blocked in every thread, so make it before
// any other thread starts.
class StopSignals {
public:
    StopSignals() {
        sigemptyset(&signals_);
        sigaddset(&signals_, SIGTERM);
        sigaddset(&signals_, SIGINT);
        pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    }
    // Starts waiting for a signal; `logger` says which came.
    void start(app::Logger& logger) {
        thread_ = std::thread([this, &logger] {
            int sig = 0;
            sigwait(&signals_, &sig);
            logger.log("info", "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
            std::lock_guard lock(mutex_);
            stopping_ = true;
            wake_.notify_all();
        });
    }
    // Whatever way the program ends, the thread ends first (a SIGTERM of our own wakes its
    // sigwait when no signal came).
    ~StopSignals() {
        if (!thread_.joinable()) return;
        if (!stopping()) pthread_kill(thread_.native_handle(), SIGTERM);
        thread_.join();
    }
    bool stopping() {
        std::lock_guard lock(mutex_);
        return stopping_;
    }
    // Waits until `time` or a signal; true once stopping.
    bool wait_until(std::chrono::steady_clock::time_point time) {
        std::unique_lock lock(mutex_);
        return wake_.wait_until(lock, time, [&] { return stopping_; });
    }

private:
    sigset_t signals_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
};

std::string identity() {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::random_device rd;
    return std::string(host) + "-" + std::to_string(getpid()) + "-" + std::to_string(rd() % 100000);
}

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

kube::Config kube_config(const Settings& s) {
    kube::Config config =
        s.kubeconfig.empty()
            ? kube::Config::load_default(s.context)
            : kube::Config::from_kubeconfig(std::filesystem::path(s.kubeconfig), s.context);
    config.allow_http = s.allow_http_kube;
    config.qps = s.kube_qps;
    config.burst = s.kube_burst;
    return config;
}

prom::ClientConfig prometheus_config(const Settings& s, app::Metrics& metrics) {
    prom::ClientConfig c;
    c.url = s.prometheus_url;
    c.bearer_token_file = s.token_file;
    c.ca_file = s.prometheus_ca_file;
    c.timeout = s.prometheus_timeout;
    c.user_agent = "phasescale-operator";
    c.observer = app::prometheus_observer(metrics);
    return c;
}

control::ReconcilerOptions reconciler_options(const Settings& s) {
    control::ReconcilerOptions o;
    o.namespaces = s.namespaces;
    o.allowed_prometheus_urls = s.allowed_prometheus_urls;
    o.tick = s.tick;
    o.scrape_interval = s.scrape;
    o.prometheus_timeout = s.prometheus_timeout;
    o.write_workers = s.write_workers;
    o.phase_label_hold = s.phase_label_hold;
    return o;
}

// Campaigns for the Lease (a client of its own); `leading` follows it, and a replica that stops
// leading drops the writes it has not sent.
std::unique_ptr<kube::LeaderElector> elect_leader(const Settings& s, const kube::Config& config,
                                                  app::Metrics& metrics, app::Logger& logger,
                                                  std::atomic<bool>& leading,
                                                  control::Reconciler& reconciler) {
    kube::LeaderElectionConfig lc;
    lc.lease_namespace = s.lease_namespace.empty() ? config.default_namespace : s.lease_namespace;
    lc.lease_name = s.lease_name;
    lc.identity = identity();
    const std::string lease = lc.lease_namespace + "/" + lc.lease_name;
    kube::LeaderCallbacks cb;
    cb.on_started_leading = [&metrics, &logger, &leading, lease] {
        leading = true;
        metrics.leader.Set(1);
        logger.log("info", "started leading", {{"lease", lease}});
    };
    cb.on_stopped_leading = [&metrics, &logger, &leading, &reconciler] {
        leading = false;
        reconciler.drop_pending_writes();  // only a leader writes
        metrics.leader.Set(0);
        logger.log("info", "stopped leading");
    };
    cb.on_new_leader = [&logger](const std::string& who) {
        logger.log("info", "leader", {{"identity", who}});
    };
    auto elector = std::make_unique<kube::LeaderElector>(kube::Client(config), lc, cb);
    elector->start();
    return elector;
}

// One tick every s.tick while leading, until a stop signal; the watchdog beats on each round.
void run_ticks(const Settings& s, control::Reconciler& reconciler, const std::atomic<bool>& leading,
               control::LoopWatchdog& watchdog, StopSignals& stop, app::Metrics& metrics,
               app::Logger& logger) {
    auto next = std::chrono::steady_clock::now();
    while (!stop.wait_until(next)) {
        watchdog.beat();
        next += s.tick;
        if (std::chrono::steady_clock::now() > next)
            next = std::chrono::steady_clock::now() + s.tick;
        if (!leading) continue;
        const auto started = std::chrono::steady_clock::now();
        control::TickSummary t;
        try {
            t = reconciler.tick(unix_now());
        } catch (const std::exception& e) {
            logger.log("error", "tick failed", {{"error", e.what()}});
        }
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        app::record_tick(metrics, t, secs);
        logger.log("debug", "tick",
                   {{"seconds", secs},
                    {"autoscalers", t.autoscalers},
                    {"pods_tracked", t.pods_tracked},
                    {"prometheus_queries", t.prometheus_queries},
                    {"resizes", t.resizes},
                    {"blocked", t.blocked},
                    {"pod_patches", t.pod_patches},
                    {"status_updates", t.status_updates},
                    {"writes_completed", t.writes_completed},
                    {"writes_waiting", t.writes_waiting},
                    {"steps", t.step_seconds}});
    }
}

int run(const Settings& s, StopSignals& stop, app::Logger& logger) {
    kube::Config config = kube_config(s);
    // An exec credential plugin's stderr and runs.
    config.log = [&logger](const std::string& level, const std::string& message) {
        logger.log(level, message);
    };
    // The Lease has a client of its own; every other write goes through a fence that is open
    // only while this replica holds a fresh lease, so one that lost it mid-tick or mid-pass (a
    // slow Prometheus, a paused process) writes nothing.
    const kube::Config lease_config = config;
    std::unique_ptr<kube::LeaderElector> elector;
    if (s.leader_elect)
        config.write_fence = [&elector] { return elector && elector->holds_fresh_lease(); };
    kube::Client kube_client(config);
    app::Metrics metrics;
    // With loans on, one pod cache serves both controllers (not two over the same pods): every
    // namespace, every pod not finished, kept as the control loop keeps them.
    // Nodes likewise: one cache, kept as the loan controller keeps them (a superset of what the
    // control loop reads, their sizes).
    std::shared_ptr<kube::Informer> shared_pods, shared_nodes;
    if (s.capacity_loans) {
        kube::InformerOptions o;
        o.field_selector = loan::kPodFieldSelector;
        o.transform = control::trim_pod;
        shared_pods = std::make_shared<kube::Informer>(kube_client, kube::resources::pods, o);
        kube::InformerOptions n;
        n.transform = loan::trim_node;
        shared_nodes = std::make_shared<kube::Informer>(kube_client, kube::resources::nodes, n);
    }
    control::ReconcilerOptions options = reconciler_options(s);
    options.pods = shared_pods;
    options.nodes = shared_nodes;
    // Where pods/resize is missing, InPlace autoscalers recommend only and are not Ready.
    const control::ServerSupport server =
        control::check_server(*control::kube_discovery(kube_client));
    logger.log(server.pod_resize ? "info" : "warning", "API server",
               {{"version", server.version},
                {"pod_resize", server.pod_resize},
                {"message", server.message}});
    options.in_place_available = server.pod_resize;
    options.in_place_unavailable_message = server.message;
    control::Reconciler reconciler(kube_client, prometheus_config(s, metrics), options,
                                   app::reconciler_hooks(metrics, logger));

    std::atomic<bool> leading{!s.leader_elect}, ready{false};
    // Alive while the loop goes round (a follower too); a pass stuck past the window fails.
    control::LoopWatchdog watchdog(s.stuck_after);
    std::optional<app::HttpEndpoints> http;
    try {
        http.emplace(
            s.metrics_addr,
            [&] {
                return std::pair<int, std::string>{200, metrics.text()};
            },
            [&] {
                return watchdog.stuck()
                           ? std::pair<int, std::string>{503, "no tick has ended for too long\n"}
                           : std::pair<int, std::string>{200, "ok\n"};
            },
            [&] {
                return ready ? std::pair<int, std::string>{200, "ok\n"}
                             : std::pair<int, std::string>{503, "not ready\n"};
            });
    } catch (const std::exception& e) {
        logger.log("error", "cannot serve HTTP",
                   {{"address", s.metrics_addr}, {"error", e.what()}});
        return 1;
    }
    stop.start(logger);

    if (s.leader_elect)
        elector = elect_leader(s, lease_config, metrics, logger, leading, reconciler);
    else
        metrics.leader.Set(1);

    logger.log("info", "starting",
               {{"kube", config.source},
                {"prometheus", prom::redact_url(s.prometheus_url)},
                {"tick_ms", s.tick.count()},
                {"namespaces", s.namespaces},
                {"leader_elect", s.leader_elect},
                {"metrics_addr", s.metrics_addr}});
    if (shared_pods) shared_pods->start();
    if (shared_nodes) shared_nodes->start();
    reconciler.start();
    while (!stop.stopping() && !reconciler.wait_for_sync(200ms)) {
    }
    ready = true;
    logger.log("info", "caches synced");

    // The CapacityLoan controller (operator/loan/), acting only while this replica leads.
    std::unique_ptr<loan::Controller> loans;
    std::jthread loans_thread;
    if (s.capacity_loans) {
        loan::ControllerOptions loan_options;
        loan_options.interval = s.tick;
        loan_options.pods = shared_pods;
        loan_options.nodes = shared_nodes;
        loan::ControllerHooks loan_hooks;
        loan_hooks.log = [&logger](const std::string& l, const std::string& m, const json& f) {
            logger.log(l, m, f);
        };
        loan_hooks.loan_reconciled = [&metrics](const loan::LoanReport& r) {
            metrics.observe_loan(r);
        };
        loan_hooks.loan_gone = [&metrics](const std::string& name) { metrics.forget(name); };
        loans = std::make_unique<loan::Controller>(kube_client, loan_options, loan_hooks);
        loans_thread = std::jthread([&loans, &leading](std::stop_token st) {
            loans->run(st, [&leading] { return leading.load(); });
        });
        logger.log("info", "capacity loans on");
    }

    run_ticks(s, reconciler, leading, watchdog, stop, metrics, logger);

    ready = false;
    if (loans_thread.joinable()) {
        loans_thread.request_stop();
        loans_thread.join();
    }
    reconciler.stop();
    if (shared_pods) shared_pods->stop();
    if (shared_nodes) shared_nodes->stop();
    if (elector) elector->stop();  // releases the lease
    http->close();
    logger.log("info", "stopped");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // glibc gives every thread that allocates an arena of its own (up to 8 per core); with the
    // HTTP client's and the write workers' threads, freed memory then stays spread over many
    // arenas: at 5,000 pods the RSS was 195 MB with them, 108 MB with two (bench/scale).
    // MALLOC_ARENA_MAX in the environment still decides when set.
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
    const auto flags = read_flags(argc, argv);
    if (const int* code = std::get_if<int>(&flags)) return *code;
    const Settings& settings = std::get<Settings>(flags);
    app::Logger logger;
    logger.set_level(settings.level);
    warn_if_tick_below_scrape(settings, logger);
    StopSignals stop;  // before any thread starts
    try {
        return run(settings, stop, logger);
    } catch (const std::exception& e) {
        logger.log("error", "fatal", {{"error", e.what()}});
        return 1;
    }
}
