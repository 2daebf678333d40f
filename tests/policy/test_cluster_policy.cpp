// Aryl's algorithms (policy/elastic.hpp): the knapsack of extra workers against brute force, and
// the reclaim order on hand-made clusters.

#include <phasescale/model/random.hpp>
#include <phasescale/policy/elastic.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <vector>

using namespace phasescale::policy;

namespace {

// Every combination of options: the true optimum of a small instance.
double brute_force(const std::vector<KnapsackClass>& classes, int capacity) {
    double best = 0;
    std::function<void(std::size_t, int, double)> walk = [&](std::size_t i, int left,
                                                             double value) {
        if (i == classes.size()) {
            best = std::max(best, value);
            return;
        }
        for (std::size_t k = 0; k < classes[i].values.size(); ++k) {
            const int weight = static_cast<int>(k) * classes[i].gpus_per_worker;
            if (weight > left) break;
            walk(i + 1, left - weight, value + (k == 0 ? 0 : classes[i].values[k]));
        }
    };
    walk(0, capacity, 0);
    return best;
}

double value_of(const std::vector<KnapsackClass>& classes, const KnapsackChoice& choice) {
    double v = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        if (choice.extra[i] > 0) v += classes[i].values[static_cast<std::size_t>(choice.extra[i])];
    }
    return v;
}

int weight_of(const std::vector<KnapsackClass>& classes, const KnapsackChoice& choice) {
    int w = 0;
    for (std::size_t i = 0; i < classes.size(); ++i)
        w += choice.extra[i] * classes[i].gpus_per_worker;
    return w;
}

}  // namespace

TEST_CASE("knapsack: dynamic programming equals brute force, greedy is never better",
          "[cluster][knapsack]") {
    phasescale::model::Random random(7);
    int greedy_worse = 0;
    for (int trial = 0; trial < 400; ++trial) {
        std::vector<KnapsackClass> classes(1 + random.below(5));
        for (auto& c : classes) {
            c.gpus_per_worker = 1 << random.below(3);  // 1, 2 or 4
            c.values.assign(1 + random.below(4), 0.0);
            double v = 0;
            for (std::size_t k = 1; k < c.values.size(); ++k) {
                // Mostly increasing values, sometimes not concave (the greedy's weak spot).
                v += random.uniform() * 100 * (random.below(4) == 0 ? 3 : 1);
                c.values[k] = v;
            }
        }
        const int capacity = static_cast<int>(random.below(17));
        INFO("trial " << trial << ", capacity " << capacity);

        const KnapsackChoice exact = solve_knapsack(classes, capacity);
        const KnapsackChoice greedy = solve_knapsack_greedy(classes, capacity);
        REQUIRE(exact.extra.size() == classes.size());
        REQUIRE(greedy.extra.size() == classes.size());
        CHECK(exact.value == Approx(brute_force(classes, capacity)).margin(1e-9));
        CHECK(exact.value == Approx(value_of(classes, exact)).margin(1e-9));
        CHECK(exact.gpus == weight_of(classes, exact));
        CHECK(exact.gpus <= capacity);
        CHECK(greedy.gpus == weight_of(classes, greedy));
        CHECK(greedy.gpus <= capacity);
        CHECK(greedy.value == Approx(value_of(classes, greedy)).margin(1e-9));
        CHECK(greedy.value <= exact.value + 1e-9);
        for (std::size_t i = 0; i < classes.size(); ++i) {
            CHECK(exact.extra[i] >= 0);
            CHECK(exact.extra[i] <
                  static_cast<int>(std::max<std::size_t>(classes[i].values.size(), 1)));
        }
        if (greedy.value < exact.value - 1e-9) ++greedy_worse;
    }
    CHECK(greedy_worse > 0);  // the instances do tell the two apart
}

TEST_CASE("knapsack: greedy finds the optimum on concave values of equal weights",
          "[cluster][knapsack]") {
    phasescale::model::Random random(3);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<KnapsackClass> classes(1 + random.below(5));
        for (auto& c : classes) {
            c.gpus_per_worker = 2;
            c.values.assign(1 + random.below(5), 0.0);
            double step = 50 + random.uniform() * 50, v = 0;
            for (std::size_t k = 1; k < c.values.size(); ++k) {
                v += step;
                c.values[k] = v;
                step *= random.uniform();  // diminishing returns
            }
        }
        const int capacity = static_cast<int>(random.below(20));
        CHECK(solve_knapsack_greedy(classes, capacity).value ==
              Approx(solve_knapsack(classes, capacity).value).margin(1e-9));
    }
}

TEST_CASE("knapsack: edge cases", "[cluster][knapsack]") {
    CHECK(solve_knapsack({}, 10).extra.empty());
    std::vector<KnapsackClass> one = {{4, {0, 10, 15}}};
    CHECK(solve_knapsack(one, 3).extra == std::vector<int>{0});  // the first worker does not fit
    CHECK(solve_knapsack(one, -5).gpus == 0);
    CHECK(solve_knapsack(one, 8).extra == std::vector<int>{2});
    CHECK(solve_knapsack(one, 1000).extra == std::vector<int>{2});
    // A worthless option is not taken: ties keep fewer workers.
    std::vector<KnapsackClass> flat = {{1, {0, 5, 5}}};
    CHECK(solve_knapsack(flat, 2).extra == std::vector<int>{1});
    CHECK(solve_knapsack_greedy(flat, 2).extra == std::vector<int>{1});
}

