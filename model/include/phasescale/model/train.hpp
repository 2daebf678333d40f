#pragma once
// The whole training pipeline: scale the features, train the CRBM, cluster its hidden
// activations into phases, and compute the phase statistics in original units.

#include <phasescale/model/crbm.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/trace.hpp>

#include <functional>
#include <string>
#include <vector>

namespace phasescale::model {

// Usage columns whose per-phase statistics a model records (the trace must have them).
inline const std::vector<std::string> kDefaultUsageColumns = {kCpuUsageColumn, kMemoryUsageColumn};
// Features of the default model: usage only, never what the operator sets (requests, limits).
inline const std::vector<std::string> kDefaultFeatures = {kCpuUsageColumn, kMemoryUsageColumn};

struct TrainOptions {
    std::vector<std::string> features = kDefaultFeatures;
    std::vector<std::string> usage_columns = kDefaultUsageColumns;
    TrainingParameters parameters;  // sizes, CD-k, SGD, k-means; the traces are recorded too
};

// `trace` must hold every feature and usage column (InputError otherwise, and when it has no
// slice: no execution longer than the history).
PhaseModel train_model(const Trace& trace, const TrainOptions& options,
                       const std::function<void(const EpochReport&)>& on_epoch = {});

struct ExtendOptions {
    int new_phases = 2;             // clusters made of the samples the model does not know
    double unknown_distance = 1.0;  // see PhaseStatistics::unknown
    int kmeans_restarts = 10;
    std::uint64_t seed = 1;
};

struct ExtendResult {
    PhaseModel model;
    std::size_t samples = 0;          // samples of the new traces with a full history
    std::size_t unknown_samples = 0;  // of those, in no known phase: the new phases' material
};

// AI4DL's phase expansion: keeps the scaler and the CRBM, clusters the activations of the new
// traces' samples that lie in no known phase into `new_phases` new phases, and adds them with
// their statistics. Known phases keep their statistics; transition and sequence counts of the new
// traces are added to the old ones. `trace` must hold the model's features and usage columns.
// Throws InputError when the model has no statistics or fewer samples than new phases are unknown.
ExtendResult extend_model(const PhaseModel& model, const Trace& trace,
                          const ExtendOptions& options);

}  // namespace phasescale::model
