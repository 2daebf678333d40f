#include "phasescale/model/duration.hpp"

#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace phasescale::model {
namespace {

// Milliseconds per unit; 0 for a unit that is not one.
double unit_ms(std::string_view unit) {
    static constexpr std::pair<std::string_view, double> kUnits[] = {
        {"ms", 1},     {"s", 1e3},     {"", 1e3},      {"m", 60e3},
        {"h", 3600e3}, {"d", 86400e3}, {"w", 604800e3}};
    for (const auto& [name, ms] : kUnits)
        if (name == unit) return ms;
    return 0;
}

// Length of the leading number: digits with at most one point, at least one digit.
std::size_t number_length(std::string_view text) {
    std::size_t i = 0, digits = 0, points = 0;
    for (; i < text.size(); ++i) {
        if (text[i] >= '0' && text[i] <= '9')
            ++digits;
        else if (text[i] == '.' && points == 0)
            ++points;
        else
            break;
    }
    return digits == 0 ? 0 : i;
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what) {
    auto fail = [&](const std::string& why) {
        throw std::invalid_argument(std::string(what) + ": '" + std::string(text) +
                                    "' is not a duration (" + why + "); write " + kDurationGrammar);
    };
    const std::size_t n = number_length(text);
    if (n == 0) fail(!text.empty() && text[0] == '-' ? "negative" : "no number first");
    const double per = unit_ms(text.substr(n));
    if (per == 0) fail("unknown unit");
    // strtod on the checked digits alone: it would accept more (exponents, hex) than the grammar.
    const double ms = std::strtod(std::string(text.substr(0, n)).c_str(), nullptr) * per;
    if (!(ms >= 1)) fail("under 1ms");
    if (ms > static_cast<double>(kMaxDuration.count())) fail("over 36500d");
    return std::chrono::milliseconds(static_cast<long long>(ms));
}

}  // namespace phasescale::model
