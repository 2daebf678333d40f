// phasescale-replay-exporter: serves a resource trace as cAdvisor-style Prometheus metrics, and
// optionally as a kubelet's resource metrics over HTTPS, with trace time compressed, for the
// operator's end-to-end tests. See --help.
#include <pthread.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <phasescale/prom/pod_selector.hpp>

#include "replay.hpp"
#include "serve.hpp"

namespace {

using phasescale::replay::Page;

constexpr const char* kDescription =
    R"(phasescale-replay-exporter: serves the executions of resource traces as cAdvisor-style
Prometheus metrics at http://HOST:PORT/metrics, with trace time compressed by --speed, and with
--kubelet-listen also as a kubelet's resource metrics for metrics-server, over HTTPS.

Each execution (the rows of one id, see --id-column) becomes a pod of --namespace with one
container (--container), named by --pod-map or by its id, and gets two series:
  container_cpu_usage_seconds_total{namespace,pod,container}   counter: CPU seconds, whose rate
                                                                per wall second is the trace's cores
  container_memory_working_set_bytes{namespace,pod,container}  gauge: the trace's bytes
A sample holds until the next one; the last holds for the interval before it. When an
execution's last sample is over, its series disappear (the pod ended), unless --loop.
With --pod-label, also kube_pod_labels{namespace,pod,label_KEY="VALUE"} 1 per running pod, as
kube-state-metrics serves it (for selecting pods by label in PromQL).
With --extra-metrics FILE, FILE's text (exposition format) is appended to every scrape, read
again each time: a test serves kube-state-metrics' or cAdvisor's other series through it and
changes them by replacing the file (rename it into place, so no scrape reads half of it).
Also served: phasescale_replay_trace_seconds, phasescale_replay_pods_running; /healthz.

The kubelet endpoint (--kubelet-listen, with --kubelet-tls-cert and --kubelet-tls-key): the same
pods as one node's kubelet serves them to metrics-server, at https://HOST:PORT/metrics/resource
(and /healthz), in kubelet v1.35's names, labels and types, every sample stamped with the
scrape's wall clock in milliseconds:
  container_cpu_usage_seconds_total, container_memory_working_set_bytes  {container,namespace,pod}
  container_start_time_seconds   when the pod's replay started (seconds since the epoch)
  pod_cpu_usage_seconds_total, pod_memory_working_set_bytes              {namespace,pod}
  node_cpu_usage_seconds_total   the CPU seconds of every pod so far, ended ones included
  node_memory_working_set_bytes  the running pods' sum
  resource_scrape_error 0
The CPU counters are the /metrics counter at the same wall time. One exporter is one node: point
a node's InternalIP and kubelet port (status.daemonEndpoints) at it, and metrics-server serves
the pods' usage as metrics.k8s.io.

Example: 30 s of trace per wall second, two executions named after pods:
  phasescale-replay-exporter --trace run.csv --namespace train --listen 127.0.0.1:9400 \
      --speed 30 --pod-map 17=trainer-a,42=trainer-b
and the same pods also as a kubelet on 127.0.0.2:10250 (certificate for IP 127.0.0.2):
  phasescale-replay-exporter --trace run.csv --namespace train --listen 127.0.0.1:9400 \
      --speed 30 --pod-map 17=trainer-a,42=trainer-b --kubelet-listen 127.0.0.2:10250 \
      --kubelet-tls-cert kubelet.crt --kubelet-tls-key kubelet.key
)";

