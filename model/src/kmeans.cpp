#include <phasescale/model/error.hpp>
#include <phasescale/model/kmeans.hpp>
#include <phasescale/model/random.hpp>

#include <limits>
#include <string>

namespace phasescale::model {
namespace {

double squared_distance(const double* a, const double* b, Eigen::Index dim) {
    double d = 0;
    for (Eigen::Index i = 0; i < dim; ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
    return d;
}

// k-means++: the first centre uniformly, each next one with probability proportional to the
// squared distance to the nearest centre chosen so far.
Matrix seed_centroids(const Matrix& x, int k, Random& random) {
    const Eigen::Index n = x.rows();
    Matrix centroids(k, x.cols());
    centroids.row(0) = x.row(static_cast<Eigen::Index>(random.below(n)));
    std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
    for (int c = 1; c < k; ++c) {
        double total = 0;
        for (Eigen::Index i = 0; i < n; ++i) {
            nearest[i] =
                std::min(nearest[i],
                         squared_distance(x.row(i).data(), centroids.row(c - 1).data(), x.cols()));
            total += nearest[i];
        }
        Eigen::Index pick = n - 1;
        double target = random.uniform() * total;
        for (Eigen::Index i = 0; i < n; ++i) {
            target -= nearest[i];
            if (target < 0) {
                pick = i;
                break;
            }
        }
        centroids.row(c) = x.row(pick);
    }
    return centroids;
}

// Lloyd's iterations until no label changes. A centre that loses all its points moves to the
// point farthest from its own centre, so k phases stay k phases.
KMeansResult lloyd(const Matrix& x, Matrix centroids, int max_iterations) {
    const Eigen::Index n = x.rows(), k = centroids.rows();
    KMeansResult r;
    r.labels.assign(n, -1);
    std::vector<double> distance(n);
    for (int iteration = 0; iteration < max_iterations; ++iteration) {
        bool changed = false;
        for (Eigen::Index i = 0; i < n; ++i) {
            const int label = nearest_centroid(centroids, x.row(i).data(), &distance[i]);
            changed |= label != r.labels[i];
            r.labels[i] = label;
        }
        if (!changed) break;
        Matrix sums = Matrix::Zero(k, x.cols());
        std::vector<std::size_t> counts(k, 0);
        for (Eigen::Index i = 0; i < n; ++i) {
            sums.row(r.labels[i]) += x.row(i);
            ++counts[r.labels[i]];
        }
        for (Eigen::Index c = 0; c < k; ++c) {
            if (counts[c] > 0) {
                centroids.row(c) = sums.row(c) / static_cast<double>(counts[c]);
                continue;
            }
            const auto far = std::max_element(distance.begin(), distance.end()) - distance.begin();
            centroids.row(c) = x.row(far);
            distance[far] = 0;
        }
    }
    r.inertia = 0;
    for (Eigen::Index i = 0; i < n; ++i) r.inertia += distance[i];
    r.centroids = std::move(centroids);
    return r;
}

}  // namespace

int nearest_centroid(const Matrix& centroids, const double* x, double* squared) {
    int best = 0;
    double best_distance = std::numeric_limits<double>::infinity();
    for (Eigen::Index c = 0; c < centroids.rows(); ++c) {
        const double d = squared_distance(centroids.row(c).data(), x, centroids.cols());
        if (d < best_distance) {
            best_distance = d;
            best = static_cast<int>(c);
        }
    }
    if (squared) *squared = best_distance;
    return best;
}

KMeansResult kmeans(const Matrix& points, const KMeansOptions& options) {
    if (options.k < 1) throw InputError("k-means: k must be at least 1");
    if (options.restarts < 1) throw InputError("k-means: restarts must be at least 1");
    if (options.max_iterations < 1) throw InputError("k-means: max iterations must be at least 1");
    // Enough distinct points for k non-empty clusters? Count up to k of them.
    std::vector<Eigen::Index> distinct;
    for (Eigen::Index i = 0; i < points.rows() && static_cast<int>(distinct.size()) < options.k;
         ++i) {
        bool seen = false;
        for (Eigen::Index j : distinct) seen |= points.row(i) == points.row(j);
        if (!seen) distinct.push_back(i);
    }
    if (static_cast<int>(distinct.size()) < options.k) {
        throw InputError("k-means: " + std::to_string(options.k) +
                         " phases asked for, but the data has only " +
                         std::to_string(distinct.size()) + " distinct points");
    }
    Random random(options.seed);
    KMeansResult best;
    best.inertia = std::numeric_limits<double>::infinity();
    for (int restart = 0; restart < options.restarts; ++restart) {
        KMeansResult r =
            lloyd(points, seed_centroids(points, options.k, random), options.max_iterations);
        if (r.inertia < best.inertia) best = std::move(r);
    }
    return best;
}

}  // namespace phasescale::model
