#include <phasescale/model/error.hpp>
#include <phasescale/model/kmeans.hpp>
#include <phasescale/model/phase_names.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/train.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace phasescale::model {
namespace {

void check(const TrainOptions& o) {
    auto fail = [](const std::string& what) { throw InputError("training: " + what); };
    if (o.features.empty()) fail("no features given");
    if (std::set<std::string>(o.features.begin(), o.features.end()).size() != o.features.size())
        fail("a feature is named twice");
    if (std::set<std::string>(o.usage_columns.begin(), o.usage_columns.end()).size() !=
        o.usage_columns.size())
        fail("a usage column is named twice");
    const TrainingParameters& p = o.parameters;
    if (p.hidden < 1) fail("hidden units must be at least 1");
    if (p.history < 1) fail("history must be at least 1");
    if (p.phases < 1) fail("phases must be at least 1");
}

// Labels each execution with `model` for compute_statistics.
std::vector<LabelledExecution> label(const Trace& trace,
                                     const std::vector<std::string>& usage_columns,
                                     const std::vector<ExecutionPhases>& phases) {
    std::vector<LabelledExecution> labelled;
    for (std::size_t i = 0; i < trace.executions.size(); ++i) {
        const Execution& e = trace.executions[i];
        LabelledExecution l;
        l.timestamps = &e.timestamps;
        l.usage.resize(e.values.rows(), static_cast<Eigen::Index>(usage_columns.size()));
        for (std::size_t c = 0; c < usage_columns.size(); ++c) {
            l.usage.col(static_cast<Eigen::Index>(c)) =
                e.values.col(static_cast<Eigen::Index>(trace.column_index(usage_columns[c])));
        }
        l.phases = phases[i].phases;
        l.distances = phases[i].distances;
        labelled.push_back(std::move(l));
    }
    return labelled;
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
    model.crbm =
        Crbm::initialise(static_cast<int>(model.features.size()), p.hidden, p.history, p.seed);
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

    std::vector<ExecutionPhases> phases;
    for (const Matrix& f : features) phases.push_back(predict_phases(model, f));
    const std::vector<LabelledExecution> labelled = label(trace, options.usage_columns, phases);
    model.statistics = compute_statistics(labelled, p.phases, options.usage_columns);
    model.phase_names = derive_phase_names(model);

    TrainingSummary summary;
    summary.final_reconstruction_error = trained.final_reconstruction_error();
    summary.reconstruction_error_per_epoch = trained.reconstruction_error_per_epoch;
    summary.stopped_early = trained.stopped_early;
    summary.executions = trace.executions.size();
    summary.rows = trace.rows();
    summary.slices = trained.slices;
    summary.kmeans_inertia = clusters.inertia;
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    model.training = summary;
    return model;
}

}  // namespace phasescale::model

namespace phasescale::model {

ExtendResult extend_model(const PhaseModel& model, const Trace& trace,
                          const ExtendOptions& options) {
    if (!model.statistics)
        throw InputError("extending a model: it has no phase statistics (an AI4DL model?)");
    if (options.new_phases < 1)
        throw InputError("extending a model: new phases must be at least 1");
    const PhaseStatistics& old_stats = *model.statistics;
    const int old_k = model.phases();

    ExtendResult result;
    std::vector<ExecutionPhases> known;
    std::vector<std::pair<std::size_t, Eigen::Index>> unknown;  // (execution, sample)
    for (const Execution& e : trace.executions) {
        known.push_back(predict_phases(model, model_features(model, trace, e)));
        const ExecutionPhases& p = known.back();
        for (std::size_t t = 0; t < p.phases.size(); ++t) {
            if (p.phases[t] < 0) continue;
            ++result.samples;
            if (old_stats.unknown(p.phases[t], p.distances[t], options.unknown_distance))
                unknown.emplace_back(known.size() - 1, static_cast<Eigen::Index>(t));
        }
    }
    Matrix hidden(static_cast<Eigen::Index>(unknown.size()), model.crbm.n_hid);
    for (std::size_t i = 0; i < unknown.size(); ++i)
        hidden.row(static_cast<Eigen::Index>(i)) =
            known[unknown[i].first].hidden.row(unknown[i].second);
    result.unknown_samples = static_cast<std::size_t>(hidden.rows());
    if (hidden.rows() < options.new_phases) {
        throw InputError("extending a model: only " + std::to_string(hidden.rows()) + " of " +
                         std::to_string(result.samples) +
                         " samples are in no known phase, fewer than the " +
                         std::to_string(options.new_phases) + " new phases asked for");
    }
    KMeansOptions kmeans_options;
    kmeans_options.k = options.new_phases;
    kmeans_options.restarts = options.kmeans_restarts;
    kmeans_options.seed = options.seed;
    const KMeansResult clusters = kmeans(hidden, kmeans_options);

    PhaseModel extended = model;
    extended.format = kModelFormat;
    extended.centroids.conservativeResize(old_k + options.new_phases, Eigen::NoChange);
    extended.centroids.bottomRows(options.new_phases) = clusters.centroids;

    // Statistics of the new traces under the extended model; the known phases keep theirs.
    std::vector<ExecutionPhases> relabelled;
    for (const Execution& e : trace.executions)
        relabelled.push_back(predict_phases(extended, model_features(extended, trace, e)));
    const PhaseStatistics fresh =
        compute_statistics(label(trace, old_stats.usage_columns, relabelled), extended.phases(),
                           old_stats.usage_columns);
    PhaseStatistics merged = fresh;
    for (int p = 0; p < old_k; ++p)
        merged.phases[static_cast<std::size_t>(p)] = old_stats.phases[static_cast<std::size_t>(p)];
    merged.transitions.topLeftCorner(old_k, old_k) += old_stats.transitions;
    merged.executions += old_stats.executions;
    std::map<std::vector<int>, std::size_t> sequences;
    for (const PhaseSequence& s : old_stats.sequences) sequences[s.phases] += s.executions;
    for (const PhaseSequence& s : fresh.sequences) sequences[s.phases] += s.executions;
    merged.sequences.clear();
    for (const auto& [phases, count] : sequences) merged.sequences.push_back({phases, count});
    keep_most_common(merged.sequences);
    extended.statistics = std::move(merged);
    // Known phases keep their names (a user may have edited them); the new ones are named from
    // the statistics, apart from the known names.
    std::vector<std::string> known_names;
    for (int p = 0; p < old_k; ++p) known_names.push_back(model.phase_name(p));
    std::vector<std::string> derived = derive_phase_names(extended);
    std::vector<std::string> new_names(derived.begin() + old_k, derived.end());
    make_names_unique(new_names, known_names);
    extended.phase_names = known_names;
    extended.phase_names.insert(extended.phase_names.end(), new_names.begin(), new_names.end());
    if (extended.parameters) extended.parameters->phases = extended.phases();
    result.model = std::move(extended);
    return result;
}

}  // namespace phasescale::model
