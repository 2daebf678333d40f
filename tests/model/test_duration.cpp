#include <catch2/catch.hpp>

#include <phasescale/model/duration.hpp>

#include <stdexcept>
#include <string>

using phasescale::model::parse_duration;
using std::chrono::milliseconds;

namespace {

// The message parse_duration throws for text, or "" when it parses.
std::string error_of(const std::string& text) {
    try {
        parse_duration(text, "--tick");
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("durations: every unit, decimals, and seconds without a unit", "[duration]") {
    CHECK(parse_duration("500ms", "--tick") == milliseconds(500));
    CHECK(parse_duration("15s", "--tick") == milliseconds(15'000));
    CHECK(parse_duration("1.5s", "--tick") == milliseconds(1'500));
    CHECK(parse_duration("5m", "--tick") == milliseconds(300'000));
    CHECK(parse_duration("2h", "--tick") == milliseconds(7'200'000));
    CHECK(parse_duration("14d", "--tick") == milliseconds(1'209'600'000));
    CHECK(parse_duration("1w", "--tick") == milliseconds(604'800'000));
    CHECK(parse_duration("0.5d", "--tick") == milliseconds(43'200'000));
    CHECK(parse_duration("15", "--tick") == milliseconds(15'000));
    CHECK(parse_duration(".5s", "--tick") == milliseconds(500));
    CHECK(parse_duration("1.9ms", "--tick") ==
          milliseconds(1));  // fractions of a millisecond dropped
    CHECK(parse_duration("36500d", "--tick") == phasescale::model::kMaxDuration);
}

TEST_CASE("durations: bad text names the flag, says why and gives the grammar", "[duration]") {
    const std::string grammar = phasescale::model::kDurationGrammar;
    CHECK(error_of("-5s") == "--tick: '-5s' is not a duration (negative); write " + grammar);
    CHECK(error_of("") == "--tick: '' is not a duration (no number first); write " + grammar);
    CHECK(error_of("s") == "--tick: 's' is not a duration (no number first); write " + grammar);
    CHECK(error_of("5x") == "--tick: '5x' is not a duration (unknown unit); write " + grammar);
    CHECK(error_of("0s") == "--tick: '0s' is not a duration (under 1ms); write " + grammar);
    CHECK(error_of("0.5ms") == "--tick: '0.5ms' is not a duration (under 1ms); write " + grammar);
    CHECK(error_of("36501d") ==
          "--tick: '36501d' is not a duration (over 36500d); write " + grammar);
    CHECK(error_of(std::string(400, '9') + "s").find("(over 36500d)") != std::string::npos);
    for (const char* bad :
         {"5 s", "5S", "1.5.5s", "1e3s", "0x10s", "5s5", "5mss", ".", "+5s", " 5s"})
        CHECK_FALSE(error_of(bad).empty());
}
