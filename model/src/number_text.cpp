#include <phasescale/model/number_text.hpp>

#include <charconv>
#include <cmath>

namespace phasescale::model {

std::string number_text(double value) {
    char buffer[64];
    const bool whole = std::isfinite(value) && std::trunc(value) == value &&
                       std::fabs(value) <= kLargestWrittenInFull;
    const auto result =
        whole ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
              : std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

}  // namespace phasescale::model
