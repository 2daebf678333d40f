#pragma once
// Numbers written into CSV files (traces, phases, jobs): the shortest text that reads back as the
// same double ("0.5", "1e-07"), except that a whole number is written in full ("1700000000",
// "100000", not "1.7e+09" or "1e+05"), as tools reading timestamps and counts expect.

#include <string>

namespace phasescale::model {

// Whole numbers up to this magnitude are written in full; beyond, the shortest text.
inline constexpr double kLargestWrittenInFull = 1e15;

std::string number_text(double value);

}  // namespace phasescale::model
