#pragma once
#include <Eigen/Core>

namespace phasescale::model {

// Samples are rows; row-major keeps one sample's features (and a run of consecutive samples)
// contiguous in memory, which the CRBM kernels rely on.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

}  // namespace phasescale::model
