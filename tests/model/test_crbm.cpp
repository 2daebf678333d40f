#include <phasescale/model/crbm.hpp>
#include <phasescale/model/error.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace phasescale::model;

namespace {

double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}

// Two visible units, one hidden unit, history of one sample; parameters set by hand.
Crbm tiny() {
    Crbm c;
    c.n_vis = 2;
    c.n_hid = 1;
    c.n_his = 1;
    c.W = Matrix{{0.5, -0.25}};
    c.A = Matrix{{0.1, 0.2}, {-0.3, 0.4}};
    c.B = Matrix{{0.7, -0.6}};
    c.v_bias = Vector{{0.05, -0.05}};
    c.h_bias = Vector{{0.1}};
    return c;
}

Matrix random_walk(int rows, int cols, double phase) {
    Matrix m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) m(r, c) = std::sin(0.1 * r * (c + 1) + phase) + 0.01 * c;
    return m;
}

}  // namespace

TEST_CASE("one CD-1 step matches a hand computation", "[crbm]") {
    Crbm c = tiny();
    const double p0 = 1.0, q0 = -2.0;  // z_{t-1}: the history vector is (p0, q0)
    const double p1 = 0.5, q1 = 1.5;   // z_t
    const Matrix z{{p0, q0}, {p1, q1}};

    // Positive phase, reconstruction, negative phase, written out by hand.
    const double h0 = sigmoid(0.5 * p1 - 0.25 * q1 + 0.7 * p0 - 0.6 * q0 + 0.1);
    const double v1p = 0.5 * h0 + 0.1 * p0 + 0.2 * q0 + 0.05;
    const double v1q = -0.25 * h0 - 0.3 * p0 + 0.4 * q0 - 0.05;
    const double h1 = sigmoid(0.5 * v1p - 0.25 * v1q + 0.7 * p0 - 0.6 * q0 + 0.1);
    const double lr = 0.1;

    CrbmTrainOptions o;
    o.epochs = 1;
    o.learning_rate = lr;
    const CrbmTrainResult r = train_crbm(c, {z}, o);

    REQUIRE(r.slices == 1);
    CHECK(r.final_reconstruction_error() == Approx(std::hypot(p1 - v1p, q1 - v1q)).epsilon(1e-14));
    CHECK(c.W(0, 0) == Approx(0.5 + lr * (h0 * p1 - h1 * v1p)).epsilon(1e-14));
    CHECK(c.W(0, 1) == Approx(-0.25 + lr * (h0 * q1 - h1 * v1q)).epsilon(1e-14));
    CHECK(c.A(0, 0) == Approx(0.1 + lr * (p1 - v1p) * p0).epsilon(1e-14));
    CHECK(c.A(0, 1) == Approx(0.2 + lr * (p1 - v1p) * q0).epsilon(1e-14));
    CHECK(c.A(1, 0) == Approx(-0.3 + lr * (q1 - v1q) * p0).epsilon(1e-14));
    CHECK(c.A(1, 1) == Approx(0.4 + lr * (q1 - v1q) * q0).epsilon(1e-14));
    CHECK(c.B(0, 0) == Approx(0.7 + lr * (h0 - h1) * p0).epsilon(1e-14));
    CHECK(c.B(0, 1) == Approx(-0.6 + lr * (h0 - h1) * q0).epsilon(1e-14));
    CHECK(c.v_bias(0) == Approx(0.05 + lr * (p1 - v1p)).epsilon(1e-14));
    CHECK(c.v_bias(1) == Approx(-0.05 + lr * (q1 - v1q)).epsilon(1e-14));
    CHECK(c.h_bias(0) == Approx(0.1 + lr * (h0 - h1)).epsilon(1e-14));
}

TEST_CASE("the history vector is column-major, oldest sample first", "[crbm]") {
    // With W = 0 and one hidden unit, h = sigmoid(B c): set B to pick one entry of c at a time.
    Crbm c = Crbm::initialise(2, 1, 3, 1);
    c.W.setZero();
    c.h_bias.setZero();
    const Matrix z{{1, 10}, {2, 20}, {3, 30}, {4, 40}};
    // c = (z[0][0], z[1][0], z[2][0], z[0][1], z[1][1], z[2][1]) = (1, 2, 3, 10, 20, 30)
    const double expected[] = {1, 2, 3, 10, 20, 30};
    for (int k = 0; k < 6; ++k) {
        c.B.setZero();
        c.B(0, k) = 0.01;
        CHECK(hidden_activations(c, z)(0, 0) == Approx(sigmoid(0.01 * expected[k])).epsilon(1e-15));
    }
}

