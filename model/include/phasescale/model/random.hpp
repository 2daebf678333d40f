#pragma once
// A seeded random source whose output is fixed by the C++ standard (std::mt19937_64) and by the
// code below, not by the library's distributions: the same seed gives the same model everywhere.

#include <cstdint>
#include <random>

namespace phasescale::model {

class Random {
public:
    explicit Random(std::uint64_t seed) : engine_(seed) {}

    // Uniform in [0, 1), 53 random bits.
    double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, n), n > 0 (rejection sampling, no modulo bias).
    std::uint64_t below(std::uint64_t n);
    // Standard normal (Box-Muller, one value per call).
    double normal();
    // Fisher-Yates shuffle.
    template <typename T>
    void shuffle(T& items) {
        for (std::size_t i = items.size(); i > 1; --i) {
            std::swap(items[i - 1], items[below(i)]);
        }
    }

private:
    std::mt19937_64 engine_;
};

}  // namespace phasescale::model
