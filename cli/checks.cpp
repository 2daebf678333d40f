#include "command.hpp"

#include <CLI/CLI.hpp>

#include <cmath>

namespace phasescale::cli {

namespace {

// A validator of a number that `holds` accepts; `wanted` says what it should be.
CLI::Validator number_check(bool (*holds)(double), const std::string& wanted,
                            const std::string& name) {
    return CLI::Validator(
        [holds, wanted](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value)) return text + " is not a number";
            return std::isfinite(value) && holds(value) ? std::string()
                                                        : text + " is out of range: give " + wanted;
        },
        name);
}

}  // namespace

CLI::Validator non_negative() {
    return number_check([](double v) { return v >= 0; }, "0 or more", "NONNEGATIVE");
}

CLI::Validator positive() {
    return number_check([](double v) { return v > 0; }, "a number above 0", "POSITIVE");
}

}  // namespace phasescale::cli
