// Kubernetes resource quantities ("1500m", "2", "1Gi", "512M", "1e3") as numbers, and back:
// CPU as whole millicores ("1500m"), memory as whole mebibytes ("1024Mi") or bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace phasescale::control {

// The value in base units (cores, bytes); nullopt for anything that is not a quantity, for
// negative values and for values too large for a double (1e400).
std::optional<double> parse_quantity(std::string_view text);
// A quantity as the API may return it: a string or a JSON number.
std::optional<double> quantity_of(const nlohmann::json& value);

// Cores as millicores, rounded up: 1.5 -> "1500m", 0.0001 -> "1m"; at most
// policy::kMaxCpuCores (and kMaxMemoryBytes for memory), so formatting never overflows.
std::string format_cpu(double cores);
// Bytes rounded up to a whole MiB: "1024Mi".
std::string format_memory(double bytes);
// Rounding as format_cpu / format_memory do, as numbers.
double round_cpu(double cores);
double round_memory(double bytes);
// Rounded down instead: the most that fits under a bound (a node's allocatable) once written.
double floor_cpu(double cores);
double floor_memory(double bytes);

}  // namespace phasescale::control
