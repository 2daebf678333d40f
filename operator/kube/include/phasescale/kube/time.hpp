// Times as the Kubernetes API writes them (metav1.Time): RFC 3339 in UTC, whole seconds.
#pragma once

#include <optional>
#include <string>

namespace phasescale::kube {

// "2026-11-29T21:30:00Z" (the fraction is dropped).
std::string format_time(double unix_seconds);
// Reads format_time's output, also with fractional seconds; nullopt if it is not one.
std::optional<double> parse_time(const std::string& text);

}  // namespace phasescale::kube
