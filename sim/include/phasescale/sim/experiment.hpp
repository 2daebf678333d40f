#pragma once
// The simulator's experiment: split the executions into training and held-out ones, get a phase
// model, calibrate each policy's safety margins on the training executions to a target
// fulfilment, replay the held-out executions through every policy and add up the scores.

#include <phasescale/model/model.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/policy/phase.hpp>
#include <phasescale/policy/simple.hpp>
#include <phasescale/policy/vpa.hpp>
#include <phasescale/sim/replay.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phasescale::sim {

// `phase-no-model` is `phase` without its phase model (the ablation).
inline const std::vector<std::string> kPolicies = {
    "static", "vpa",   "vpa-updater",    "vpa-warm", "window",
    "krr",    "phase", "phase-no-model", "oracle",   "perfect"};
// `oracle` and `perfect` see each sample before they allocate for it.
bool is_causal(const std::string& policy);

// Where a trace keeps usage and the allocation it ran with.
struct TraceColumns {
    std::string cpu = "cpu.usage.cores";
    std::string memory = "mem.working.set";
    std::string static_cpu = "cpu.num.cores";
    std::string static_memory = "mem.limit";
};

// The allocation each execution starts with: `fixed` when given, else the trace's static columns
// when it has them, else the first sample's usage (Container::has_original false).
Container make_container(const model::Trace& trace, const model::Execution& execution,
                         const model::PhaseModel& model, const TraceColumns& columns,
                         const std::optional<policy::Amount>& fixed = std::nullopt);

struct PolicySettings {
    policy::ActuationOptions actuation;
    policy::VpaOptions vpa;
    policy::WindowOptions window;
    policy::KrrOptions krr;
    policy::PhaseOptions phase;
    // Margins used when not calibrating (VPA: its upstream 15%; phase: the autoscaler's).
    policy::Margins default_margins(const std::string& policy) const;
};

// Makes each policy's recommender for a container. `vpa-warm` starts from VPA histograms of
// `warm_history`, replayed as if those executions had just finished.
class PolicyFactory {
public:
    PolicyFactory(const model::PhaseModel& model, const PolicySettings& settings);
    std::unique_ptr<policy::Recommender> make(const std::string& name, const Container& container,
                                              const std::vector<const Container*>& warm_history,
                                              policy::Margins margins) const;

private:
    const model::PhaseModel& model_;
    const PolicySettings& settings_;
};

struct Calibration {
    policy::Margins margins;
    double cpu_fulfilment = 0;  // reached on the calibration executions
    std::size_t oom_kills = 0;  // likewise
};

// What calibration aims at: CPU at a fulfilment, memory at an OOM-kill budget (what a kill
// costs a job is not a 5% miss).
struct RiskTarget {
    double cpu_fulfilment = 0.95;
    std::size_t oom_kills = 0;  // at most this many on the calibration executions
};

// Executions to replay, and the factory (so the phase model) each is replayed with.
struct ReplaySet {
    const PolicyFactory* factory = nullptr;
    std::vector<const Container*> containers;
};

// The smallest margins (to 1e-4) that reach `target` over every execution of `sets`, found by
// bisection for CPU and memory at once (each resource's margin only moves its own risk). Margins
// never go below `lowest` (the operator's policy accepts no negative margin).
Calibration calibrate(
    const std::string& policy, const std::vector<ReplaySet>& sets,
    const std::function<std::vector<const Container*>(const Container&)>& warm_history,
    const RiskTarget& target, const policy::ActuationOptions& actuation, double lowest = -0.95);

struct Fold {
    std::vector<std::size_t> training;  // execution indices
    std::vector<std::size_t> held_out;
};

// No split (train_fraction 0 and folds 0): one fold, everything held out, nothing for training.
// train_fraction F: one fold with round(F * n) training executions (at least 1, at most n - 1).
// folds K: K folds, each execution held out in exactly one. Whole executions, shuffled by seed.
std::vector<Fold> split_executions(std::size_t executions, double train_fraction, int folds,
                                   std::uint64_t seed);

struct ExperimentOptions {
    std::vector<std::string> policies = kPolicies;
    // Calibration to equal risk (0: none, each policy's own margins): `phase` to CPU at this
    // fulfilment and memory at no more OOM kills than the VPA at its upstream defaults on the same
    // training executions; every other policy to the risk `phase` reached there. `phase` replays
    // each training execution with a model that never saw it (trained on the other inner folds of
    // the training set, `inner_folds` of them at most): its own model would know them.
    double target_fulfilment = 0;
    int inner_folds = 5;
    double train_fraction = 0;
    int folds = 0;
    std::uint64_t seed = 1;
    TraceColumns columns;
    // The allocation every execution starts with (and `static` keeps); without it, the trace's.
    std::optional<policy::Amount> static_allocation;
    PolicySettings settings;
    // Margins swept (the same for CPU and memory) to draw each policy's trade-off curve.
    std::vector<double> tradeoff_margins = {-0.5, -0.3, -0.2, -0.1, 0, 0.05, 0.1, 0.15,
                                            0.2,  0.3,  0.5,  0.75, 1, 1.5,  2};
};

struct TradeoffPoint {
    double margin = 0;
    ResourceScore cpu, memory;
};

struct PolicyResult {
    Score score;                           // over all held-out executions
    std::vector<RiskTarget> targets;       // per fold, what calibration aimed at
    std::vector<policy::Margins> margins;  // per fold
    std::vector<TradeoffPoint> tradeoff;
};

struct ContainerResult {
    Container container;
    int fold = 0;
    std::map<std::string, Replay> replays;
};

struct Report {
    std::vector<std::string> policies;
    std::map<std::string, PolicyResult> results;
    std::vector<ContainerResult> containers;
    std::vector<Fold> folds;
    ExperimentOptions options;
    std::shared_ptr<const model::PhaseModel> model;  // the last fold's, for its phase statistics
    bool split = false;
    std::vector<std::string> notes;  // what the reader should know (a policy skipped, and why)

    // 1 - allocated(policy) / allocated(baseline) for one resource ("cpu" or "memory").
    double reduction(const std::string& policy, const std::string& baseline,
                     const std::string& resource) const;
};

// Returns the model for a fold, given its training executions (empty without a split).
using ModelSource = std::function<std::shared_ptr<const model::PhaseModel>(
    const std::vector<std::size_t>& training)>;

Report run_experiment(const model::Trace& trace, const ModelSource& model_source,
                      const ExperimentOptions& options);

}  // namespace phasescale::sim
