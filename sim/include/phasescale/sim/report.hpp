#pragma once
// The simulator's report as JSON (layout documented in docs/cli.md, "simulate") and as one
// self-contained HTML page.

#include <phasescale/sim/experiment.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace phasescale::sim {

nlohmann::json report_json(const Report& report);
// One score as the report's policies and containers carry it.
nlohmann::json score_json(const Score& score);
std::string report_html(const Report& report);

}  // namespace phasescale::sim
