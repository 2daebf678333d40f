// Phase names: derived from the statistics, valid label values, kept and checked in model files.
#include <phasescale/model/error.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/phase_names.hpp>
#include <phasescale/model/pretrained.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"

#include <set>

using namespace phasescale;
using phasescale::testing::GiB;
using phasescale::testing::summary;
using phasescale::testing::two_phase_model;

namespace {

// A model of phases with these median CPU (cores) and memory (GiB).
model::PhaseModel model_of(const std::vector<std::pair<double, double>>& phases) {
    model::PhaseModel m = two_phase_model();
    const auto k = static_cast<Eigen::Index>(phases.size());
    m.centroids = model::Matrix::Zero(k, 1);
    model::PhaseStatistics& s = *m.statistics;
    s.phases.resize(phases.size());
    for (std::size_t p = 0; p < phases.size(); ++p) {
        const auto [cpu, memory] = phases[p];
        s.phases[p].samples = 10;
        s.phases[p].usage = {summary(cpu, cpu, cpu, cpu),
                             summary(memory * GiB, memory * GiB, memory * GiB, memory * GiB)};
    }
    s.transitions = model::Matrix::Zero(k, k);
    return m;
}

std::string with_names(const nlohmann::json& names) {
    auto doc = nlohmann::json::parse(model::serialise_model(two_phase_model()));
    doc["phase_names"] = names;
    return doc.dump();
}

}  // namespace

TEST_CASE("phase names: levels of CPU and memory against the other phases, unique",
          "[model][names]") {
    // CPU 0.1 to 8 cores: thirds of the log range end at about 0.43 and 1.86 cores.
    const auto names = model::derive_phase_names(
        model_of({{0.1, 1}, {0.5, 1}, {8, 20}, {8, 20}, {0.01, 4}, {2, 1}}));
    CHECK(names == std::vector<std::string>{"cpu-low-mem-low", "cpu-mid-mem-low",
                                            "cpu-high-mem-high", "cpu-high-mem-high-2",
                                            "idle-mem-mid", "cpu-high-mem-low"});
    for (const auto& name : names) CHECK(model::phase_name_problem(name).empty());
    // Phases that use about the same (within 1.5x) are all mid.
    CHECK(model::derive_phase_names(model_of({{1, 2}, {1.2, 2.5}})) ==
          std::vector<std::string>{"cpu-mid-mem-mid", "cpu-mid-mem-mid-2"});
    // No statistics (an AI4DL model): phase-N.
    model::PhaseModel bare = two_phase_model();
    bare.statistics.reset();
    CHECK(model::derive_phase_names(bare) == std::vector<std::string>{"phase-0", "phase-1"});
    CHECK(bare.phase_name(1) == "phase-1");  // no names set
    CHECK(bare.phase_name(-1) == "unknown");
}

TEST_CASE("phase names: only label values that name one phase", "[model][names]") {
    CHECK(model::phase_name_problem("data-load").empty());
    CHECK(model::phase_name_problem("3").empty());
    CHECK_FALSE(model::phase_name_problem("").empty());
    CHECK_FALSE(model::phase_name_problem("Data-load").empty());
    CHECK_FALSE(model::phase_name_problem("data_load").empty());
    CHECK_FALSE(model::phase_name_problem("-load").empty());
    CHECK_FALSE(model::phase_name_problem("load-").empty());
    CHECK_FALSE(model::phase_name_problem(std::string(64, 'a')).empty());
    CHECK(model::phase_name_problem(std::string(63, 'a')).empty());
    CHECK_FALSE(model::phase_name_problem("unknown").empty());
    std::vector<std::string> names = {"a", "a", "a-2", std::string(63, 'b'), std::string(63, 'b')};
    model::make_names_unique(names);
    CHECK(names == std::vector<std::string>{"a", "a-2", "a-2-2", std::string(63, 'b'),
                                            std::string(61, 'b') + "-2"});
}

TEST_CASE("phase names: written, read back, edited, derived for files without them",
          "[model][names]") {
    model::PhaseModel m = model::parse_model(model::serialise_model(two_phase_model()), "m.json");
    CHECK(m.phase_names == std::vector<std::string>{"cpu-low-mem-low", "cpu-high-mem-high"});
    m.phase_names[0] = "data-load";
    const model::PhaseModel edited = model::parse_model(model::serialise_model(m), "m.json");
    CHECK(edited.phase_names == std::vector<std::string>{"data-load", "cpu-high-mem-high"});
    CHECK(edited.phase_name(0) == "data-load");
    // A file written before names existed.
    auto doc = nlohmann::json::parse(model::serialise_model(m));
    doc.erase("phase_names");
    CHECK(model::parse_model(doc.dump(), "old.json").phase_names ==
          std::vector<std::string>{"cpu-low-mem-low", "cpu-high-mem-high"});

    const auto refused = [](const nlohmann::json& names) {
        try {
            model::parse_model(with_names(names), "m.json");
        } catch (const model::InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(refused({"a"}) == "m.json: phase_names: expected 2 names (one per centroid), got 1");
    CHECK(refused({"a", "a"}) == "m.json: phase_names[1]: duplicate name \"a\"");
    CHECK(refused({"a", "Big"}) ==
          "m.json: phase_names[1]: \"Big\" may hold only lowercase letters, digits and '-'");
    CHECK(refused({"a", "unknown"}) ==
          "m.json: phase_names[1]: \"unknown\" means no phase; it cannot name one");
    CHECK(refused({"a", 3}) == "m.json: phase_names[1]: expected a string, got 3");
}

TEST_CASE("phase names: the default model has its names, as derived from its statistics",
          "[model][names]") {
    const auto doc = nlohmann::json::parse(model::default_model_text());
    REQUIRE(doc.contains("phase_names"));
    const model::PhaseModel m = model::resolve_model(model::kDefaultModelName);
    CHECK(m.phase_names == doc["phase_names"].get<std::vector<std::string>>());
    CHECK(m.phase_names == model::derive_phase_names(m));
    CHECK(std::set<std::string>(m.phase_names.begin(), m.phase_names.end()).size() ==
          m.phase_names.size());
}
