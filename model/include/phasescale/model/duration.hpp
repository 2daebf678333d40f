#pragma once
// The one duration grammar of every flag, the operator's and the CLI's (docs/cli.md: Durations):
// a number, decimals allowed, and a unit: ms, s, m, h, d (24 h) or w (7 d), as in 500ms, 1.5s,
// 5m, 2h, 14d, 1w. A number without a unit is seconds. At least 1 ms, at most kMaxDuration;
// fractions of a millisecond are dropped.

#include <chrono>
#include <string>
#include <string_view>

namespace phasescale::model {

// A hundred years: beyond any flag's use, and far from overflowing nanoseconds.
inline constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(24 * 36500);

// The grammar in one line, for error messages and --help texts.
inline constexpr const char* kDurationGrammar =
    "a number and a unit: ms, s, m, h, d or w (500ms, 1.5s, 5m, 2h, 14d; no unit: seconds)";

// Throws std::invalid_argument "<what>: '<text>' is not a duration (<why>); write
// <kDurationGrammar>", where what names the flag or field.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what);

}  // namespace phasescale::model
