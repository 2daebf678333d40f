#include <phasescale/model/error.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/model/train.hpp>

#include <catch2/catch.hpp>

using namespace phasescale::model;

namespace {

// Executions that alternate between the given (cpu, memory GiB) levels every 15 samples.
Trace levels_trace(const std::vector<std::pair<double, double>>& levels, int executions,
                   std::uint64_t seed) {
    Random random(seed);
    Trace trace;
    trace.columns = {"cpu.usage.cores", "mem.working.set"};
    for (int e = 0; e < executions; ++e) {
        Execution x;
        x.id = "e" + std::to_string(e);
        x.values.resize(90, 2);
        for (int t = 0; t < 90; ++t) {
            const auto& [cpu, gib] = levels[static_cast<std::size_t>(t / 15) % levels.size()];
            x.timestamps.push_back(15.0 * t);
            x.values(t, 0) = cpu * (1 + 0.02 * random.normal());
            x.values(t, 1) = gib * 1073741824.0 * (1 + 0.01 * random.normal());
        }
        trace.executions.push_back(std::move(x));
    }
    return trace;
}

TrainOptions small_options() {
    TrainOptions o;
    o.parameters.hidden = 6;
    o.parameters.phases = 2;
    o.parameters.epochs = 30;
    o.parameters.learning_rate = 0.01;
    o.parameters.kmeans_restarts = 3;
    return o;
}

}  // namespace

TEST_CASE("training is deterministic for a seed, whole model included", "[train]") {
    const Trace trace = levels_trace({{0.5, 1}, {3, 4}}, 3, 1);
    const PhaseModel a = train_model(trace, small_options()),
                     b = train_model(trace, small_options());
    CHECK(a.crbm.W == b.crbm.W);
    CHECK(a.crbm.A == b.crbm.A);
    CHECK(a.crbm.B == b.crbm.B);
    CHECK(a.centroids == b.centroids);
    CHECK(a.training->reconstruction_error_per_epoch == b.training->reconstruction_error_per_epoch);
    REQUIRE(a.statistics);
    CHECK(a.statistics->phases.size() == 2);
    // Two clear levels, two phases: one holds the low samples, the other the high ones.
    const double low = a.statistics->phases[0].usage[0].p50,
                 high = a.statistics->phases[1].usage[0].p50;
    CHECK(std::min(low, high) == Approx(0.5).epsilon(0.1));
    CHECK(std::max(low, high) == Approx(3).epsilon(0.1));
    // Named by their levels: the low phase and the high one.
    CHECK(a.phase_names[low < high ? 0 : 1] == "cpu-low-mem-low");
    CHECK(a.phase_names[low < high ? 1 : 0] == "cpu-high-mem-high");
}

TEST_CASE("phase expansion adds phases for what the model does not know", "[train]") {
    const PhaseModel base = train_model(levels_trace({{0.5, 1}, {3, 4}}, 3, 1), small_options());
    // New executions also visit a third level, far from both.
    const Trace fresh = levels_trace({{0.5, 1}, {3, 4}, {8, 12}}, 2, 2);
    ExtendOptions o;
    o.new_phases = 1;
    PhaseModel named = base;
    named.phase_names[0] = "warm-up";  // a name edited by hand stays
    const ExtendResult r = extend_model(named, fresh, o);
    CHECK(r.model.phases() == 3);
    CHECK(r.model.phase_names[0] == "warm-up");
    CHECK(r.model.phase_names[1] == base.phase_names[1]);
    CHECK(r.model.phase_names[2] == "cpu-high-mem-high");  // the new, highest level
    CHECK(r.model.crbm.W == base.crbm.W);
    CHECK(r.model.centroids.topRows(2) == base.centroids);
    CHECK(r.unknown_samples >=
          2 * 30 - 6);  // the third level's samples, give or take the transitions
    CHECK(r.unknown_samples < r.samples / 2);
    const PhaseStatistics& s = *r.model.statistics;
    REQUIRE(s.phases.size() == 3);
    CHECK(s.phases[0].samples == base.statistics->phases[0].samples);  // known phases keep theirs
    CHECK(s.phases[2].usage[0].p50 == Approx(8).epsilon(0.1));
    CHECK(s.transitions.rows() == 3);
    CHECK(s.executions == 5);
    CHECK(r.model.parameters->phases == 3);
    // With the new phase, the third level is known.
    CHECK(extend_model(r.model, fresh, o).unknown_samples < r.unknown_samples / 4);
}

TEST_CASE("phase expansion refuses when nothing is unknown or there are no statistics", "[train]") {
    const Trace trace = levels_trace({{0.5, 1}, {3, 4}}, 3, 1);
    PhaseModel base = train_model(trace, small_options());
    ExtendOptions o;
    o.new_phases = 200;
    CHECK_THROWS_WITH(extend_model(base, trace, o),
                      Catch::Contains("in no known phase, fewer than the 200"));
    base.statistics.reset();
    CHECK_THROWS_WITH(extend_model(base, trace, ExtendOptions{}),
                      Catch::Contains("no phase statistics"));
}
