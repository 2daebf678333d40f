#pragma once
// Inputs of the cluster simulator: the job and inference-load CSVs (read and written), a window of
// the Philly trace, the measured scaling curves, and the generator behind `phasescale
// cluster-gen`. docs/cluster-sim.md gives the formats and every parameter.

#include <phasescale/policy/elastic.hpp>
#include <phasescale/sim/cluster.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace phasescale::sim {

// The job CSV: header `id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,
// curve` (any column order; other columns ignored). `elastic` is 0 or 1; an inelastic job has
// max_workers == min_workers. Throws std::runtime_error naming the file, line and column.
std::vector<ClusterJob> read_cluster_jobs(const std::string& path);
void write_cluster_jobs(std::ostream& out, const std::vector<ClusterJob>& jobs);

// The load CSV: header `time_s,load`, load the share of inference servers needed, in [0, 1].
std::vector<LoadPoint> read_inference_load(const std::string& path);
void write_inference_load(std::ostream& out, const std::vector<LoadPoint>& load);

// The six measured models of ../shared/data/philly/scalability-<model>.csv.
inline constexpr const char* kCurveModels[] = {"bert",     "cifar10", "deepspeech2",
                                               "imagenet", "ncf",     "yolov3"};

// A scalability file as a throughput curve in GPUs: at every measured GPU count, the best
// throughput (num_replicas x local_bsz / step_time) over the batch sizes and placements measured.
policy::ScalingCurve read_scaling_curve(const std::string& path);
// The curves the jobs name, read from `directory`/scalability-<name>.csv ("" and "linear" need
// no file).
std::vector<std::pair<std::string, policy::ScalingCurve>> read_scaling_curves(
    const std::string& directory, const std::vector<ClusterJob>& jobs);

// Which jobs are elastic, the seeded rule shared by the Philly reader and the generator: in job
// order, each job draws from one stream seeded with `seed`; with probability `share` it becomes
// elastic with max_workers = min_workers x max_scale and a curve drawn uniformly from
// kCurveModels; otherwise it stays inelastic on the "linear" curve.
struct ElasticRule {
    std::uint64_t seed = 1;
    double share = 0.5;  // in [0, 1]
    int max_scale = 2;   // at least 2
};
void assign_elasticity(std::vector<ClusterJob>& jobs, const ElasticRule& rule);

// A window of the Philly trace: the jobs of `cluster` submitted in [from, from + days), with
// submit times in seconds after `from`. Each job has 1 GPU per worker and its trace GPUs as
// min_workers; jobs of 0 GPUs or 0 s are skipped. `from` is "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS"
// (UTC). Throws std::runtime_error on a malformed file or date.
struct PhillyWindow {
    std::string cluster = "6214e9";
    std::string from = "2017-10-01";
    double days = 15;
    ElasticRule elastic;
};
std::vector<ClusterJob> read_philly_jobs(const std::string& path, const PhillyWindow& window);

// The generator of `phasescale cluster-gen` (docs/cluster-sim.md): deterministic for a seed.
struct ClusterGenOptions {
    std::uint64_t seed = 1;
    double days = 15;
    double jobs_per_day = 400;          // mean submissions per day (diurnal: more by day)
    double submit_swing = 0.5;          // submission rate varies by ±this share over the day
    double median_duration_s = 1800;    // lognormal durations at base demand
    double duration_sigma = 1.8;        // of log(duration): heavy tail
    double max_duration_s = 7 * 86400;  // longer draws are redrawn
    ElasticRule elastic;                // its seed is derived from `seed`
    double load_interval_s = 300;       // a load point every this many seconds
    double load_trough = 0.3;           // share of inference servers needed at night
    double load_peak = 0.9;             // and at the daily peak
    double peak_hour = 14;              // hour of the day (from the trace start) of the peak
    double load_noise = 0.03;           // standard deviation of the noise added to each point
};
std::vector<ClusterJob> generate_cluster_jobs(const ClusterGenOptions& options);
std::vector<LoadPoint> generate_inference_load(const ClusterGenOptions& options);

// Sum over jobs of base GPUs x duration, divided by `horizon_s`: the GPUs the jobs ask for on
// average, for sizing the training pool.
double offered_gpus(const std::vector<ClusterJob>& jobs, double horizon_s);

}  // namespace phasescale::sim
