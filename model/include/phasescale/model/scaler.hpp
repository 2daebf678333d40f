#pragma once
#include <phasescale/model/types.hpp>

#include <vector>

namespace phasescale::model {

// z = (x - mean) / scale, with the population standard deviation as scale. A feature with zero
// variance gets scale 1 (as scikit-learn does), so it maps to 0 instead of NaN.
struct StandardScaler {
    Vector mean;
    Vector scale;

    static StandardScaler fit(const std::vector<const Matrix*>& data);
    Matrix transform(const Matrix& x) const;
    void transform_row(const double* x, double* z) const;
};

}  // namespace phasescale::model
