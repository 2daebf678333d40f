#include "html_text.hpp"

#include <cmath>
#include <cstdio>

namespace phasescale::sim::html {

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string printf_string(const char* format, double x) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, x);
    return buffer;
}

std::string fixed(double x, int decimals) {
    if (!std::isfinite(x)) return "—";
    if (std::fabs(x) < 0.5 * std::pow(10.0, -decimals)) x = 0;  // no "-0.0"
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, x);
    return buffer;
}

}  // namespace phasescale::sim::html
