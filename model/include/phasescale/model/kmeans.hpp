#pragma once
#include <phasescale/model/types.hpp>

#include <cstdint>
#include <vector>

namespace phasescale::model {

struct KMeansOptions {
    int k = 5;
    int restarts = 10;         // k-means++ initialisations; the lowest inertia wins
    int max_iterations = 300;  // Lloyd iterations per restart
    std::uint64_t seed = 1;
};

struct KMeansResult {
    Matrix centroids;         // k x dim
    std::vector<int> labels;  // per point
    double inertia = 0;       // sum of squared distances to the assigned centroid
};

// Throws InputError when there are fewer distinct points than k.
KMeansResult kmeans(const Matrix& points, const KMeansOptions& options);

// Index of the nearest centroid (squared Euclidean distance; the lower index wins ties).
int nearest_centroid(const Matrix& centroids, const double* x, double* squared_distance = nullptr);

}  // namespace phasescale::model
