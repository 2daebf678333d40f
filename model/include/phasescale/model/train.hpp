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
inline const std::vector<std::string> kDefaultUsageColumns = {"cpu.usage.cores", "mem.working.set"};
// Features of the default model: usage only, never what the operator sets (requests, limits).
inline const std::vector<std::string> kDefaultFeatures = {"cpu.usage.cores", "mem.working.set"};

struct TrainOptions {
  std::vector<std::string> features = kDefaultFeatures;
  std::vector<std::string> usage_columns = kDefaultUsageColumns;
  TrainingParameters parameters;  // sizes, CD-k, SGD, k-means; the traces are recorded too
};

// `trace` must hold every feature and usage column (InputError otherwise, and when it has no
// slice: no execution longer than the history).
PhaseModel train_model(const Trace& trace, const TrainOptions& options,
                       const std::function<void(const EpochReport&)>& on_epoch = {});

}  // namespace phasescale::model
