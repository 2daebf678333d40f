// How often a pod's phasescale.io/phase label changes with the default model, by the label's hold
// (phasescale-operator --phase-label-hold): replays traces through the operator's own tracker
// (control::ContainerTracker with the default PhaseAutoscaler spec), one sample per tick, and
// prints per hold the stable phase's and the label's changes per hour of trace.
//   label_hold TRACE.csv[,TRACE.csv...] [TICK_SECONDS [HOLD_SECONDS...]]
// Rows closer than a tick to the last one kept are dropped, as the operator reads once a tick.
#include <phasescale/control/spec.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/trace.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace phasescale;

namespace {

struct Counts {
    double hours = 0;
    std::size_t stable_changes = 0, label_changes = 0;
};

void replay(const model::Trace& trace, const model::Execution& e,
            const std::shared_ptr<const model::PhaseModel>& m, double tick, double hold,
            Counts& counts) {
    control::ContainerTracker tracker(m, control::AutoscalerSpec{}, hold);
    std::vector<std::size_t> columns;
    for (const auto& f : m->features) columns.push_back(trace.column_index(f));
    const std::size_t cpu = trace.column_index("cpu.usage.cores"),
                      memory = trace.column_index("mem.working.set");
    std::optional<int> stable, shown;
    double last = -1e300;
    for (Eigen::Index r = 0; r < e.values.rows(); ++r) {
        const double t = e.timestamps[static_cast<std::size_t>(r)];
        if (t - last < tick) continue;
        last = t;
        control::TrackerInput in;
        in.timestamp = t;
        for (std::size_t c : columns) in.features.push_back(e.values(r, c));
        in.usage = {e.values(r, cpu), e.values(r, memory)};
        in.allocated = {4, 16e9};
        tracker.step(in);
        if (stable && tracker.phase() != stable) ++counts.stable_changes;
        if (shown && tracker.shown().phase() != shown) ++counts.label_changes;
        stable = tracker.phase();
        shown = tracker.shown().phase();
    }
    if (e.timestamps.size() > 1)
        counts.hours += (e.timestamps.back() - e.timestamps.front()) / 3600;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: label_hold TRACE.csv[,...] [TICK_SECONDS [HOLD_SECONDS...]]\n");
        return 2;
    }
    std::vector<std::string> paths;
    std::stringstream list(argv[1]);
    for (std::string p; std::getline(list, p, ',');) paths.push_back(p);
    const double tick = argc > 2 ? std::atof(argv[2]) : 15;
    std::vector<double> holds;
    for (int i = 3; i < argc; ++i) holds.push_back(std::atof(argv[i]));
    if (holds.empty()) holds = {0, 30, 60, 120, 300};

    const auto m =
        std::make_shared<const model::PhaseModel>(model::resolve_model(model::kDefaultModelName));
    std::vector<std::string> columns = m->features;
    for (const char* c : {"cpu.usage.cores", "mem.working.set"})
        if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    const model::Trace trace = model::read_trace(paths, {.columns = columns});

    std::printf(
        "tick %.0f s, %zu executions\n| hold (s) | stable phase changes/h | label changes/h "
        "|\n|---:|---:|---:|\n",
        tick, trace.executions.size());
    for (double hold : holds) {
        Counts counts;
        for (const auto& e : trace.executions) replay(trace, e, m, tick, hold, counts);
        std::printf("| %.0f | %.1f | %.1f |\n", hold, counts.stable_changes / counts.hours,
                    counts.label_changes / counts.hours);
    }
    return 0;
}
