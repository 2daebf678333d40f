#include <phasescale/model/error.hpp>
#include <phasescale/model/scaler.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace phasescale::model {

StandardScaler StandardScaler::fit(const std::vector<const Matrix*>& data) {
    Eigen::Index cols = -1;
    double n = 0;
    for (std::size_t m = 0; m < data.size(); ++m) {
        const Matrix& x = *data[m];
        if (x.rows() == 0) continue;
        if (cols < 0) cols = x.cols();
        if (x.cols() != cols) {
            throw InputError("scaler: matrix " + std::to_string(m) + " has " +
                             std::to_string(x.cols()) + " columns, expected " +
                             std::to_string(cols));
        }
        if (!x.allFinite()) {
            throw InputError("scaler: matrix " + std::to_string(m) +
                             " has a value that is not finite");
        }
        n += static_cast<double>(x.rows());
    }
    if (cols < 0) throw InputError("scaler: no rows to fit");

    Vector sum = Vector::Zero(cols);
    Vector low = Vector::Constant(cols, std::numeric_limits<double>::infinity());
    Vector high = Vector::Constant(cols, -std::numeric_limits<double>::infinity());
    for (const Matrix* x : data) {
        if (x->rows() == 0) continue;
        sum += x->colwise().sum().transpose();
        low = low.cwiseMin(x->colwise().minCoeff().transpose());
        high = high.cwiseMax(x->colwise().maxCoeff().transpose());
    }
    StandardScaler s;
    s.mean = sum / n;

    // Two passes with the rounding error of the mean subtracted (the "corrected two-pass"
    // algorithm): stable even when the mean is large against the spread (memory in bytes).
    Vector squares = Vector::Zero(cols);
    Vector deviations = Vector::Zero(cols);
    for (const Matrix* x : data) {
        if (x->rows() == 0) continue;
        const Matrix d = x->rowwise() - s.mean.transpose();
        squares += d.cwiseProduct(d).colwise().sum().transpose();
        deviations += d.colwise().sum().transpose();
    }
    s.scale.resize(cols);
    for (Eigen::Index j = 0; j < cols; ++j) {
        if (low[j] == high[j]) {
            // Constant: the summed mean may be off by a rounding error, which a tiny computed
            // spread would blow up; pin both so the feature maps to exactly 0.
            s.mean[j] = low[j];
            s.scale[j] = 1;
            continue;
        }
        const double variance = (squares[j] - deviations[j] * deviations[j] / n) / n;
        s.scale[j] = variance > 0 ? std::sqrt(variance) : 1.0;
    }
    return s;
}

Matrix StandardScaler::transform(const Matrix& x) const {
    if (x.cols() != mean.size()) {
        throw InputError("scaler: " + std::to_string(x.cols()) + " features given, it was fit on " +
                         std::to_string(mean.size()));
    }
    Matrix z(x.rows(), x.cols());
    for (Eigen::Index r = 0; r < x.rows(); ++r) transform_row(x.row(r).data(), z.row(r).data());
    return z;
}

void StandardScaler::transform_row(const double* x, double* z) const {
    // Division, not multiplication by 1/scale: the same numbers as scikit-learn and AI4DL.
    for (Eigen::Index j = 0; j < mean.size(); ++j) z[j] = (x[j] - mean[j]) / scale[j];
}

}  // namespace phasescale::model
