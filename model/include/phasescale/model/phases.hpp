#pragma once
// Phase inference with a model: batched over a whole execution, or sample by sample online. Both
// give the same numbers.

#include <phasescale/model/crbm.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/trace.hpp>

#include <optional>
#include <vector>

namespace phasescale::model {

struct ExecutionPhases {
    std::vector<int> phases;        // per sample; -1 until the history is full
    Matrix hidden;                  // samples x n_hid; rows without a phase are NaN
    std::vector<double> distances;  // per sample: Euclidean distance to the chosen centroid
};

// Features of one execution in the model's order (throws InputError when the trace lacks one).
Matrix model_features(const PhaseModel& model, const Trace& trace, const Execution& execution);

ExecutionPhases predict_phases(const PhaseModel& model, const Matrix& features);

// Online: raw (unscaled) feature vectors in, the phase of each sample out.
class PhaseStream {
public:
    explicit PhaseStream(const PhaseModel& model);
    // The phase of this sample, or nothing while the history is not yet full.
    std::optional<int> push(const double* features);
    const Vector& hidden() const { return hidden_; }  // activations of the last phased sample
    double distance() const { return distance_; }
    void reset() { stream_.reset(); }

private:
    const PhaseModel* model_;
    CrbmStream stream_;
    Vector scaled_;
    Vector hidden_;
    double distance_ = 0;
};

}  // namespace phasescale::model
