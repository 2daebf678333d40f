#include <phasescale/model/error.hpp>
#include <phasescale/model/kmeans.hpp>
#include <phasescale/model/phases.hpp>

#include <cmath>
#include <limits>

namespace phasescale::model {

Matrix model_features(const PhaseModel& model, const Trace& trace, const Execution& execution) {
    Matrix features(execution.values.rows(), static_cast<Eigen::Index>(model.features.size()));
    for (std::size_t f = 0; f < model.features.size(); ++f) {
        features.col(static_cast<Eigen::Index>(f)) =
            execution.values.col(static_cast<Eigen::Index>(trace.column_index(model.features[f])));
    }
    return features;
}

ExecutionPhases predict_phases(const PhaseModel& model, const Matrix& features) {
    const Eigen::Index rows = features.rows(), his = model.crbm.n_his;
    ExecutionPhases out;
    out.phases.assign(rows, -1);
    out.distances.assign(rows, std::numeric_limits<double>::quiet_NaN());
    out.hidden = Matrix::Constant(rows, model.crbm.n_hid, std::numeric_limits<double>::quiet_NaN());
    if (rows <= his) return out;
    const Matrix h = hidden_activations(model.crbm, model.scaler.transform(features));
    out.hidden.bottomRows(h.rows()) = h;
    for (Eigen::Index r = 0; r < h.rows(); ++r) {
        double squared;
        out.phases[r + his] = nearest_centroid(model.centroids, h.row(r).data(), &squared);
        out.distances[r + his] = std::sqrt(squared);
    }
    return out;
}

PhaseStream::PhaseStream(const PhaseModel& model)
    : model_(&model), stream_(model.crbm), scaled_(model.crbm.n_vis), hidden_(model.crbm.n_hid) {}

std::optional<int> PhaseStream::push(const double* features) {
    model_->scaler.transform_row(features, scaled_.data());
    if (!stream_.push(scaled_.data(), hidden_.data())) return std::nullopt;
    double squared;
    const int phase = nearest_centroid(model_->centroids, hidden_.data(), &squared);
    distance_ = std::sqrt(squared);
    return phase;
}

}  // namespace phasescale::model
