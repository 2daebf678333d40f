#include "command.hpp"

#include <phasescale/model/duration.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>

namespace phasescale::cli {

CLI::Validator number_that_is(const std::string& requirement, std::function<bool(double)> holds) {
    return CLI::Validator(
        [requirement, holds](std::string& text) -> std::string {
            char* end = nullptr;
            double value = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0') return "'" + text + "' is not a number";
            return holds(value) ? std::string() : "must be " + requirement + ", not " + text;
        },
        requirement);
}

CLI::Validator non_negative() {
    return number_that_is("non-negative", [](double v) { return std::isfinite(v) && v >= 0; });
}

CLI::Validator positive() {
    return number_that_is("positive", [](double v) { return std::isfinite(v) && v > 0; });
}

std::chrono::milliseconds duration_option(const std::string& text, const char* option) {
    try {
        return model::parse_duration(text, option);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

}  // namespace phasescale::cli
