// phasescale-replay-exporter: serves a resource trace as cAdvisor-style Prometheus metrics, with
// trace time compressed, for the operator's end-to-end tests. See --help.
#include <pthread.h>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <cpprest/http_listener.h>
#include <CLI/CLI.hpp>
#include <phasescale/prom/pod_selector.hpp>

#include "replay.hpp"

namespace {

namespace http = web::http;

constexpr const char* kDescription =
    R"(phasescale-replay-exporter: serves the executions of resource traces as cAdvisor-style
Prometheus metrics at http://HOST:PORT/metrics, with trace time compressed by --speed.

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

Example: 30 s of trace per wall second, two executions named after pods:
  phasescale-replay-exporter --trace run.csv --namespace train --listen 127.0.0.1:9400 \
      --speed 30 --pod-map 17=trainer-a,42=trainer-b
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

}  // namespace

int main(int argc, char** argv) {
    using phasescale::replay::Options;
    Options o;
    std::vector<std::string> traces;
    std::string listen = "127.0.0.1:9400";
    std::string pod_map;
    std::vector<std::string> pod_labels;
    std::string extra_metrics;

    CLI::App app{kDescription, "phasescale-replay-exporter"};
    app.add_option("--trace", traces, "trace CSV file(s), comma-separated or repeated")
        ->required()
        ->delimiter(',')
        ->check(CLI::ExistingFile);
    app.add_option("--namespace", o.ns, "namespace label of every series")->required();
    app.add_option("--listen", listen, "HOST:PORT to serve on")->capture_default_str();
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
    CLI11_PARSE(app, argc, argv);
    o.traces = traces;

    sigset_t stop_signals;
    block_stop_signals(stop_signals);  // before any thread starts, so that only sigwait sees them

    try {
        o.pod_map = phasescale::replay::parse_pod_map(pod_map);
        const auto [host, port] = phasescale::replay::parse_listen(listen);
        auto replay = phasescale::replay::Replay::from_options(o);
        std::map<std::string, std::string> labels;
        for (const std::string& l : pod_labels) {
            const auto eq = l.find('=');
            if (eq == std::string::npos || eq == 0)
                throw std::invalid_argument("--pod-label \"" + l + "\" is not KEY=VALUE");
            labels[phasescale::prom::kube_state_label_name(l.substr(0, eq))] = l.substr(eq + 1);
        }
        replay.set_pod_labels(std::move(labels));
        const auto started = std::chrono::steady_clock::now();

        const std::string url = "http://" + host + ":" + std::to_string(port);
        http::experimental::listener::http_listener listener(url);
        listener.support(http::methods::GET, [&](http::http_request req) {
            const auto path = req.relative_uri().path();
            if (path == "/metrics") {
                const double wall =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                        .count();
                std::string body = replay.exposition(wall);
                try {
                    body += read_extra(extra_metrics);
                } catch (const std::exception& e) {
                    req.reply(http::status_codes::InternalError, std::string(e.what()) + "\n",
                              "text/plain; charset=utf-8");
                    return;
                }
                req.reply(http::status_codes::OK, body, "text/plain; version=0.0.4; charset=utf-8");
            } else if (path == "/healthz" || path == "/") {
                req.reply(http::status_codes::OK, "ok\n", "text/plain; charset=utf-8");
            } else {
                req.reply(http::status_codes::NotFound, "not found: " + path + " (try /metrics)\n",
                          "text/plain; charset=utf-8");
            }
        });
        try {
            listener.open().wait();
        } catch (const std::exception& e) {
            throw std::runtime_error("cannot listen on " + listen + ": " + e.what());
        }
        std::cerr << "phasescale-replay-exporter: " << replay.pods().size()
                  << " execution(s) in namespace " << replay.ns() << " at " << o.speed
                  << " trace s per s; pods:";
        for (const auto& p : replay.pods()) std::cerr << ' ' << p.pod;
        std::cerr << std::endl;
        std::cout << "listening on " << url << "/metrics" << std::endl;

        int sig = 0;
        sigwait(&stop_signals, &sig);
        listener.close().wait();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "phasescale-replay-exporter: error: " << e.what() << std::endl;
        return 1;
    }
}
