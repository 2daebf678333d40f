#pragma once
// A phase model: the features it reads, their scaler, the CRBM, the k-means centroids over its
// hidden activations and, for models phasescale trained, the phase statistics and how it was
// trained. Stored as one versioned JSON document (docs/model.md).

#include <phasescale/model/crbm.hpp>
#include <phasescale/model/scaler.hpp>
#include <phasescale/model/statistics.hpp>
#include <phasescale/model/types.hpp>

#include <optional>
#include <string>
#include <vector>

namespace phasescale::model {

inline constexpr const char* kModelFormat = "phasescale-model";
inline constexpr int kModelVersion = 1;
// The pretrained AI4DL model exported to JSON (../shared/data/ai4dl/README.md); read only.
inline constexpr const char* kAi4dlFormat = "ai4dl-reference-v1";

struct TrainingParameters {
    std::vector<std::string> traces;
    std::string id_column = "pod.id";
    int hidden = 10;
    int history = 3;
    int phases = 5;
    int epochs = 100;
    double learning_rate = 0.001;
    int batch = 1;
    int cd_steps = 1;
    double momentum = 0;
    double weight_decay = 0;
    int patience = 0;
    int kmeans_restarts = 10;
    std::uint64_t seed = 1;
};

struct TrainingSummary {
    double final_reconstruction_error = 0;
    std::vector<double> reconstruction_error_per_epoch;
    bool stopped_early = false;
    std::size_t executions = 0;
    std::size_t rows = 0;
    std::size_t slices = 0;
    double kmeans_inertia = 0;
    double seconds = 0;
};

struct PhaseModel {
    std::string format = kModelFormat;  // the format it was read from
    std::vector<std::string> features;
    StandardScaler scaler;
    Crbm crbm;
    Matrix centroids;  // phases x n_hid
    // One per centroid, unique label values (phase_names.hpp). A model read from a file always
    // has them (derived from its statistics when the file has none); empty in a model built by
    // hand, whose phases are then phase-N.
    std::vector<std::string> phase_names;
    std::optional<PhaseStatistics> statistics;  // absent in AI4DL models
    std::optional<TrainingParameters> parameters;
    std::optional<TrainingSummary> training;

    int phases() const { return static_cast<int>(centroids.rows()); }
    // The name of a phase: its entry in phase_names, or phase-N ("unknown" for a negative one).
    std::string phase_name(int phase) const;
};

// Parses and validates a model document (either format). `source` names it in error messages,
// which also name the offending field, e.g. "model.json: crbm.W[3][1]: expected a finite number,
// got null".
PhaseModel parse_model(const std::string& text, const std::string& source);
PhaseModel load_model(const std::string& path);

std::string serialise_model(const PhaseModel& model);  // always the phasescale format
// Writes to a temporary file beside `path` and renames it: a reader never sees half a model.
void save_model(const PhaseModel& model, const std::string& path);

}  // namespace phasescale::model
