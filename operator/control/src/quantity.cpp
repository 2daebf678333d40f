#include "phasescale/control/quantity.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include <phasescale/policy/bounds.hpp>

namespace phasescale::control {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<double> suffix_factor(std::string_view s) {
    if (s.empty()) return 1.0;
    if (s == "m") return 1e-3;
    if (s == "u") return 1e-6;
    if (s == "n") return 1e-9;
    if (s == "k") return 1e3;
    if (s == "M") return 1e6;
    if (s == "G") return 1e9;
    if (s == "T") return 1e12;
    if (s == "P") return 1e15;
    if (s == "E") return 1e18;
    if (s == "Ki") return 1024.0;
    if (s == "Mi") return kMiB;
    if (s == "Gi") return kMiB * 1024;
    if (s == "Ti") return kMiB * 1024 * 1024;
    if (s == "Pi") return kMiB * 1024 * 1024 * 1024;
    if (s == "Ei") return kMiB * 1024 * 1024 * 1024 * 1024;
    return std::nullopt;
}

// Resources are never negative, and 1e400 is no number: neither is a quantity here.
std::optional<double> checked(double value) {
    if (!std::isfinite(value) || value < 0) return std::nullopt;
    return value;
}

// Within [lo, hi]; NaN counts as lo.
double within(double v, double lo, double hi) {
    return v >= lo ? std::min(v, hi) : lo;
}

}  // namespace

std::optional<double> parse_quantity(std::string_view text) {
    if (text.empty()) return std::nullopt;
    std::size_t i = 0;
    if (text[i] == '+' || text[i] == '-') ++i;
    const std::size_t digits_start = i;
    bool digits = false;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0)) {
        ++i;
        digits = true;
    }
    if (i < text.size() && text[i] == '.') {
        ++i;
        while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0)) {
            ++i;
            digits = true;
        }
    }
    if (!digits || i == digits_start) return std::nullopt;
    double number = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr);
    std::string_view rest = text.substr(i);
    if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest != "E" && rest.size() > 1) {
        // A decimal exponent: e3, E-2.
        std::string exp(rest.substr(1));
        char* end = nullptr;
        const long e = std::strtol(exp.c_str(), &end, 10);
        if (end == exp.c_str() || *end != '\0') return std::nullopt;
        return checked(number * std::pow(10.0, static_cast<double>(e)));
    }
    const auto factor = suffix_factor(rest);
    if (!factor) return std::nullopt;
    return checked(number * *factor);
}

std::optional<double> quantity_of(const nlohmann::json& value) {
    if (value.is_number()) return checked(value.get<double>());
    if (value.is_string())
        return parse_quantity(std::string_view(value.get_ref<const std::string&>()));
    return std::nullopt;
}

// Clamped to the ceiling first, so that no value, however absurd, overflows the whole millicores
// or mebibytes it is written in.
double round_cpu(double cores) {
    return std::max(1.0, std::ceil(within(cores, 0, policy::kMaxCpuCores) * 1000.0 - 1e-6)) /
           1000.0;
}

double round_memory(double bytes) {
    return std::max(1.0, std::ceil(within(bytes, 0, policy::kMaxMemoryBytes) / kMiB - 1e-9)) * kMiB;
}

double floor_cpu(double cores) {
    return std::floor(within(cores, 0, policy::kMaxCpuCores) * 1000.0 + 1e-6) / 1000.0;
}

double floor_memory(double bytes) {
    return std::floor(within(bytes, 0, policy::kMaxMemoryBytes) / kMiB + 1e-9) * kMiB;
}

std::string format_cpu(double cores) {
    return std::to_string(static_cast<long long>(std::llround(round_cpu(cores) * 1000.0))) + "m";
}

std::string format_memory(double bytes) {
    return std::to_string(static_cast<long long>(std::llround(round_memory(bytes) / kMiB))) + "Mi";
}

}  // namespace phasescale::control
