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

TEST_CASE("phase statistics: the rise, the most usage reached within the next minute",
          "[statistics]") {
    const std::vector<double> t = {0, 20, 40, 60, 80, 200, 300};
    LabelledExecution e;
    e.timestamps = &t;
    e.phases = {-1, 0, 0, 1, 1, 0, 0};
    e.usage = Matrix{{0, 1}, {1, 100}, {1, 150}, {2, 300}, {2, 0}, {1, 200}, {1, 400}};
    e.distances = std::vector<double>(t.size(), 0.1);
    const PhaseStatistics s = compute_statistics({e}, 2, {"cpu", "mem"});
    // Phase 0: 20 s (100) reaches 300 within 60 s: 3; 40 s (150) reaches 300 at 60 s: 2. 200 s
    // has nothing within a minute (300 s is 100 s later), and nor has the last sample.
    const Summary& rise0 = s.phases[0].rise[1];
    CHECK(rise0.count == 2);
    CHECK(rise0.max == Approx(3));
    CHECK(rise0.p50 == Approx(2.5));
    // Phase 1: 60 s (300) falls to 0 at 80 s: 0. A sample of no usage (80 s) has no ratio.
    CHECK(s.phases[1].rise[1].count == 1);
    CHECK(s.phases[1].rise[1].max == 0);
    // Every column has its own: CPU 1 -> 2 from 20 s and 40 s.
    CHECK(s.phases[0].rise[0].p50 == Approx(2));
    // Without CPU and memory columns of the canonical names, no sample is known to be settled.
    CHECK(s.phases[0].settled_rise[1].count == 0);
}

TEST_CASE("phase statistics: the rise of samples after their execution showed its working set",
          "[statistics]") {
    // Idle (phase 0) at 100 MiB, then at work (phase 1) at 300 from 40 s; its working set is
    // shown at 100 s (four samples at work, memory level, run for 60 s). Then a pause (phase 0)
    // and back to work 10% higher.
    const std::vector<double> t = {0, 20, 40, 60, 80, 100, 120, 140, 160};
    LabelledExecution e;
    e.timestamps = &t;
    e.phases = {0, 0, 1, 1, 1, 1, 0, 1, 1};
    e.usage = Matrix{{0.02, 100}, {0.02, 100}, {1, 300}, {1, 300}, {1, 300},
                     {1, 300},    {0.02, 300}, {1, 330}, {1, 330}};
    e.distances = std::vector<double>(t.size(), 0.1);
    const PhaseStatistics s = compute_statistics({e}, 2, {kCpuUsageColumn, kMemoryUsageColumn});
    // Phase 0 rose 3x from its start-up samples, 1.1x from the pause of a settled job.
    CHECK(s.phases[0].rise[1].count == 3);
    CHECK(s.phases[0].rise[1].max == Approx(3));
    CHECK(s.phases[0].settled_rise[1].count == 1);
    CHECK(s.phases[0].settled_rise[1].max == Approx(1.1));
    // Phase 1: settled from 100 s (1.1x to 330) and at 140 s (level); the last has no later one.
    CHECK(s.phases[1].rise[1].count == 5);
    CHECK(s.phases[1].settled_rise[1].count == 2);
    CHECK(s.phases[1].settled_rise[1].max == Approx(1.1));
    CHECK(s.phases[1].settled_rise[1].p50 == Approx(1.05));
}
