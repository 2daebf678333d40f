// Quantity parsing (control::parse_quantity, quantity_of) on any text: nothing or a finite,
// non-negative value that formats and parses back to its rounding.
#include <phasescale/control/quantity.hpp>

#include <algorithm>
#include <cmath>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

// Equal but for the last bits: "111100m" parses as 111100 x 1e-3, round_cpu(111.1) is 111100 /
// 1000.
bool same(double a, double b) {
    return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

void check(double value) {
    fuzz::require(std::isfinite(value) && value >= 0, "a quantity is finite and not negative");
    const auto cpu = control::parse_quantity(control::format_cpu(value));
    fuzz::require(cpu && same(*cpu, control::round_cpu(value)),
                  "format_cpu parses back to round_cpu");
    const auto memory = control::parse_quantity(control::format_memory(value));
    fuzz::require(memory && same(*memory, control::round_memory(value)),
                  "format_memory parses back to round_memory");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = fuzz::text_of(data, size);
    if (const auto value = control::parse_quantity(text)) check(*value);
    // As the API may send it: a JSON string or number.
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) {
        if (const auto value = control::quantity_of(j)) check(*value);
    }
    return 0;
}
