// The cluster simulator's reports. The HTML page is self-contained: a table and step charts drawn
// here as inline SVG (queue length, GPUs in use per pool, loaned servers over time).

#include <phasescale/sim/cluster_report.hpp>

#include "html_text.hpp"
#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

namespace phasescale::sim {
namespace {

double ratio(double baseline, double other) {
    return other > 0 ? baseline / other : 0;
}

nlohmann::json metrics_json(const ClusterMetrics& m) {
    return {{"avg_queue_s", m.avg_queue_s},
            {"p95_queue_s", m.p95_queue_s},
            {"avg_jct_s", m.avg_jct_s},
            {"p95_jct_s", m.p95_jct_s},
            {"gpu_usage", m.gpu_usage},
            {"training_pool_usage", m.training_pool_usage},
            {"inference_pool_usage", m.inference_pool_usage},
            {"loaned_gpu_usage", m.loaned_gpu_usage},
            {"preemptions", m.preemptions},
            {"shrinks", m.shrinks},
            {"loans", m.loans},
            {"reclaims", m.reclaims},
            {"avg_loaned_servers", m.avg_loaned_servers},
            {"jobs", m.jobs},
            {"elastic_jobs", m.elastic_jobs},
            {"rejected_jobs", m.rejected},
            {"makespan_s", m.makespan_s},
            {"events", m.events}};
}

const ClusterResult* find(const ClusterReport& r, ClusterPolicy p) {
    for (const auto& result : r.results) {
        if (result.policy == p) return &result;
    }
    return nullptr;
}

// ---- HTML

using html::escape;

std::string hours(double s) {
    return html::printf_string("%.2f h", s / 3600);
}
std::string percent(double share) {
    return html::printf_string("%.1f%%", 100 * share);
}

const char* colour(ClusterPolicy p) {
    switch (p) {
        case ClusterPolicy::baseline: return "#d62728";
        case ClusterPolicy::loan: return "#ff7f0e";
        case ClusterPolicy::elastic: return "#2ca02c";
        case ClusterPolicy::aryl: return "#1f5fbf";
    }
    return "#555";
}

struct Line {
    std::string name, colour;
    std::vector<std::pair<double, double>> points;  // (time s, value)
};

// Step lines (a value holds until the next sample) over time in days; `id` is unique in the page.
std::string step_chart(const std::string& id, const std::string& title, const std::string& y_label,
                       const std::vector<Line>& lines) {
    constexpr double W = 900, H = 260, L = 60, R = 150, T = 28, B = 36;
    double t_max = 0, y_max = 0;
    for (const Line& l : lines) {
        for (auto [t, v] : l.points) {
            t_max = std::max(t_max, t);
            y_max = std::max(y_max, v);
        }
    }
    if (t_max <= 0) t_max = 1;
    svg::Svg chart(id, W, H, L, T, R, B, title);
    const svg::Scale x = chart.x(0, t_max), y = chart.y(0, svg::nice_ceiling(y_max, 4));
    chart.text(L, 18, title, "start", "title");
    chart.axes({chart.x(0, t_max / 86400), "days", 6, nullptr}, {y, y_label, 4, nullptr});
    int legend = 0;
    for (const Line& l : lines) {
        std::string d;
        for (std::size_t i = 0; i < l.points.size(); ++i) {
            const auto [t, v] = l.points[i];
            d += i == 0 ? 'M' + svg::px(x(t)) + ',' + svg::px(y(v))
                        : 'H' + svg::px(x(t)) + 'V' + svg::px(y(v));
        }
        chart.path(d, svg::Style().stroke(l.colour).width(1.4));
        const double ly = T + 14 + 18 * legend++;
        chart.line(W - R + 12, ly - 4, W - R + 32, ly - 4, svg::Style().stroke(l.colour).width(3));
        chart.text(W - R + 38, ly, l.name);
    }
    return chart.finish();
}

Line series(const ClusterResult& r, const std::string& name, const std::string& colour,
            const std::function<double(const TimelineSample&)>& value) {
    Line line{name, colour, {}};
    for (const TimelineSample& s : r.timeline) line.points.emplace_back(s.time_s, value(s));
    return line;
}

}  // namespace

nlohmann::json cluster_report_json(const ClusterReport& report) {
    nlohmann::json policies = nlohmann::json::object();
    for (const ClusterResult& r : report.results)
        policies[std::string(cluster_policy_name(r.policy))] = metrics_json(r.metrics);
    const ClusterOptions& o = report.options;
    nlohmann::json out = {
        {"policies", policies},
        {"cluster",
         {{"training_servers", o.training_servers},
          {"inference_servers", o.inference_servers},
          {"gpus_per_server", o.gpus_per_server},
          {"loaned_speed", o.loaned_speed},
          {"knapsack", o.greedy_knapsack ? "greedy" : "dp"}}},
        {"trace",
         {{"jobs_source", report.jobs_source},
          {"load_source", report.load_source},
          {"jobs", report.jobs},
          {"offered_gpus", report.offered_gpus}}},
    };
    // Aryl (or any policy) against the baseline, as the paper states its results.
    if (const ClusterResult* base = find(report, ClusterPolicy::baseline)) {
        nlohmann::json versus = nlohmann::json::object();
        for (const ClusterResult& r : report.results) {
            if (r.policy == ClusterPolicy::baseline) continue;
            versus[std::string(cluster_policy_name(r.policy))] = {
                {"queue_reduction", ratio(base->metrics.avg_queue_s, r.metrics.avg_queue_s)},
                {"jct_reduction", ratio(base->metrics.avg_jct_s, r.metrics.avg_jct_s)},
                {"usage_gain", base->metrics.gpu_usage > 0
                                   ? r.metrics.gpu_usage / base->metrics.gpu_usage - 1
                                   : 0.0}};
        }
        out["versus_baseline"] = versus;
    }
    return out;
}

std::string cluster_report_html(const ClusterReport& report) {
    std::ostringstream html;
    html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>phasescale "
            "cluster-sim</title>\n"
            "<style>body{font:14px/1.4 "
            "system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
            "td,th{padding:4px 10px;white-space:nowrap;border-bottom:1px solid "
            "#ddd;text-align:right}th:first-child,td:first-child{text-align:left}"
            "svg{display:block;margin:12px 0}svg text{font-size:11px;fill:#333}svg "
            ".title{font-size:13px;font-weight:600}"
            "</style></head><body>\n";
    const ClusterOptions& o = report.options;
    html << "<h1>Cluster simulation</h1>\n<p>" << report.jobs << " jobs from "
         << escape(report.jobs_source) << "; inference load from " << escape(report.load_source)
         << ". Training pool " << o.training_servers << " servers, inference pool "
         << o.inference_servers << " servers, " << o.gpus_per_server
         << " GPUs each; loaned GPUs train at " << html::printf_string("%g", o.loaned_speed)
         << "x; offered load " << html::printf_string("%.1f", report.offered_gpus)
         << " GPUs on average.</p>\n";
    html << "<table><tr><th>policy</th><th>avg queue</th><th>p95 queue</th><th>avg JCT</th><th>p95 "
            "JCT</th>"
            "<th>GPU usage</th><th>training pool</th><th>inference "
            "pool</th><th>preemptions</th><th>shrinks</th>"
            "<th>loans</th><th>reclaims</th></tr>\n";
    for (const ClusterResult& r : report.results) {
        const ClusterMetrics& m = r.metrics;
        html << "<tr><td>" << cluster_policy_name(r.policy) << "</td><td>" << hours(m.avg_queue_s)
             << "</td><td>" << hours(m.p95_queue_s) << "</td><td>" << hours(m.avg_jct_s)
             << "</td><td>" << hours(m.p95_jct_s) << "</td><td>" << percent(m.gpu_usage)
             << "</td><td>" << percent(m.training_pool_usage) << "</td><td>"
             << percent(m.inference_pool_usage) << "</td><td>" << m.preemptions << "</td><td>"
             << m.shrinks << "</td><td>" << m.loans << "</td><td>" << m.reclaims << "</td></tr>\n";
    }
    html << "</table>\n";

    std::vector<Line> queue, loaned;
    for (const ClusterResult& r : report.results) {
        const std::string name(cluster_policy_name(r.policy));
        queue.push_back(series(r, name, colour(r.policy),
                               [](const TimelineSample& s) { return double(s.queued); }));
        loaned.push_back(series(r, name, colour(r.policy),
                                [](const TimelineSample& s) { return double(s.loaned_servers); }));
    }
    html << step_chart("queue", "Jobs waiting", "jobs", queue);
    for (const ClusterResult& r : report.results) {
        const std::string name(cluster_policy_name(r.policy));
        html << step_chart(
            "pools-" + name, "GPUs in use by pool: " + name, "GPUs",
            {series(r, "training pool", "#1f5fbf",
                    [](const TimelineSample& s) { return double(s.training_gpus_used); }),
             series(r, "loaned (training)", "#2ca02c",
                    [](const TimelineSample& s) { return double(s.loaned_gpus_used); }),
             series(r, "inference", "#d62728",
                    [](const TimelineSample& s) { return double(s.inference_gpus_used); })});
    }
    html << step_chart("loaned", "Loaned servers", "servers", loaned);
    html << "</body></html>\n";
    return html.str();
}

}  // namespace phasescale::sim
