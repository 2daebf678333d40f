#pragma once
// Reports of `phasescale cluster-sim`: JSON (layout in docs/cluster-sim.md) and one
// self-contained HTML page whose charts are inline SVG.

#include <phasescale/sim/cluster.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace phasescale::sim {

struct ClusterReport {
    std::string jobs_source;  // what the jobs came from, for the reader
    std::string load_source;
    ClusterOptions options;
    std::size_t jobs = 0;
    double offered_gpus = 0;  // average GPUs the jobs ask for at base demand over the horizon
    std::vector<ClusterResult> results;  // in the order asked
};

// {"policies": {"<name>": {"avg_queue_s", "p95_queue_s", "avg_jct_s", "p95_jct_s", "gpu_usage",
// "preemptions", ...}}, "cluster": {...}, "trace": {...}, "versus_baseline": {...}}
nlohmann::json cluster_report_json(const ClusterReport& report);
std::string cluster_report_html(const ClusterReport& report);

}  // namespace phasescale::sim
