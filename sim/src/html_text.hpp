// Text for the HTML reports (report_html.cpp, cluster_report.cpp): escaping and numbers.
#pragma once

#include <string>

namespace phasescale::sim::html {

// &, <, >, " and ' as entities: safe in element text and quoted attributes.
std::string escape(const std::string& s);
// snprintf of one number with a printf format ("%.2f h").
std::string printf_string(const char* format, double x);
// x with `decimals` decimals, never "-0.0"; "—" when not finite.
std::string fixed(double x, int decimals);

}  // namespace phasescale::sim::html