TEST_CASE("scaling curve: interpolation, origin, flat tail, monotone", "[cluster][scaling]") {
    const ScalingCurve linear;
    CHECK(linear.throughput(3) == 3);
    const ScalingCurve curve({{8, 120}, {2, 40}, {4, 60}, {6, 50}});  // unsorted, dips at 6
    CHECK(curve.throughput(1) == Approx(20));                         // through the origin
    CHECK(curve.throughput(3) == Approx(50));                         // between 2 and 4
    CHECK(curve.throughput(6) == Approx(60));                         // the dip is lifted
    CHECK(curve.throughput(100) == Approx(120));                      // flat beyond the last point
    CHECK(curve.speedup(2, 8) == Approx(3));
    CHECK(jct_reduction(curve, 300, 2, 0) == 0);
    CHECK(jct_reduction(curve, 300, 2, 6) == Approx(200));  // 3x faster: 300 s becomes 100 s
    CHECK_THROWS_AS(ScalingCurve({{0, 1}}), std::invalid_argument);
}

namespace {

ReclaimServer loaned(std::vector<Placement> placements) {
    return {true, std::move(placements)};
}

std::vector<std::size_t> order(const ReclaimPlan& plan) {
    std::vector<std::size_t> s;
    for (const auto& step : plan.steps) s.push_back(step.server);
    return s;
}

}  // namespace

TEST_CASE("reclaim: empty loaned servers first, then shrink-only, then least preemption cost",
          "[cluster][reclaim]") {
    // Jobs: 0 inelastic 8 workers; 1 elastic 2..6 workers; 2 inelastic 2 workers; 3 inelastic 4.
    const std::vector<ReclaimJob> jobs = {{1, 8, 8}, {1, 6, 2}, {1, 2, 2}, {2, 4, 4}};
    const std::vector<ReclaimServer> servers = {
        {false, {{0, 4}}},         // 0: a training server: never returned
        loaned({{0, 4}}),          // 1: half of job 0: cost 0.5
        loaned({}),                // 2: empty
        loaned({{1, 3}}),          // 3: 3 of job 1's 4 extra workers: it shrinks
        loaned({{2, 1}, {3, 2}}),  // 4: half of job 2 + half of job 3: cost 1.0
        loaned({{2, 1}}),          // 5: the other half of job 2: cost 0.5, 1 GPU in use
    };
    SECTION("one at a time, in order") {
        const ReclaimPlan plan = plan_reclaim(jobs, servers, 5);
        // 2 (empty), 3 (shrink), then 5 (cost 0.5, 1 GPU, beats server 1's 0.5 with 4 GPUs), then
        // server 4: job 2 is gone, so only job 3's half remains (0.5), tied with server 1 at 0.5
        // and 4 GPUs: the lower index, 1; last 4.
        CHECK(order(plan) == std::vector<std::size_t>{2, 3, 5, 1, 4});
        CHECK(plan.steps[0].kind == ReclaimKind::empty);
        CHECK(plan.steps[1].kind == ReclaimKind::shrink);
        CHECK(plan.steps[2].kind == ReclaimKind::preempt);
        CHECK(plan.steps[2].cost == Approx(0.5));
        CHECK(plan.steps[3].cost == Approx(0.5));
        CHECK(plan.steps[4].cost ==
              Approx(0.5));  // recomputed: job 2 was preempted by the pick of 5
        CHECK(plan.cost == Approx(1.5));
        CHECK(plan.preempted == std::vector<bool>{true, false, true, true});
        CHECK(plan.workers_lost[1] == 3);
    }
    SECTION("k larger than the loaned servers returns them all") {
        CHECK(plan_reclaim(jobs, servers, 50).steps.size() == 5);
    }
    SECTION("k = 0 returns nothing") {
        CHECK(plan_reclaim(jobs, servers, 0).steps.empty());
    }
}

TEST_CASE("reclaim: a job shrinks until its minimum, then a further server preempts it",
          "[cluster][reclaim]") {
    // Elastic job 0: 5..10 workers, 3 on each of two loaned servers and 4 on a training server.
    const std::vector<ReclaimJob> jobs = {{1, 10, 5}, {1, 1, 1}};
    const std::vector<ReclaimServer> servers = {
        {false, {{0, 4}}}, loaned({{0, 3}}), loaned({{0, 3}, {1, 1}})};
    const ReclaimPlan plan = plan_reclaim(jobs, servers, 2);
    // Server 1 only shrinks job 0 (10 -> 7); server 2 then takes it below 5: preempted, together
    // with job 1 (cost 3/7 + 1).
    REQUIRE(order(plan) == std::vector<std::size_t>{1, 2});
    CHECK(plan.steps[0].kind == ReclaimKind::shrink);
    CHECK(plan.steps[1].kind == ReclaimKind::preempt);
    CHECK(plan.steps[1].cost == Approx(3.0 / 7 + 1));
    CHECK(plan.preempted == std::vector<bool>{true, true});
}

TEST_CASE("reclaim: preempting a job empties its other loaned servers", "[cluster][reclaim]") {
    // Job 0 spans servers 0 and 1 (4 + 4 of 8 workers); job 1 fills server 2 (8 of 8).
    const std::vector<ReclaimJob> jobs = {{1, 8, 8}, {1, 8, 8}};
    const std::vector<ReclaimServer> servers = {loaned({{0, 4}}), loaned({{0, 4}}),
                                                loaned({{1, 8}})};
    const ReclaimPlan plan = plan_reclaim(jobs, servers, 2);
    REQUIRE(order(plan) == std::vector<std::size_t>{0, 1});
    CHECK(plan.steps[1].kind == ReclaimKind::empty);  // job 0 is gone from it
    CHECK(plan.cost == Approx(0.5));
    CHECK(plan.preempted == std::vector<bool>{true, false});
}
