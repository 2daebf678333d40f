// Properties of quantities (control/quantity.hpp) on random values of every magnitude: what is
// formatted parses back to its rounding (to the last bit or so), the rounding is up by less than
// one unit, and nothing formatted or parsed is negative or NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <phasescale/control/quantity.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/policy/bounds.hpp>

using namespace phasescale;
using namespace phasescale::control;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Log-uniform over 1e-12 .. 1e22, and now and then a value no quantity may hold.
double random_value(model::Random& random) {
    switch (random.below(12)) {
        case 0: return 0;
        case 1: return -random.uniform() * 1e6;
        case 2: return std::numeric_limits<double>::quiet_NaN();
        case 3: return std::numeric_limits<double>::infinity();
        default: return std::pow(10.0, -12 + 34 * random.uniform());
    }
}

bool sane(double x) {
    return std::isfinite(x) && x >= 0;
}

}  // namespace

TEST_CASE("quantity property: format_cpu parses back to round_cpu, rounded up by under 1m",
          "[unit][quantity][property]") {
    model::Random random(5);
    for (int trial = 0; trial < 20000; ++trial) {
        const double cores = random_value(random);
        const std::string text = format_cpu(cores);
        INFO(cores << " -> " << text);
        const auto back = parse_quantity(text);
        REQUIRE(back);
        CHECK(*back == Approx(round_cpu(cores)).epsilon(1e-12));  // 111100m parses as 111100 x 1e-3
        CHECK(sane(*back));
        CHECK(*back >= 0.001);
        CHECK(*back <= policy::kMaxCpuCores);
        if (sane(cores) && cores <= policy::kMaxCpuCores) {
            CHECK(*back >= cores - 2e-9);  // ceil(x - 1e-6): float noise is not rounding down
            CHECK(*back < std::max(cores, 0.001) + 0.001);
        }
    }
}

TEST_CASE("quantity property: format_memory parses back to round_memory, rounded up by under 1Mi",
          "[unit][quantity][property]") {
    model::Random random(6);
    for (int trial = 0; trial < 20000; ++trial) {
        const double bytes = random_value(random) * (random.below(2) == 0 ? 1 : 1e6);
        const std::string text = format_memory(bytes);
        INFO(bytes << " -> " << text);
        const auto back = parse_quantity(text);
        REQUIRE(back);
        CHECK(*back == Approx(round_memory(bytes)).epsilon(1e-12));
        CHECK(sane(*back));
        CHECK(*back >= kMiB);
        CHECK(*back <= policy::kMaxMemoryBytes);
        if (sane(bytes) && bytes <= policy::kMaxMemoryBytes) {
            CHECK(*back >= bytes - 1e-3);  // ceil(x - 1e-9) in MiB
            CHECK(*back < std::max(bytes, kMiB) + kMiB);
        }
    }
}

TEST_CASE(
    "quantity property: a number with a suffix parses to number x factor, never negative or NaN",
    "[unit][quantity][property]") {
    const std::vector<std::pair<std::string, double>> suffixes = {
        {"", 1},        {"m", 1e-3},  {"k", 1e3},          {"M", 1e6},          {"G", 1e9},
        {"Ki", 1024.0}, {"Mi", kMiB}, {"Gi", kMiB * 1024}, {"Ti", kMiB * kMiB}, {"e3", 1e3},
        {"E-2", 1e-2}};
    model::Random random(7);
    for (int trial = 0; trial < 20000; ++trial) {
        const auto& [suffix, factor] = suffixes[random.below(suffixes.size())];
        const double number = std::round(random.uniform() * 1e6) / 1e3;  // three decimals
        std::string text = std::to_string(number);
        if (random.below(4) == 0) text = "-" + text;
        text += suffix;
        INFO(text);
        const auto value = parse_quantity(text);
        if (text[0] == '-' && number > 0) {
            CHECK_FALSE(value);  // resources are never negative
            continue;
        }
        REQUIRE(value);
        CHECK(sane(*value));
        CHECK(*value == Approx(number * factor).epsilon(1e-12));
    }
}
