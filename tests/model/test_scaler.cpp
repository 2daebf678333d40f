#include <phasescale/model/error.hpp>
#include <phasescale/model/scaler.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace phasescale::model;

namespace {

Matrix rows(std::initializer_list<std::initializer_list<double>> values) {
    Matrix m(static_cast<Eigen::Index>(values.size()),
             static_cast<Eigen::Index>(values.begin()->size()));
    Eigen::Index r = 0;
    for (const auto& row : values) {
        Eigen::Index c = 0;
        for (double x : row) m(r, c++) = x;
        ++r;
    }
    return m;
}

}  // namespace

TEST_CASE("StandardScaler fits mean and population std over every matrix", "[scaler]") {
    const Matrix a = rows({{1, 10, -4}, {3, 10, 0}});
    const Matrix empty(0, 3);
    const Matrix b = rows({{5, 10, 4}, {7, 10, 8}});
    const StandardScaler s = StandardScaler::fit({&a, &empty, &b});
    REQUIRE(s.mean.size() == 3);
    CHECK(s.mean[0] == 4.0);
    CHECK(s.mean[1] == 10.0);
    CHECK(s.mean[2] == 2.0);
    // Deviations -3, -1, 1, 3: population variance 5; -6, -2, 2, 6: 20.
    CHECK(s.scale[0] == Approx(std::sqrt(5.0)).epsilon(1e-15));
    CHECK(s.scale[1] == 1.0);  // constant
    CHECK(s.scale[2] == Approx(std::sqrt(20.0)).epsilon(1e-15));

    const Matrix z = s.transform(b);
    CHECK(z(0, 0) == Approx(1 / std::sqrt(5.0)));
    CHECK(z(1, 0) == Approx(3 / std::sqrt(5.0)));
    CHECK(z(1, 2) == Approx(6 / std::sqrt(20.0)));
    CHECK(z(0, 1) == 0.0);

    double row[3];
    s.transform_row(a.row(1).data(), row);
    CHECK(row[0] == (3.0 - s.mean[0]) / s.scale[0]);
    CHECK(row[1] == 0.0);
    CHECK(row[2] == (0.0 - s.mean[2]) / s.scale[2]);
}

TEST_CASE("StandardScaler maps a constant feature to 0, not NaN", "[scaler]") {
    // Ten times 0.1 sums to 0.9999999999999999: the naive mean is off by a rounding error.
    Matrix x(10, 2);
    for (int i = 0; i < 10; ++i) {
        x(i, 0) = 0.1;
        x(i, 1) = i;
    }
    const StandardScaler s = StandardScaler::fit({&x});
    CHECK(s.mean[0] == 0.1);
    CHECK(s.scale[0] == 1.0);
    const Matrix z = s.transform(x);
    for (int i = 0; i < 10; ++i) {
        CHECK(z(i, 0) == 0.0);
        CHECK(std::isfinite(z(i, 1)));
    }

    const Matrix one = rows({{7, -3}});
    const StandardScaler single = StandardScaler::fit({&one});
    CHECK(single.scale[0] == 1.0);
    CHECK(single.scale[1] == 1.0);
    CHECK(single.transform(one).isZero(0));
}

TEST_CASE("StandardScaler stays accurate with a large mean and a small spread", "[scaler]") {
    // Memory in bytes: values near 4e9 that differ by a few bytes.
    const Matrix x = rows({{4e9 + 1}, {4e9 + 2}, {4e9 + 3}});
    const StandardScaler s = StandardScaler::fit({&x});
    CHECK(s.mean[0] == 4e9 + 2);
    CHECK(s.scale[0] == Approx(std::sqrt(2.0 / 3.0)).epsilon(1e-12));
}

TEST_CASE("StandardScaler refuses no rows, ragged inputs and non-finite values", "[scaler]") {
    const Matrix empty(0, 2);
    REQUIRE_THROWS_AS(StandardScaler::fit({}), InputError);
    REQUIRE_THROWS_WITH(StandardScaler::fit({&empty}), "scaler: no rows to fit");
    const Matrix a = rows({{1, 2}});
    const Matrix b = rows({{1, 2, 3}});
    REQUIRE_THROWS_WITH(StandardScaler::fit({&a, &b}),
                        "scaler: matrix 1 has 3 columns, expected 2");
    const Matrix bad = rows({{1, NAN}});
    REQUIRE_THROWS_AS(StandardScaler::fit({&bad}), InputError);
    const StandardScaler s = StandardScaler::fit({&a});
    REQUIRE_THROWS_WITH(s.transform(b), "scaler: 3 features given, it was fit on 2");
}
