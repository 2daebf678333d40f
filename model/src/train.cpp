#include <phasescale/model/error.hpp>
#include <phasescale/model/kmeans.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/train.hpp>

#include <chrono>
#include <set>

namespace phasescale::model {
namespace {

void check(const TrainOptions& o) {
  auto fail = [](const std::string& what) { throw InputError("training: " + what); };
  if (o.features.empty()) fail("no features given");
  if (std::set<std::string>(o.features.begin(), o.features.end()).size() != o.features.size())
    fail("a feature is named twice");
  if (std::set<std::string>(o.usage_columns.begin(), o.usage_columns.end()).size() != o.usage_columns.size())
    fail("a usage column is named twice");
  const TrainingParameters& p = o.parameters;
  if (p.hidden < 1) fail("hidden units must be at least 1");
  if (p.history < 1) fail("history must be at least 1");
  if (p.phases < 1) fail("phases must be at least 1");
}

}  // namespace

PhaseModel train_model(const Trace& trace, const TrainOptions& options,
                       const std::function<void(const EpochReport&)>& on_epoch) {
  check(options);
  const auto start = std::chrono::steady_clock::now();
  const TrainingParameters& p = options.parameters;
  PhaseModel model;
  model.features = options.features;
  model.parameters = p;

  std::vector<Matrix> features;
  std::vector<const Matrix*> feature_views;
  features.reserve(trace.executions.size());
  for (const Execution& e : trace.executions) {
    features.push_back(model_features(model, trace, e));
    feature_views.push_back(&features.back());
  }
  model.scaler = StandardScaler::fit(feature_views);
  std::vector<Matrix> scaled;
  for (const Matrix& f : features) scaled.push_back(model.scaler.transform(f));

  // Separate seeds for the three random choices, so changing one option cannot shift another.
  model.crbm = Crbm::initialise(static_cast<int>(model.features.size()), p.hidden, p.history, p.seed);
  CrbmTrainOptions crbm_options;
  crbm_options.epochs = p.epochs;
  crbm_options.learning_rate = p.learning_rate;
  crbm_options.batch = p.batch;
  crbm_options.cd_steps = p.cd_steps;
  crbm_options.momentum = p.momentum;
  crbm_options.weight_decay = p.weight_decay;
  crbm_options.patience = p.patience;
  crbm_options.seed = p.seed + 1;
  const CrbmTrainResult trained = train_crbm(model.crbm, scaled, crbm_options, on_epoch);

  std::vector<Matrix> hidden;
  Eigen::Index slices = 0;
  for (const Matrix& z : scaled) {
    hidden.push_back(hidden_activations(model.crbm, z));
    slices += hidden.back().rows();
  }
  Matrix all_hidden(slices, p.hidden);
  Eigen::Index at = 0;
  for (const Matrix& h : hidden) {
    all_hidden.middleRows(at, h.rows()) = h;
    at += h.rows();
  }
  KMeansOptions kmeans_options;
  kmeans_options.k = p.phases;
  kmeans_options.restarts = p.kmeans_restarts;
  kmeans_options.seed = p.seed + 2;
  const KMeansResult clusters = kmeans(all_hidden, kmeans_options);
  model.centroids = clusters.centroids;

  std::vector<LabelledExecution> labelled;
  for (std::size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    ExecutionPhases phases = predict_phases(model, features[i]);
    LabelledExecution l;
    l.timestamps = &e.timestamps;
    l.usage.resize(e.values.rows(), static_cast<Eigen::Index>(options.usage_columns.size()));
    for (std::size_t c = 0; c < options.usage_columns.size(); ++c) {
      l.usage.col(static_cast<Eigen::Index>(c)) =
          e.values.col(static_cast<Eigen::Index>(trace.column_index(options.usage_columns[c])));
    }
    l.phases = std::move(phases.phases);
    l.distances = std::move(phases.distances);
    labelled.push_back(std::move(l));
  }
  model.statistics = compute_statistics(labelled, p.phases, options.usage_columns);

  TrainingSummary summary;
  summary.final_reconstruction_error = trained.final_reconstruction_error();
  summary.reconstruction_error_per_epoch = trained.reconstruction_error_per_epoch;
  summary.stopped_early = trained.stopped_early;
  summary.executions = trace.executions.size();
  summary.rows = trace.rows();
  summary.slices = trained.slices;
  summary.kmeans_inertia = clusters.inertia;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  model.training = summary;
  return model;
}

}  // namespace phasescale::model