void block_stop_signals(sigset_t& set) {
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// The extra exposition text; throws when the file cannot be read (the scrape fails, visibly).
std::string read_extra(const std::string& path) {
    if (path.empty()) return "";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read --extra-metrics " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Wall time since the exporter started, in milliseconds: from the monotonic clock, so that a step
// of the system clock does not make the counters jump, anchored to the epoch at the start for the
// kubelet's timestamps. Both endpoints read it, so they agree at every millisecond.
struct ReplayClock {
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::int64_t started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    std::int64_t now_ms() const {
        return started_ms + std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    }
    double elapsed_seconds() const { return static_cast<double>(now_ms() - started_ms) / 1000.0; }
};

}  // namespace

int main(int argc, char** argv) {
    using phasescale::replay::Options;
    Options o;
    std::vector<std::string> traces;
    std::string listen = "127.0.0.1:9400";
    std::string pod_map;
    std::vector<std::string> pod_labels;
    std::string extra_metrics;
    std::string kubelet_listen, kubelet_cert, kubelet_key;

    CLI::App app{kDescription, "phasescale-replay-exporter"};
    app.add_option("--trace", traces, "trace CSV file(s), comma-separated or repeated")
        ->required()
        ->delimiter(',')
        ->check(CLI::ExistingFile);
    app.add_option("--namespace", o.ns, "namespace label of every series")->required();
    app.add_option("--listen", listen, "HOST:PORT to serve /metrics on (HTTP)")
        ->capture_default_str();
    app.add_option("--speed", o.speed, "trace seconds per wall second")->capture_default_str();
    app.add_option("--id-column", o.id_column, "column that tells executions apart")
        ->capture_default_str();
    app.add_option("--time-column", o.time_column, "timestamp column (unix seconds)")
        ->capture_default_str();
    app.add_option("--cpu-column", o.cpu_column, "CPU cores column")->capture_default_str();
    app.add_option("--memory-column", o.memory_column, "working-set bytes column")
        ->capture_default_str();
    app.add_option("--pod-map", pod_map,
                   "pod names: ID=POD,... (ID an execution id, or #INDEX in trace order)");
    app.add_option("--container", o.container, "container label of every series")
        ->capture_default_str();
    app.add_option("--align", o.align,
                   "start: every execution starts at once; trace: executions keep their offsets in "
                   "the trace")
        ->capture_default_str()
        ->check(CLI::IsMember({"start", "trace"}));
    app.add_option("--pod-label", pod_labels,
                   "KEY=VALUE: a label of every pod, served as kube_pod_labels (repeatable)");
    app.add_option("--extra-metrics", extra_metrics,
                   "exposition-format file appended to every scrape, read each time");
    app.add_flag("--loop", o.loop, "replay each execution again and again instead of ending it");
    app.add_option("--kubelet-listen", kubelet_listen,
                   "HOST:PORT to also serve the kubelet's /metrics/resource on (HTTPS)");
    app.add_option("--kubelet-tls-cert", kubelet_cert,
                   "PEM certificate (chain) of the kubelet endpoint, for HOST's IP or name")
        ->check(CLI::ExistingFile);
    app.add_option("--kubelet-tls-key", kubelet_key, "PEM private key of --kubelet-tls-cert")
        ->check(CLI::ExistingFile);
    CLI11_PARSE(app, argc, argv);
    o.traces = traces;

    sigset_t stop_signals;
    block_stop_signals(stop_signals);  // before any thread starts, so that only sigwait sees them

    try {
        o.pod_map = phasescale::replay::parse_pod_map(pod_map);
        const auto [host, port] = phasescale::replay::parse_listen(listen);
        if (kubelet_listen.empty() && !(kubelet_cert.empty() && kubelet_key.empty()))
            throw std::invalid_argument(
                "--kubelet-tls-cert and --kubelet-tls-key are for --kubelet-listen, not given");
        auto replay = phasescale::replay::Replay::from_options(o);
        std::map<std::string, std::string> labels;
        for (const std::string& l : pod_labels) {
            const auto eq = l.find('=');
            if (eq == std::string::npos || eq == 0)
                throw std::invalid_argument("--pod-label \"" + l + "\" is not KEY=VALUE");
            labels[phasescale::prom::kube_state_label_name(l.substr(0, eq))] = l.substr(eq + 1);
        }
        replay.set_pod_labels(std::move(labels));
        const ReplayClock clock;

        const std::string url = "http://" + host + ":" + std::to_string(port);
        const Page metrics{
            phasescale::replay::kExpositionType,
            [&] { return replay.exposition(clock.elapsed_seconds()) + read_extra(extra_metrics); }};
        std::string kubelet_url;
        std::optional<phasescale::replay::TlsFiles> tls;
        if (!kubelet_listen.empty()) {
            const auto [khost, kport] =
                phasescale::replay::parse_listen(kubelet_listen, "--kubelet-listen");
            kubelet_url = "https://" + khost + ":" + std::to_string(kport);
            tls = phasescale::replay::check_kubelet_tls(kubelet_cert, kubelet_key);
        }
        phasescale::replay::Server server;
        server.serve(url, listen, {{"/metrics", metrics}});
        if (tls) {
            const Page resource{
                phasescale::replay::kExpositionType,
                [&] { return replay.kubelet_exposition(clock.started_ms, clock.now_ms()); }};
            server.serve(kubelet_url, kubelet_listen, {{"/metrics/resource", resource}}, *tls);
        }
        std::cerr << "phasescale-replay-exporter: " << replay.pods().size()
                  << " execution(s) in namespace " << replay.ns() << " at " << o.speed
                  << " trace s per s; pods:";
        for (const auto& p : replay.pods()) std::cerr << ' ' << p.pod;
        std::cerr << std::endl;
        std::cout << "listening on " << url << "/metrics" << std::endl;
        if (tls)
            std::cout << "kubelet resource metrics on " << kubelet_url << "/metrics/resource"
                      << std::endl;

        int sig = 0;
        sigwait(&stop_signals, &sig);
        server.close();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "phasescale-replay-exporter: error: " << e.what() << std::endl;
        return 1;
    }
}
