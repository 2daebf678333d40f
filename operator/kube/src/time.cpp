#include "phasescale/kube/time.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace phasescale::kube {

std::string format_time(double unix_seconds) {
    const std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::optional<double> parse_time(const std::string& text) {
    std::tm tm{};
    int n = 0;
    double sec = 0;
    if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lf%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &sec, &n) != 6)
        return std::nullopt;
    if (static_cast<std::size_t>(n) >= text.size() || text[static_cast<std::size_t>(n)] != 'Z')
        return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_sec = 0;
    return static_cast<double>(timegm(&tm)) + sec;
}

}  // namespace phasescale::kube
