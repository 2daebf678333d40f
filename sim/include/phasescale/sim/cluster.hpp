#pragma once
// A discrete-event simulator of a GPU cluster split into a training pool and an inference pool,
// after Aryl (Li et al., arXiv 2202.07896): idle inference servers may be loaned to training and
// reclaimed when inference needs them; elastic training jobs may run extra workers. Policies:
//   baseline  no loaning, no elasticity
//   loan      idle inference servers are loaned; jobs run at their base demand
//   elastic   elastic jobs get extra workers on the training pool's spare GPUs
//   aryl      both
// docs/cluster-sim.md gives the model, every choice the paper leaves open, and the metrics.

#include <phasescale/policy/elastic.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phasescale::sim {

struct ClusterJob {
    std::string id;
    double submit_s = 0;  // seconds after the trace start
    int gpus_per_worker = 1;
    int min_workers = 1;    // the base demand
    int max_workers = 1;    // == min_workers for an inelastic job
    double duration_s = 0;  // run time at min_workers on training GPUs
    std::string curve;      // name of the scaling curve ("" or "linear": perfectly linear)
    bool elastic() const { return max_workers > min_workers; }
};

// The share of the inference servers inference needs from time_s on (held until the next point).
struct LoadPoint {
    double time_s = 0;
    double load = 0;  // in [0, 1]
};

enum class ClusterPolicy { baseline, loan, elastic, aryl };
inline constexpr ClusterPolicy kClusterPolicies[] = {ClusterPolicy::baseline, ClusterPolicy::loan,
                                                     ClusterPolicy::elastic, ClusterPolicy::aryl};
std::string_view cluster_policy_name(ClusterPolicy policy);
std::optional<ClusterPolicy> parse_cluster_policy(std::string_view name);
bool loans(ClusterPolicy policy);
bool scales(ClusterPolicy policy);

// A loaned inference GPU trains at this fraction of a training GPU's speed (an inference GPU such
// as a T4 or A10 against a training V100/A100; docs/cluster-sim.md).
inline constexpr double kDefaultLoanedSpeed = 0.7;

struct ClusterOptions {
    int training_servers = 16;
    int inference_servers = 16;
    int gpus_per_server = 8;
    double loaned_speed = kDefaultLoanedSpeed;  // in (0, 1]
    bool greedy_knapsack = false;  // the marginal-value heuristic instead of the exact DP
    // Usage is averaged over [0, horizon_s]; 0: up to the last submission or load point.
    double horizon_s = 0;
    int timeline_points = 1000;  // at most this many timeline samples (plus the last)
};

// What the simulator holds at an event, for observers (tests check the bookkeeping with it).
struct ServerView {
    int gpus = 0;
    bool inference = false;  // in the inference pool
    bool busy = false;    // serving inference (an inference server neither busy nor loaned is idle)
    bool loaned = false;  // loaned to training
    std::vector<policy::Placement> placements;  // training workers on it, job = index into the jobs
};

enum class JobState { future, waiting, running, done };

struct JobView {
    JobState state = JobState::future;
    int workers = 0;  // running now
};

struct ClusterSnapshot {
    double time_s = 0;
    std::vector<ServerView> servers;
    std::vector<JobView> jobs;
};
using ClusterObserver = std::function<void(const ClusterSnapshot&)>;

struct JobOutcome {
    double first_start_s = -1;  // -1: never started (rejected)
    double finish_s = -1;
    double queue_s = 0;  // waiting time, before the first start and after each preemption
    int preemptions = 0;
    int finishes = 0;       // 1 for every job that fits the cluster; 0 for a rejected one
    bool rejected = false;  // its base demand exceeds the training pool: never run
};

struct ClusterMetrics {
    std::size_t jobs = 0;  // jobs run (rejected ones excluded)
    std::size_t rejected = 0;
    std::size_t elastic_jobs = 0;
    double avg_queue_s = 0, p95_queue_s = 0;
    double avg_jct_s = 0, p95_jct_s = 0;
    double gpu_usage = 0;             // both pools: GPUs busy (training or inference) / all GPUs
    double training_pool_usage = 0;   // training GPUs in use / training pool GPUs
    double inference_pool_usage = 0;  // (inference + loaned GPUs in use) / inference pool GPUs
    double loaned_gpu_usage = 0;      // loaned GPUs in use / inference pool GPUs
    std::size_t preemptions = 0;      // a job stopped because a server it ran on was reclaimed
    std::size_t shrinks = 0;          // a job lost workers to a reclaim but kept running
    std::size_t loans = 0;            // servers loaned (each time one is)
    std::size_t reclaims = 0;         // servers returned
    double avg_loaned_servers = 0;    // over the horizon
    double horizon_s = 0;
    double makespan_s = 0;  // the last finish
    std::size_t events = 0;
};

struct TimelineSample {
    double time_s = 0;
    int queued = 0;  // jobs waiting
    int running = 0;
    int training_gpus_used = 0;   // by training jobs on the training pool
    int loaned_gpus_used = 0;     // by training jobs on loaned servers
    int inference_gpus_used = 0;  // by inference (busy servers)
    int loaned_servers = 0;
};

struct ClusterResult {
    ClusterPolicy policy = ClusterPolicy::baseline;
    ClusterMetrics metrics;
    std::vector<JobOutcome> jobs;  // in the order of the input jobs
    std::vector<TimelineSample> timeline;
};

// Runs the jobs (any order; ids need not be unique) under `policy`. `curves` maps curve names to
// throughput curves in GPUs (from the measured scalability files); a job's curve is rescaled to
// its own workers by job_curve(). Throws std::invalid_argument on bad options or a job that names
// an unknown curve or has impossible sizes. Deterministic.
ClusterResult simulate_cluster(
    const std::vector<ClusterJob>& jobs, const std::vector<LoadPoint>& load,
    const std::vector<std::pair<std::string, policy::ScalingCurve>>& curves, ClusterPolicy policy,
    const ClusterOptions& options, const ClusterObserver& observer = {});

// The curve of a job in its own workers: its base demand sits at the model curve's first
// measured point n0, and w workers at n0 * w / min_workers GPUs. So a job's speed-up from w1 to w2
// workers is the measured one from n0*w1/min to n0*w2/min GPUs, whatever its size.
policy::ScalingCurve job_curve(const policy::ScalingCurve& model_curve, int min_workers);

// The p-quantile (nearest rank) of the values; 0 for none.
double nearest_rank(std::vector<double> values, double p);

}  // namespace phasescale::sim
