// phasescale recommend: what the operator would give each container of a namespace, from its
// history in Prometheus, beside what it has now (kube-state-metrics) and what went wrong in the
// window (OOM kills, CPU throttling); in the manner of Robusta's KRR, with phases.

#include "command.hpp"
#include "prometheus_trace.hpp"
#include "recommend_report.hpp"

#include <phasescale/control/spec.hpp>
#include <phasescale/model/duration.hpp>
#include <phasescale/model/error.hpp>
#include <phasescale/model/pretrained.hpp>
#ifdef PHASESCALE_WITH_PROMETHEUS
#include <phasescale/prom/features.hpp>
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace phasescale::cli {
namespace {

struct Args {
    PrometheusSource source;
    std::string model = model::kDefaultModelName;
    std::string autoscaler;
    std::string output = "table";
    std::string out = "-";
    std::string history_out;
};

control::AutoscalerSpec autoscaler_spec(const std::string& path) {
    if (path.empty()) return {};
    std::ifstream in(path, std::ios::binary);
    if (!in) throw model::InputError(path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    const control::ParsedSpec parsed = control::parse_spec_yaml(text.str(), path);
    if (!parsed.ok()) throw model::InputError("--autoscaler " + path + ": " + parsed.message());
    return parsed.spec;
}

std::size_t column_of(const model::Trace& trace, const std::string& name) {
    const auto it = std::find(trace.columns.begin(), trace.columns.end(), name);
    if (it == trace.columns.end())
        throw UsageError("--model: the model's feature \"" + name +
                         "\" is not read from Prometheus (recommend reads cpu.usage.cores and "
                         "mem.working.set only)");
    return static_cast<std::size_t>(it - trace.columns.begin());
}

// Each execution of the trace ("NAMESPACE/POD/CONTAINER") as a history in the model's features.
std::vector<ContainerHistory> histories_of(const model::Trace& trace,
                                           const model::PhaseModel& model) {
    std::vector<std::size_t> features;
    for (const std::string& f : model.features) features.push_back(column_of(trace, f));
    const std::size_t cpu = column_of(trace, "cpu.usage.cores");
    const std::size_t memory = column_of(trace, "mem.working.set");
    std::vector<ContainerHistory> out;
    for (const model::Execution& e : trace.executions) {
        ContainerHistory h;
        const std::size_t a = e.id.find('/'), b = e.id.rfind('/');
        h.ns = e.id.substr(0, a);
        h.pod = e.id.substr(a + 1, b - a - 1);
        h.container = e.id.substr(b + 1);
        h.workload = "Pod/" + h.pod;
        h.current.name = h.container;
        h.timestamps = e.timestamps;
        for (Eigen::Index r = 0; r < e.values.rows(); ++r) {
            std::vector<double> row;
            for (std::size_t c : features) row.push_back(e.values(r, static_cast<Eigen::Index>(c)));
            h.features.push_back(std::move(row));
            h.usage.push_back({e.values(r, static_cast<Eigen::Index>(cpu)),
                               e.values(r, static_cast<Eigen::Index>(memory))});
        }
        out.push_back(std::move(h));
    }
    return out;
}

#ifdef PHASESCALE_WITH_PROMETHEUS

// One instant query at `time`; a failure names the query and the server.
prom::QueryResult ask(const prom::Client& client, const std::string& promql, prom::TimePoint time) {
    try {
        return client.query(promql, time);
    } catch (const prom::Error& e) {
        throw std::runtime_error("Prometheus " + client.config().url + ": " + e.what());
    }
}

// "Kind/name" of each owner in `metric` (kube_pod_owner, kube_replicaset_owner) by the owned
// object's label `owned` (pod, replicaset).
std::map<std::string, std::string> owners_of(const prom::Client& client, const std::string& metric,
                                             const std::string& owned, const std::string& in_ns,
                                             const std::string& window, prom::TimePoint end) {
    std::map<std::string, std::string> out;
    const std::string promql = "max by (" + owned + ", owner_kind, owner_name) (last_over_time(" +
                               metric + "{" + in_ns + ", owner_kind!=\"<none>\"}[" + window + "]))";
    const prom::QueryResult result = ask(client, promql, end);  // outlives the loop
    for (const prom::InstantSeries& s : result.as_vector())
        if (s.metric.count(owned) && s.metric.count("owner_kind") && s.metric.count("owner_name"))
            out.emplace(s.metric.at(owned),
                        s.metric.at("owner_kind") + "/" + s.metric.at("owner_name"));
    return out;
}

// Each pod's workload: its owner, and a ReplicaSet's owner in turn (a Deployment's pods are one
// workload, whatever their ReplicaSet), as KRR groups them.
std::map<std::string, std::string> read_owners(const prom::Client& client, const std::string& in_ns,
                                               const std::string& window, prom::TimePoint end) {
    std::map<std::string, std::string> pods =
        owners_of(client, "kube_pod_owner", "pod", in_ns, window, end);
    const std::map<std::string, std::string> replicasets =
        owners_of(client, "kube_replicaset_owner", "replicaset", in_ns, window, end);
    const std::string kReplicaSet = "ReplicaSet/";
    for (auto& [pod, owner] : pods)
        if (owner.starts_with(kReplicaSet))
            if (const auto it = replicasets.find(owner.substr(kReplicaSet.size()));
                it != replicasets.end())
                owner = it->second;
    return pods;
}

// The kube-state-metrics and cAdvisor series of the window, per container, into `histories`:
// requests and limits (their latest values), owners, OOM kills, CFS throttling. What the server
// does not have stays unset; returns what was missing, for a warning.
std::vector<std::string> read_state(const prom::Client& client, const std::string& ns,
                                    const std::string& window, prom::TimePoint end,
                                    std::vector<ContainerHistory>& histories) {
    const std::string in_ns = "namespace=\"" + prom::escape_label_value(ns) + "\"";
    const std::string by = "(namespace, pod, container)";
    std::vector<std::string> missing;
    auto per_container = [&](const std::string& promql, const char* what) {
        const auto values = prom::container_values(ask(client, promql, end));
        if (values.empty()) missing.push_back(what);
        return values;
    };
    auto resource = [&](const char* metric, const char* r) {
        return per_container("max by " + by + " (last_over_time(" + std::string(metric) + "{" +
                                 in_ns + ", resource=\"" + r + "\"}[" + window + "]))",
                             metric);
    };
    const auto cpu_requests = resource("kube_pod_container_resource_requests", "cpu");
    const auto memory_requests = resource("kube_pod_container_resource_requests", "memory");
    const auto cpu_limits = resource("kube_pod_container_resource_limits", "cpu");
    const auto memory_limits = resource("kube_pod_container_resource_limits", "memory");
    // Restarts while the last termination said OOMKilled. restartCount only grows during a pod's
    // life, so its rise over the window is exact (increase() would extrapolate).
    const std::string restarts =
        "kube_pod_container_status_restarts_total{" + in_ns + "}[" + window + "]";
    const auto oom_kills =
        per_container("max by " + by + " ((max_over_time(" + restarts + ") - min_over_time(" +
                          restarts + ")) and on " + by +
                          " (max_over_time(kube_pod_container_status_last_terminated_reason{" +
                          in_ns + ", reason=\"OOMKilled\"}[" + window + "]) == 1))",
                      "kube_pod_container_status_last_terminated_reason");
    const auto counted = [&](const char* metric) {
        return per_container("sum by " + by + " (increase(" + std::string(metric) + "{" + in_ns +
                                 ", container!=\"\", container!=\"POD\"}[" + window + "]))",
                             metric);
    };
    const auto periods = counted("container_cpu_cfs_periods_total");
    const auto throttled = counted("container_cpu_cfs_throttled_periods_total");
    // cAdvisor counts OOM events too, where kube-state-metrics is not there to.
    const auto oom_events =
        prom::container_values(ask(client,
                                   "round(sum by " + by + " (increase(container_oom_events_total{" +
                                       in_ns + ", container!=\"\"}[" + window + "])))",
                                   end));

    const std::map<std::string, std::string> owners = read_owners(client, in_ns, window, end);

    auto find = [](const std::map<prom::ContainerKey, double>& m,
                   const prom::ContainerKey& k) -> std::optional<double> {
        const auto it = m.find(k);
        return it == m.end() ? std::nullopt : std::optional<double>(it->second);
    };
    for (ContainerHistory& h : histories) {
        const prom::ContainerKey k{h.ns, h.pod, h.container};
        h.current.requests = {find(cpu_requests, k), find(memory_requests, k)};
        h.current.limits = {find(cpu_limits, k), find(memory_limits, k)};
        h.risk.oom_kills =
            std::max(find(oom_kills, k).value_or(0), find(oom_events, k).value_or(0));
        h.risk.cpu_periods = find(periods, k);
        h.risk.cpu_throttled_periods = find(throttled, k);
        if (const auto o = owners.find(h.pod); o != owners.end()) h.workload = o->second;
    }
    return missing;
}

#endif

Report build_report(const Args& a) {
    const model::Trace trace = read_prometheus_trace(a.source);  // says why it cannot, offline
    if (!a.history_out.empty()) {
        OutputFile out(a.history_out);
        write_trace_csv(trace, out.stream());
        out.commit();
    }
    const auto phase_model =
        std::make_shared<const model::PhaseModel>(model::resolve_model(a.model));
    if (!phase_model->statistics)
        throw model::InputError("--model " + a.model +
                                ": the model has no phase statistics, which the policy sizes from "
                                "(an AI4DL model? train one with `phasescale train`)");
    std::vector<ContainerHistory> histories = histories_of(trace, *phase_model);

    Report report;
    report.prometheus = a.source.url;
    report.ns = a.source.ns;
    report.selector = a.source.selector;
    report.window = a.source.since;
    report.model = a.model;
    report.start = report.end = histories.front().timestamps.front();
    for (const ContainerHistory& h : histories) {
        report.start = std::min(report.start, h.timestamps.front());
        report.end = std::max(report.end, h.timestamps.back());
    }
#ifdef PHASESCALE_WITH_PROMETHEUS
    const std::string window =
        prom::promql_duration(model::parse_duration(a.source.since, "--window"));
    const auto end = prom::TimePoint(std::chrono::duration_cast<prom::TimePoint::duration>(
        std::chrono::duration<double>(report.end)));
    const std::vector<std::string> missing =
        read_state(prometheus_client(a.source), a.source.ns, window, end, histories);
    for (const std::string& m : missing)
        std::fprintf(stderr,
                     "phasescale: warning: no %s series for namespace %s in the window: the "
                     "columns that need it are empty (docs/recommend.md: what it reads)\n",
                     m.c_str(), a.source.ns.c_str());
#endif
    report.containers = recommend_containers(histories, phase_model, autoscaler_spec(a.autoscaler));
    return report;
}

}  // namespace

Command add_recommend_command(CLI::App& parent) {
    auto args = std::make_shared<Args>();
    args->source.since = "7d";
    CLI::App* app = parent.add_subcommand(
        "recommend",
        "Recommend requests and limits for a namespace's containers from their history in "
        "Prometheus: per container, the current requests and limits (kube-state-metrics), what "
        "the operator's phase policy gives in each phase and overall, and the OOM kills and CPU "
        "throttling seen in the window. Reads, never writes to the cluster.");
    add_prometheus_options(app, args->source, true, "--window");
    app->add_option("--model", args->model,
                    "Phase model: 'default' (built in) or a model file, as a PhaseAutoscaler's "
                    "spec.model")
        ->capture_default_str();
    app->add_option("--autoscaler", args->autoscaler,
                    "A PhaseAutoscaler YAML file whose settings (quantiles, margins, container "
                    "policies...) to apply; default: the CRD's defaults")
        ->check(CLI::ExistingFile);
    app->add_option("-o,--output", args->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "yaml", "csv"}))
        ->capture_default_str();
    app->add_option("--out", args->out, "Where to write it ('-': stdout)")->capture_default_str();
    app->add_option("--history-out", args->history_out,
                    "Also write the usage history read as a trace CSV (for `simulate`, `train`)")
        ->type_name("TRACE.csv");
    app->footer(
        "Each container's samples of the window are replayed through the operator's own policy "
        "code\n"
        "(the phase tracker and the PhaseAutoscaler's bounds), with its current requests in "
        "force.\n"
        "PHASE 'overall' is the largest of the phases' recommendations; TIME the share of "
        "samples\n"
        "in each phase. Pods with an owner (kube_pod_owner) are grouped by it. Needs cAdvisor's\n"
        "and kube-state-metrics' series: docs/recommend.md.\n\n"
        "Example:\n"
        "  phasescale recommend --prometheus http://prometheus:9090 --namespace ml \\\n"
        "      --selector app=trainer --window 7d -o table");

    return {app, [args] {
                const Report report = build_report(*args);
                const std::string text = render(report, args->output);
                OutputFile out(args->out);
                std::fwrite(text.data(), 1, text.size(), out.stream());
                out.commit();
                return 0;
            }};
}

}  // namespace phasescale::cli
