#pragma once
// Aryl's two decisions for a GPU cluster that borrows idle inference servers (Li et al., "Aryl: An
// Elastic Cluster Scheduler for Deep Learning", arXiv 2202.07896):
//  - which elastic training jobs get how many extra workers on the GPUs left after every job's
//    base demand (a multiple-choice knapsack), and
//  - which loaned servers to hand back when inference needs k of them (the reclaim order).
// Pure functions over small value types: the cluster simulator and a Kubernetes controller fill
// them alike (jobs from pods or job objects, servers from nodes), by index, without ids.

#include <cstddef>
#include <utility>
#include <vector>

namespace phasescale::policy {

// ---------------------------------------------------------------------------------------------
// Scaling

// Throughput of a data-parallel job against its number of workers, from measured points
// (workers, throughput) with workers > 0. Between points it is linear; below the first point it
// is linear through the origin (so a fraction of a worker, e.g. a slow GPU, is a fraction of the
// first point's throughput per worker); beyond the last point it stays flat. A curve without
// points is perfectly linear (throughput = workers).
class ScalingCurve {
public:
    ScalingCurve() = default;
    // Points sorted by workers, throughput made non-decreasing (a job can leave a worker idle, so
    // more workers are never slower). Throws std::invalid_argument on a non-positive value.
    explicit ScalingCurve(std::vector<std::pair<double, double>> points);

    double throughput(double workers) const;
    // throughput(to) / throughput(from): how much faster `to` workers are than `from`; from > 0.
    double speedup(double from, double to) const;
    const std::vector<std::pair<double, double>>& points() const { return points_; }

private:
    std::vector<std::pair<double, double>> points_;
};

// The JCT reduction `extra` more workers bring to a job that needs `remaining_s` more seconds at
// `workers` workers: remaining_s * (1 - T(workers) / T(workers + extra)). Zero for extra = 0.
double jct_reduction(const ScalingCurve& curve, double remaining_s, int workers, int extra);

// ---------------------------------------------------------------------------------------------
// The multiple-choice knapsack of extra workers

// One elastic job: option k (k = 0..values.size()-1) gives it k extra workers, weighing
// k * gpus_per_worker GPUs and worth values[k]. values[0] is the "no extra worker" option and is
// taken as 0 whatever it holds.
struct KnapsackClass {
    int gpus_per_worker = 1;  // > 0
    std::vector<double> values;
};

struct KnapsackChoice {
    std::vector<int> extra;  // per class, the chosen k
    double value = 0;        // sum of the chosen values
    int gpus = 0;            // sum of the chosen weights, never above the capacity
};

// The exact optimum by dynamic programming over GPU counts: O(classes x capacity x options).
// Among equally valuable choices it takes the one found first with fewer extra workers for
// earlier classes (deterministic). Capacity below 0 is treated as 0.
KnapsackChoice solve_knapsack(const std::vector<KnapsackClass>& classes, int capacity);

// The greedy marginal-value heuristic, for comparison: repeatedly gives one more worker to the
// class whose next worker adds the most value per GPU, while it fits and adds value > 0. Never
// better than solve_knapsack; equal to it when values are concave and every worker weighs the
// same.
KnapsackChoice solve_knapsack_greedy(const std::vector<KnapsackClass>& classes, int capacity);

// ---------------------------------------------------------------------------------------------
// Reclaiming loaned servers

// A training job as the reclaim sees it. An inelastic job has min_workers == workers: losing
// any worker preempts it. An elastic job shrinks while it keeps at least min_workers.
struct ReclaimJob {
    int gpus_per_worker = 1;
    int workers = 0;  // running now, on all servers
    int min_workers = 0;
};

// Workers of one job on one server.
struct Placement {
    std::size_t job = 0;  // index into the jobs vector
    int workers = 0;
};

struct ReclaimServer {
    bool loaned = false;  // only loaned servers are returned
    std::vector<Placement> placements;
};

enum class ReclaimKind {
    empty,    // nothing ran there
    shrink,   // only workers above their jobs' minimum ran there: those jobs shrink
    preempt,  // at least one job is preempted (stops, frees all its workers, waits again)
};

struct ReclaimStep {
    std::size_t server = 0;
    ReclaimKind kind = ReclaimKind::empty;
    double cost = 0;  // the preemption cost of this pick (0 for empty and shrink)
};

struct ReclaimPlan {
    std::vector<ReclaimStep> steps;  // servers in the order chosen
    std::vector<bool> preempted;     // per job
    std::vector<int> workers_lost;   // per job not preempted: workers removed (it shrinks)
    double cost = 0;                 // sum of the steps' costs
};

// The preemption cost of returning `server` now: the sum over the jobs it would preempt of
// (that job's GPUs on the server / the job's GPUs). Jobs in `preempted` are gone already.
double preemption_cost(const std::vector<ReclaimJob>& jobs, const ReclaimServer& server);

// Chooses min(k, loaned servers) loaned servers to return, one at a time: an empty one if any
// (lowest index); else one whose jobs all only shrink (fewest workers lost, then lowest index);
// else the one of least preemption cost (then fewest GPUs in use, then lowest index). Every pick
// is made on the cluster as the earlier picks left it: workers on returned servers are gone, and
// a preempted job's workers are gone from every server.
ReclaimPlan plan_reclaim(const std::vector<ReclaimJob>& jobs,
                         const std::vector<ReclaimServer>& servers, std::size_t k);

}  // namespace phasescale::policy
