#include <phasescale/model/error.hpp>
#include <phasescale/model/kmeans.hpp>
#include <phasescale/model/random.hpp>

#include <catch2/catch.hpp>

#include <set>

using namespace phasescale::model;

namespace {

// Three tight blobs far apart, 50 points each, interleaved.
Matrix blobs() {
    const double centres[3][2] = {{0, 0}, {10, 0}, {0, 10}};
    Random random(3);
    Matrix x(150, 2);
    for (int i = 0; i < 150; ++i) {
        x(i, 0) = centres[i % 3][0] + 0.1 * random.normal();
        x(i, 1) = centres[i % 3][1] + 0.1 * random.normal();
    }
    return x;
}

}  // namespace

TEST_CASE("k-means separates separable data", "[kmeans]") {
    const Matrix x = blobs();
    KMeansOptions o;
    o.k = 3;
    const KMeansResult r = kmeans(x, o);
    REQUIRE(r.labels.size() == 150);
    // Points of one blob share a label, and the three blobs have three different labels.
    std::set<int> labels;
    for (int b = 0; b < 3; ++b) {
        labels.insert(r.labels[b]);
        for (int i = b; i < 150; i += 3) CHECK(r.labels[i] == r.labels[b]);
    }
    CHECK(labels.size() == 3);
    CHECK(r.inertia < 150 * 4 * 0.01 * 2);
    for (int i = 0; i < 150; ++i)
        CHECK(nearest_centroid(r.centroids, x.row(i).data()) == r.labels[i]);
}

TEST_CASE("k-means is deterministic for a seed", "[kmeans]") {
    const Matrix x = blobs();
    KMeansOptions o;
    o.k = 5;
    o.restarts = 3;
    const KMeansResult a = kmeans(x, o), b = kmeans(x, o);
    CHECK(a.centroids == b.centroids);
    CHECK(a.labels == b.labels);
    CHECK(a.inertia == b.inertia);
}

TEST_CASE("nearest centroid returns the squared distance and prefers the lower index on ties",
          "[kmeans]") {
    const Matrix c{{0, 0}, {2, 0}};
    const double x[] = {1, 0};
    double d = -1;
    CHECK(nearest_centroid(c, x, &d) == 0);
    CHECK(d == 1.0);
    const double y[] = {3, 1};
    CHECK(nearest_centroid(c, y, &d) == 1);
    CHECK(d == 2.0);
}

TEST_CASE("k-means keeps k clusters when a centre empties", "[kmeans]") {
    // Many duplicates: k-means++ may pick the same point twice; every cluster must still be used.
    Matrix x(12, 1);
    x << 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 9;
    KMeansOptions o;
    o.k = 3;
    const KMeansResult r = kmeans(x, o);
    CHECK(std::set<int>(r.labels.begin(), r.labels.end()).size() == 3);
    CHECK(r.inertia == 0);
}

TEST_CASE("k-means rejects fewer distinct points than k", "[kmeans]") {
    Matrix x = Matrix::Ones(10, 2);
    KMeansOptions o;
    o.k = 2;
    CHECK_THROWS_WITH(kmeans(x, o), Catch::Contains("only 1 distinct points"));
}
