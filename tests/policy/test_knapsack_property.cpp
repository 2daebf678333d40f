// Properties of the knapsack of extra workers (policy/elastic.hpp) on random small instances of
// every shape the loan planner may hand it: any worker size, values that fall or go negative,
// a values[0] that is not 0, no options at all, capacities below zero.

#include <phasescale/model/random.hpp>
#include <phasescale/policy/elastic.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

using namespace phasescale::policy;
using phasescale::model::Random;

namespace {

std::vector<KnapsackClass> random_instance(Random& random) {
    std::vector<KnapsackClass> classes(random.below(5));
    for (auto& c : classes) {
        c.gpus_per_worker = 1 + static_cast<int>(random.below(5));
        c.values.resize(random.below(5));                             // sometimes no option at all
        for (auto& v : c.values) v = (random.uniform() - 0.2) * 100;  // some are negative
    }
    return classes;
}

// The value of option k as the solvers count it: option 0 is worth nothing.
double worth(const KnapsackClass& c, int k) {
    return k == 0 ? 0 : c.values[static_cast<std::size_t>(k)];
}

// The best value of all combinations: the truth for tiny instances.
double brute_force(const std::vector<KnapsackClass>& classes, std::size_t i, int left) {
    if (i == classes.size()) return 0;
    double best = brute_force(classes, i + 1, left);  // option 0
    const auto& c = classes[i];
    for (int k = 1; k < static_cast<int>(c.values.size()); ++k) {
        if (k * c.gpus_per_worker > left) break;
        best =
            std::max(best, worth(c, k) + brute_force(classes, i + 1, left - k * c.gpus_per_worker));
    }
    return best;
}

// A choice is one option per class, within the capacity, and says what it weighs and is worth.
void check_feasible(const std::vector<KnapsackClass>& classes, const KnapsackChoice& choice,
                    int capacity) {
    REQUIRE(choice.extra.size() == classes.size());
    double value = 0;
    int gpus = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const int k = choice.extra[i];
        REQUIRE(k >= 0);
        REQUIRE(k < std::max(1, static_cast<int>(classes[i].values.size())));
        value += worth(classes[i], k);
        gpus += k * classes[i].gpus_per_worker;
    }
    CHECK(choice.gpus == gpus);
    CHECK(choice.gpus <= std::max(capacity, 0));
    CHECK(choice.value == Approx(value).margin(1e-9));
    CHECK(choice.value >= 0);  // taking nothing is always possible
}

}  // namespace

TEST_CASE("knapsack property: within capacity, optimal, never below the greedy",
          "[cluster][knapsack][property]") {
    Random random(12);
    for (int trial = 0; trial < 2000; ++trial) {
        const auto classes = random_instance(random);
        const int capacity = static_cast<int>(random.below(24)) - 4;
        INFO("trial " << trial << ", capacity " << capacity);
        const KnapsackChoice exact = solve_knapsack(classes, capacity);
        const KnapsackChoice greedy = solve_knapsack_greedy(classes, capacity);
        check_feasible(classes, exact, capacity);
        check_feasible(classes, greedy, capacity);
        CHECK(exact.value == Approx(brute_force(classes, 0, std::max(capacity, 0))).margin(1e-9));
        CHECK(exact.value >= greedy.value - 1e-9);
    }
}

TEST_CASE("knapsack property: more GPUs never make the plan worse",
          "[cluster][knapsack][property]") {
    Random random(21);
    for (int trial = 0; trial < 300; ++trial) {
        const auto classes = random_instance(random);
        INFO("trial " << trial);
        double previous = 0;
        for (int capacity = 0; capacity <= 20; ++capacity) {
            const double value = solve_knapsack(classes, capacity).value;
            CHECK(value >= previous - 1e-9);
            previous = value;
        }
    }
}
