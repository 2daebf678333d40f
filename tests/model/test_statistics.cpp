#include <phasescale/model/statistics.hpp>

#include <catch2/catch.hpp>

using namespace phasescale::model;

TEST_CASE("quantiles interpolate linearly between order statistics", "[statistics]") {
    const std::vector<double> v = {5, 1, 4, 2, 3};
    CHECK(quantile(v, 0.0) == 1);
    CHECK(quantile(v, 0.5) == 3);
    CHECK(quantile(v, 0.9) == Approx(4.6));
    CHECK(quantile(v, 1.0) == 5);
    CHECK(quantile({}, 0.5) == 0);

    const Summary s = Summary::of({2, 4, 4, 4, 5, 5, 7, 9});
    CHECK(s.count == 8);
    CHECK(s.mean == 5);
    CHECK(s.std == 2);  // population standard deviation
    CHECK(s.p50 == 4.5);
    CHECK(s.max == 9);
    CHECK(s.p99 == Approx(8.86));
}

TEST_CASE("phase statistics: usage, visits, transitions and sequences", "[statistics]") {
    // Two executions, 10 s apart samples. -1 marks samples before the history is full.
    const std::vector<double> t1 = {0, 10, 20, 30, 40, 50, 60};
    const std::vector<double> t2 = {0, 10, 20, 30, 40};
    LabelledExecution a, b;
    a.timestamps = &t1;
    a.phases = {-1, 0, 0, 1, 1, 1, 0};
    a.usage = Matrix{{9, 0}, {1, 100}, {3, 100}, {10, 200}, {20, 200}, {30, 200}, {2, 100}};
    a.distances = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    b.timestamps = &t2;
    b.phases = {-1, 0, 1, 1, 0};
    b.usage = Matrix{{9, 0}, {1, 100}, {10, 200}, {20, 200}, {3, 100}};
    b.distances = {0, 0.1, 0.2, 0.3, 0.4};

    const PhaseStatistics s = compute_statistics({a, b}, 3, {"cpu", "mem"});
    REQUIRE(s.phases.size() == 3);
    CHECK(s.executions == 2);
    CHECK(s.phases[0].samples == 5);
    CHECK(s.phases[1].samples == 5);
    CHECK(s.phases[2].samples == 0);
    CHECK(s.phases[0].usage[0].mean == Approx((1 + 3 + 2 + 1 + 3) / 5.0));
    CHECK(s.phases[0].usage[0].max == 3);
    CHECK(s.phases[1].usage[1].p50 == 200);
    CHECK(s.phases[1].usage[0].max == 30);
    // Visits of phase 0: a: 2 samples (10..30 s), 1 sample (the last, 0 s); b: 1 (10..20 s), 1 (0
    // s).
    CHECK(s.phases[0].visit_samples.count == 4);
    CHECK(s.phases[0].visit_samples.max == 2);
    CHECK(s.phases[0].visit_seconds.max == 20);
    CHECK(s.phases[1].visit_samples.mean == Approx(2.5));
    CHECK(s.phases[1].visit_seconds.p50 == Approx(25));  // a: 30..60 s, b: 20..40 s
    CHECK(s.phases[1].distance.max == Approx(0.5));
    // Transitions: a 0->1, 1->0; b 0->1, 1->0.
    CHECK(s.transitions(0, 1) == 2);
    CHECK(s.transitions(1, 0) == 2);
    CHECK(s.transitions.sum() == 4);
    const Matrix p = s.transition_probabilities();
    CHECK(p(0, 1) == 1);
    CHECK(p.row(2).sum() == 0);
    // Both executions follow 0 -> 1 -> 0.
    REQUIRE(s.sequences.size() == 1);
    CHECK(s.sequences[0].phases == std::vector<int>{0, 1, 0});
    CHECK(s.sequences[0].executions == 2);
}
