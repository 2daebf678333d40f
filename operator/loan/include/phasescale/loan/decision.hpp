// The loan controller's decisions, as pure functions of the nodes, pods and jobs it sees: how
// many inference nodes to loan, which idle ones, which loaned ones to return (policy::plan_reclaim,
// least preemption cost), which training pods must go, and how many replicas each elastic job gets
// (policy::solve_knapsack over policy::jct_reduction). No I/O here: the controller reads the
// cluster into these views and writes the plan back.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>
#include <phasescale/policy/elastic.hpp>

namespace phasescale::loan {

// The labels and taints of the loan protocol (README.md).
inline constexpr const char* kLoanedLabel = "phasescale.io/loaned";  // "true" while loaned
inline constexpr const char* kInferenceOnlyTaint =
    "phasescale.io/inference-only";  // NoSchedule, while not loaned
inline constexpr const char* kReturnedTaint =
    "phasescale.io/returned";  // NoSchedule, since the last return
// Annotations on an elastic job's object, overriding the CapacityLoan's defaults.
inline constexpr const char* kMinReplicasAnnotation = "phasescale.io/min-replicas";
inline constexpr const char* kMaxReplicasAnnotation = "phasescale.io/max-replicas";
inline constexpr const char* kGpusPerWorkerAnnotation = "phasescale.io/gpus-per-worker";
// Seconds the job still needs at its minimum replicas (its remaining work in base-demand time, so
// that the controller's own scaling does not change what it reads).
inline constexpr const char* kRemainingSecondsAnnotation = "phasescale.io/remaining-seconds";
// Throughput against workers, "workers:throughput" pairs: "1:1,2:1.9,4:3.4" (default: linear).
inline constexpr const char* kScalingCurveAnnotation = "phasescale.io/scaling-curve";

// An inference or training node.
struct NodeView {
    std::string name;
    int gpus = 0;             // allocatable GPUs
    bool schedulable = true;  // not cordoned
    bool loaned = false;      // carries kLoanedLabel=true
    bool returned = false;    // carries the kReturnedTaint
};

enum class PodRole { Inference, Training, System };

// A pod bound to a node, not terminating.
struct PodView {
    std::string ns;
    std::string name;
    std::string node;
    int gpus = 0;  // requested
    PodRole role = PodRole::Inference;
    // Index into the jobs for training pods (elastic jobs' pods, and inelastic training pods
    // grouped by their controller); none for others.
    std::optional<std::size_t> job;
};

// A training job. Elastic ones are scaled; inelastic ones (min == max == their pods) only count
// for the preemption cost and the GPUs they hold.
struct JobView {
    std::string ns;
    std::string name;
    bool elastic = false;
    int replicas = 0;  // elastic: spec.replicas from the scale subresource
    int min_replicas = 1;
    int max_replicas = 1;
    int gpus_per_worker = 1;
    double remaining_seconds = 0;  // at min_replicas
    policy::ScalingCurve curve;    // linear when it has no points
};

struct LoanInputs {
    std::vector<NodeView> inference;  // the inference pool
    std::vector<NodeView> training;   // the training pool
    std::vector<PodView> pods;        // on those nodes
    std::vector<JobView> jobs;
    int required_servers = 0;
    int headroom_servers = 0;
};

struct LoanPlan {
    int target_loaned = 0;                     // nodes that may be loaned now
    std::vector<std::size_t> loan;             // inference nodes to loan, in name order
    std::vector<std::size_t> ret;              // inference nodes to return, in reclaim order
    std::vector<policy::ReclaimStep> reclaim;  // per returned node (server = index into inference)
    std::vector<bool> loaned_after;            // per inference node
    std::vector<bool> returned_after;          // per inference node
    std::vector<std::size_t> evict;            // training pods that must go
    int spare_gpus = 0;                        // for elastic workers above the minimums
    std::vector<int> replicas;  // per job: the replicas to set (inelastic: unchanged)
};

// Whether a node runs no inference pod (system pods do not count; training pods do not either).
bool idle(const std::string& node, const std::vector<PodView>& pods);

// Inference nodes that may be loaned: schedulable ones minus the servers inference needs and
// the headroom; never below 0.
int loan_target(const std::vector<NodeView>& inference, int required_servers, int headroom_servers);

// Idle, schedulable, not loaned inference nodes to loan, `count` at most, in name order.
std::vector<std::size_t> choose_loans(const std::vector<NodeView>& inference,
                                      const std::vector<PodView>& pods, std::size_t count);

// `count` loaned inference nodes to return, chosen by policy::plan_reclaim on the training pods
// they hold (empty first, then those whose elastic jobs only shrink, then least preemption cost).
std::vector<policy::ReclaimStep> choose_returns(const std::vector<NodeView>& inference,
                                                const std::vector<PodView>& pods,
                                                const std::vector<JobView>& jobs,
                                                std::size_t count);

// The training pods on nodes that are returned (returned_after): those must go; nothing else.
std::vector<std::size_t> pods_to_evict(const std::vector<NodeView>& inference,
                                       const std::vector<bool>& returned_after,
                                       const std::vector<PodView>& pods);

// GPUs left for elastic workers above their minimums: the GPUs of the training pool and of the
// nodes loaned (loaned_after), minus those held by pods that are not elastic jobs' pods on them,
// minus every elastic job's base demand (min_replicas x gpus_per_worker). Never below 0.
int spare_gpus(const LoanInputs& in, const std::vector<bool>& loaned_after);

// The knapsack of policy/elastic.hpp: each elastic job is a class whose option k (0..max-min) is
// k workers above its minimum, worth jct_reduction(curve, remaining_seconds, min, k). Returns
// the replicas per job: min + k for elastic jobs (a job at 0 replicas is suspended and stays at
// 0), the current replicas for the others.
std::vector<int> elastic_replicas(const std::vector<JobView>& jobs, int spare_gpus);

// Everything above, in order: loan or return, evict, then size the elastic jobs.
LoanPlan plan(const LoanInputs& in);

// Node marks for a state.
enum class NodeState { Inference, Loaned, Returned };
const char* to_string(NodeState state);

// A merge patch that gives `node` (as the API returns it) the labels and taints of `state`,
// keeping every other label and taint, conditional on its resourceVersion; null when the node
// has them already.
json node_patch(const json& node, NodeState state);

// "1:1,2:1.9,4:3.4" -> points; nullopt if malformed (or a value is not positive).
std::optional<policy::ScalingCurve> parse_curve(const std::string& text);

}  // namespace phasescale::loan
