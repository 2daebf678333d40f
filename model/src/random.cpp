#include <phasescale/model/random.hpp>

#include <cmath>
#include <limits>
#include <numbers>

namespace phasescale::model {

std::uint64_t Random::below(std::uint64_t n) {
    // Largest multiple of n that fits, so every residue is equally likely.
    const std::uint64_t limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
    std::uint64_t x;
    do {
        x = engine_();
    } while (x >= limit);
    return x % n;
}

double Random::normal() {
    double u1;
    do {
        u1 = uniform();
    } while (u1 <= 0.0);
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace phasescale::model
