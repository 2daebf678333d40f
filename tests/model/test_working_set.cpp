#include <phasescale/model/working_set.hpp>

#include <catch2/catch.hpp>

using namespace phasescale::model;

TEST_CASE("working set: at work at a level over the latest samples, after a horizon",
          "[working-set]") {
    const WorkingSetRule rule;  // 0.1 cores, 4 samples, 1% of memory, 60 s
    const std::vector<double> busy = {0.5, 1, 1, 1}, level = {300, 301, 300, 302};
    CHECK(shows_working_set(busy, level, 60, rule));
    CHECK_FALSE(shows_working_set(busy, level, 59, rule));  // not run for the horizon
    // Idle at one of the last four (an AI4DL start, 0.05 cores); only the last four count.
    CHECK_FALSE(at_work({1, 1, 0.05, 1}, rule));
    CHECK(at_work({0.05, 1, 1, 1, 1}, rule));
    CHECK_FALSE(at_work({1, 1, 1}, rule));  // fewer than four say nothing
    // Growing by more than 1% at each of the last four: a ramp, not a level.
    const std::vector<double> ramp = {100, 102, 104.1, 106.2};
    CHECK(growing(ramp, rule));
    CHECK_FALSE(shows_working_set(busy, ramp, 600, rule));
    CHECK_FALSE(growing({100, 102, 102.5, 106}, rule));  // 0.5% at one of them
    // The rule turned off: never at work, so never shown.
    CHECK_FALSE(at_work(busy, WorkingSetRule{0, 4, 0.01, 60}));
    CHECK_FALSE(at_work(busy, WorkingSetRule{0.1, 1, 0.01, 60}));
    CHECK_FALSE(growing(ramp, WorkingSetRule{0.1, 1, 0.01, 60}));
}
