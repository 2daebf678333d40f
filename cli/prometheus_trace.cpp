#include "prometheus_trace.hpp"

#include "command.hpp"

#include <phasescale/kube/selector.hpp>
#include <phasescale/model/duration.hpp>
#include <phasescale/policy/actuator.hpp>
#ifdef PHASESCALE_WITH_PROMETHEUS
#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>
#include <phasescale/prom/pod_selector.hpp>
#endif

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace phasescale::cli {
namespace {

using std::chrono::milliseconds;

// Without cpprestsdk (an offline build, see cli/CMakeLists.txt) there is no Prometheus client:
// the options stay, under a heading that says so, and using them is a usage error.
#ifdef PHASESCALE_WITH_PROMETHEUS
constexpr const char* kPrometheusGroup = "Prometheus";
#else
constexpr const char* kPrometheusGroup =
    "Prometheus (not in this build: it was built without cpprestsdk)";
#endif

}  // namespace

CLI::Option* add_prometheus_options(CLI::App* app, PrometheusSource& s, bool required,
                                    const std::string& since_flag) {
    const char* group = kPrometheusGroup;
    s.since_flag = since_flag;
    CLI::Option* url =
        app->add_option("--prometheus", s.url,
                        "Prometheus base URL (http or https) to read the history from")
            ->type_name("URL")
            ->group(group);
    CLI::Option* ns =
        app->add_option("--namespace", s.ns, "Namespace of the containers")->group(group);
    if (required) {
        url->required();
        ns->required();
    } else {
        ns->needs(url);
    }
    auto with_url = [&](CLI::Option* o) {
        o->group(group);
        if (!required) o->needs(url);
        return o;
    };
    with_url(app->add_option("--bearer-token-file", s.bearer_token_file,
                             "File holding a bearer token for Prometheus"));
    with_url(app->add_option("--ca-file", s.ca_file,
                             "CA certificates to verify an https Prometheus with"));
    with_url(app->add_option(
        "--selector", s.selector,
        "Label selector over the pods (app=train,tier in (a,b),!canary); needs kube-state-metrics' "
        "kube_pod_labels with those labels. Empty: every container of the namespace"));
    with_url(
        app->add_option(since_flag, s.since,
                        "How far back to read, e.g. 6h, 14d (a duration, docs/cli.md: Durations)")
            ->capture_default_str());
    with_url(app->add_option("--step", s.step,
                             "One sample every STEP: use the operator's --tick, the period the "
                             "model will run at (a duration, docs/cli.md: Durations)")
                 ->capture_default_str());
    with_url(app->add_option("--scrape-interval", s.scrape_interval,
                             "Prometheus' scrape interval: CPU is the rate over the latest one "
                             "(irate) within max(4 scrapes, STEP) (a duration, docs/cli.md: "
                             "Durations)")
                 ->capture_default_str());
    with_url(app->add_option("--prometheus-timeout", s.timeout,
                             "Timeout of one range query (a duration, docs/cli.md: Durations)")
                 ->capture_default_str());
    return url;
}

std::string describe(const PrometheusSource& s) {
    return "prometheus " + s.url + " namespace " + s.ns +
           (s.selector.empty() ? "" : " selector " + s.selector) + " since " + s.since + " step " +
           s.step;
}

#ifndef PHASESCALE_WITH_PROMETHEUS
model::Trace read_prometheus_trace(const PrometheusSource&) {
    throw UsageError(
        "this phasescale was built without cpprestsdk, so it cannot read from Prometheus "
        "(--prometheus, "
        "export-trace): build it with libcpprest-dev and libssl-dev installed, or export the trace "
        "with a "
        "build that can and pass it with --trace");
}
#else
prom::Client prometheus_client(const PrometheusSource& s) {
    prom::ClientConfig config;
    config.url = s.url;
    config.bearer_token_file = s.bearer_token_file;
    config.ca_file = s.ca_file;
    config.timeout = duration_option(s.timeout, "--prometheus-timeout");
    config.user_agent = "phasescale";
    return prom::Client(config);
}

model::Trace read_prometheus_trace(const PrometheusSource& s) {
    const milliseconds since = duration_option(s.since, s.since_flag.c_str());
    const milliseconds step = duration_option(s.step, "--step");
    const milliseconds scrape = duration_option(s.scrape_interval, "--scrape-interval");
    if (step > since)
        throw UsageError("--step (" + s.step + ") is longer than " + s.since_flag + " (" + s.since +
                         ")");
    if (s.ns.empty()) throw UsageError("--namespace is required with --prometheus");

    prom::FeatureQueries queries;
    try {
        queries = prom::select_pods(prom::FeatureQueries(), kube::parse_label_selector(s.selector));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--selector: ") + e.what());
    }
    const prom::Client client = prometheus_client(s);

    // One scrape interval back (the latest scrape may not be stored yet), aligned to the step so
    // that two runs over the same data give the same rows.
    const auto latest = std::chrono::duration_cast<milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()) -
                        scrape;
    const auto end = prom::TimePoint(std::chrono::duration_cast<prom::TimePoint::duration>(
        milliseconds(latest.count() / step.count() * step.count())));
    const prom::FeatureHistory history = prom::read_feature_history(
        client, queries, {s.ns}, policy::rate_window(step, scrape), end - since, end, step);
    if (!history.failures.empty()) {
        const auto& f = history.failures.front();
        throw std::runtime_error("Prometheus " + s.url + ": the " + f.feature +
                                 " query failed: " + f.message);
    }

    model::Trace trace;
    trace.columns = history.features;  // cpu.usage.cores, mem.working.set
    for (const auto& [key, series] : history.series) {
        // Rows at the times where every feature has a value.
        std::map<long long, std::vector<double> > rows;  // by ms
        for (std::size_t f = 0; f < series.size(); ++f)
            for (const prom::Sample& sample : series[f]) {
                auto& row = rows[std::llround(sample.time * 1000)];
                row.resize(series.size(), std::nan(""));
                row[f] = sample.value;
            }
        std::erase_if(rows, [](const auto& r) {
            for (double v : r.second)
                if (std::isnan(v)) return true;
            return false;
        });
        if (rows.empty()) continue;
        model::Execution e;
        e.id = key.ns + "/" + key.pod + "/" + key.container;
        e.source = s.url;
        e.values.resize(static_cast<Eigen::Index>(rows.size()),
                        static_cast<Eigen::Index>(trace.columns.size()));
        Eigen::Index r = 0;
        for (const auto& [t, row] : rows) {
            e.timestamps.push_back(static_cast<double>(t) / 1000.0);
            e.lines.push_back(0);
            for (std::size_t c = 0; c < row.size(); ++c)
                e.values(r, static_cast<Eigen::Index>(c)) = row[c];
            ++r;
        }
        trace.executions.push_back(std::move(e));
    }
    if (trace.executions.empty())
        throw std::runtime_error(
            "Prometheus " + s.url + " has no samples of containers in namespace " + s.ns +
            (s.selector.empty() ? ""
                                : " whose pods match \"" + s.selector + "\" (kube_pod_labels)") +
            " in the last " + s.since);
    return trace;
}
#endif

void write_trace_csv(const model::Trace& trace, std::FILE* out) {
    std::string header = "timestamp,pod.id";
    for (const std::string& c : trace.columns) header += "," + csv_field(c);
    std::fprintf(out, "%s\n", header.c_str());
    for (const model::Execution& e : trace.executions) {
        const std::string id = csv_field(e.id);
        for (std::size_t i = 0; i < e.timestamps.size(); ++i) {
            std::string line = format_number(e.timestamps[i]) + "," + id;
            for (Eigen::Index c = 0; c < e.values.cols(); ++c)
                line += "," + format_number(e.values(static_cast<Eigen::Index>(i), c));
            std::fprintf(out, "%s\n", line.c_str());
        }
    }
}

}  // namespace phasescale::cli