TEST_CASE("the same seed gives the same model bit for bit", "[crbm]") {
    const std::vector<Matrix> data = {random_walk(60, 3, 0.0), random_walk(45, 3, 1.0)};
    CrbmTrainOptions o;
    o.epochs = 5;
    o.learning_rate = 0.01;
    o.seed = 7;
    Crbm a = Crbm::initialise(3, 4, 2, 11), b = Crbm::initialise(3, 4, 2, 11);
    train_crbm(a, data, o);
    train_crbm(b, data, o);
    CHECK(a.W == b.W);
    CHECK(a.A == b.A);
    CHECK(a.B == b.B);
    CHECK(a.v_bias == b.v_bias);
    CHECK(a.h_bias == b.h_bias);

    Crbm other = Crbm::initialise(3, 4, 2, 11);
    o.seed = 8;
    train_crbm(other, data, o);
    CHECK(other.W != a.W);
}

TEST_CASE("training lowers the reconstruction error on every update rule", "[crbm]") {
    const std::vector<Matrix> data = {random_walk(200, 4, 0.0), random_walk(150, 4, 2.0)};
    auto run = [&](CrbmTrainOptions o) {
        Crbm c = Crbm::initialise(4, 6, 3, 3);
        o.epochs = 30;
        return train_crbm(c, data, o).reconstruction_error_per_epoch;
    };
    CrbmTrainOptions sgd;
    sgd.learning_rate = 0.01;
    CrbmTrainOptions batch = sgd, momentum = sgd, decay = sgd, cd3 = sgd;
    batch.batch = 8;
    batch.learning_rate = 0.05;
    momentum.momentum = 0.5;
    decay.weight_decay = 1e-4;
    cd3.cd_steps = 3;
    for (const CrbmTrainOptions& o : {sgd, batch, momentum, decay, cd3}) {
        const std::vector<double> errors = run(o);
        REQUIRE(errors.size() == 30);
        CHECK(errors.back() < 0.7 * errors.front());
    }
}

TEST_CASE("a mini-batch update averages the slices' gradients", "[crbm]") {
    // One epoch over a single execution with batch = all slices equals one update with the mean
    // gradient, whatever the slice order: two different seeds must agree (up to rounding).
    const std::vector<Matrix> data = {random_walk(20, 2, 0.3)};
    CrbmTrainOptions o;
    o.epochs = 1;
    o.batch = 100;
    o.learning_rate = 0.05;
    Crbm a = tiny(), b = tiny();
    o.seed = 1;
    train_crbm(a, data, o);
    o.seed = 2;
    train_crbm(b, data, o);
    CHECK(a.W.isApprox(b.W, 1e-13));
    CHECK(a.A.isApprox(b.A, 1e-13));
    CHECK(a.B.isApprox(b.B, 1e-13));
    CHECK(!a.W.isApprox(tiny().W, 1e-6));
}

TEST_CASE("early stopping ends training after `patience` epochs without improvement", "[crbm]") {
    const std::vector<Matrix> data = {random_walk(100, 2, 0.0)};
    CrbmTrainOptions o;
    o.epochs = 1000;
    o.learning_rate = 0.01;
    o.patience = 2;
    o.min_improvement = 1e9;  // nothing counts as an improvement after the first epoch
    Crbm c = Crbm::initialise(2, 3, 2, 1);
    const CrbmTrainResult r = train_crbm(c, data, o);
    CHECK(r.reconstruction_error_per_epoch.size() == 3);
    CHECK(r.stopped_early);
}

TEST_CASE("batched and incremental inference give the same numbers", "[crbm]") {
    for (auto [n_vis, n_hid, n_his] : {std::tuple{8, 10, 3}, {2, 10, 3}, {3, 5, 2}}) {
        const Crbm c = Crbm::initialise(n_vis, n_hid, n_his, 5, 20.0);
        const Matrix z = random_walk(40, n_vis, 0.5);
        const Matrix batched = hidden_activations(c, z);
        REQUIRE(batched.rows() == 40 - n_his);
        CrbmStream stream(c);
        Vector h(n_hid);
        for (int r = 0; r < 40; ++r) {
            const bool ready = stream.push(z.row(r).data(), h.data());
            REQUIRE(ready == (r >= n_his));
            if (ready) CHECK(h.transpose() == batched.row(r - n_his));
        }
    }
}

TEST_CASE("bad CRBM input gives a clear error", "[crbm]") {
    CHECK_THROWS_WITH(Crbm::initialise(0, 10, 3, 1), Catch::Contains("at least 1"));
    Crbm c = Crbm::initialise(2, 3, 3, 1);
    CrbmTrainOptions o;
    CHECK_THROWS_WITH(train_crbm(c, {Matrix::Zero(3, 2)}, o),
                      Catch::Contains("nothing to train on"));
    CHECK_THROWS_WITH(train_crbm(c, {Matrix::Zero(9, 5)}, o), Catch::Contains("5 features"));
    o.learning_rate = 0;
    CHECK_THROWS_WITH(train_crbm(c, {Matrix::Zero(9, 2)}, o), Catch::Contains("learning rate"));
    o = {};
    o.cd_steps = 0;
    CHECK_THROWS_WITH(train_crbm(c, {Matrix::Zero(9, 2)}, o), Catch::Contains("CD steps"));
    CHECK_THROWS_WITH(hidden_activations(c, Matrix::Zero(9, 4)), Catch::Contains("4 features"));
}
