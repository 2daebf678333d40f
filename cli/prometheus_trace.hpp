#pragma once
// Traces from a Prometheus server: the operator's default feature queries (cAdvisor's CPU rate
// and working set) as range queries over a past window, for `train --prometheus` and
// `export-trace`. Each container (namespace/pod/container) becomes one execution of the trace.

#include <cstdio>
#include <string>

#include <phasescale/model/trace.hpp>
#ifdef PHASESCALE_WITH_PROMETHEUS
#include <phasescale/prom/client.hpp>
#endif

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace phasescale::cli {

struct PrometheusSource {
    std::string url;
    std::string bearer_token_file;
    std::string ca_file;
    std::string ns;
    std::string
        selector;  // a Kubernetes label selector over pods (kube-state-metrics' kube_pod_labels)
    std::string since = "14d";
    std::string since_flag = "--since";  // its name on the command line, for messages
    std::string step = "15s";  // the operator's default --tick: a model learns its history at the
                               // period it runs at
    std::string scrape_interval = "15s";  // for the rates' window, as the operator's flag
    std::string timeout = "60s";
};

// --prometheus, --bearer-token-file, --ca-file, --namespace, --selector, --since, --step,
// --scrape-interval, --prometheus-timeout. `required` makes --prometheus and --namespace
// required (export-trace); otherwise they are an alternative to trace files (train). Returns the
// --prometheus option, for excludes(). `since_flag` names the look-back (`recommend`: --window).
CLI::Option* add_prometheus_options(CLI::App* app, PrometheusSource& source, bool required,
                                    const std::string& since_flag = "--since");

// Whether `source` names a server (--prometheus was given).
inline bool wanted(const PrometheusSource& source) {
    return !source.url.empty();
}

// Reads the window [now - since, now] every step: columns cpu.usage.cores and mem.working.set,
// a row where both have a value. Throws UsageError for a bad duration or selector, and
// std::runtime_error when the server fails or no container matches.
model::Trace read_prometheus_trace(const PrometheusSource& source);

#ifdef PHASESCALE_WITH_PROMETHEUS
// The client for `source`: its URL, token file, CA file and --prometheus-timeout. Throws
// UsageError for a bad timeout.
prom::Client prometheus_client(const PrometheusSource& source);
#endif

// A description for the model's provenance: "prometheus URL namespace NS selector S since D step
// D".
std::string describe(const PrometheusSource& source);

// The canonical trace CSV: timestamp, pod.id, then the trace's columns.
void write_trace_csv(const model::Trace& trace, std::FILE* out);

}  // namespace phasescale::cli
