// A read-only helper of e2e.sh: the per-sample requests that `phasescale simulate --policy phase`
// replays, which its JSON report only integrates. It runs the same code as cli/simulate.cpp with
// no split, the default model and no calibration (--target-fulfilment 0): sim::make_container,
// sim::PolicyFactory::make("phase") and sim::replay, with the given safety margins.
// Usage: sim_allocations TRACE.csv CPU_MARGIN MEMORY_MARGIN
// stdout: id,index,timestamp,cpu,memory (the requests in force at each sample), then one
// "#total,id,cpu_allocated,memory_allocated,resizes" line per execution (the numbers that
// `phasescale simulate` reports per container, for a cross-check).
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/sim/experiment.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  using namespace phasescale;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s TRACE.csv CPU_MARGIN MEMORY_MARGIN\n", argv[0]);
    return 2;
  }
  try {
    sim::ExperimentOptions o;
    o.settings.phase.cpu_column = o.columns.cpu;
    o.settings.phase.memory_column = o.columns.memory;
    const policy::Margins margins{std::stod(argv[2]), std::stod(argv[3])};
    const model::PhaseModel m = model::resolve_model("default");
    std::vector<std::string> columns = {o.columns.cpu, o.columns.memory, o.columns.static_cpu, o.columns.static_memory};
    for (const std::string& f : m.features)
      if (std::find(columns.begin(), columns.end(), f) == columns.end()) columns.push_back(f);
    const model::Trace trace = model::read_trace({argv[1]}, model::TraceOptions{.columns = columns});
    const sim::PolicyFactory factory(m, o.settings);
    std::printf("id,index,timestamp,cpu,memory\n");
    std::string totals;
    for (const model::Execution& e : trace.executions) {
      const sim::Container c = sim::make_container(trace, e, m, o.columns);
      auto recommender = factory.make("phase", c, {}, margins);
      const sim::Replay r = sim::replay(c, *recommender, sim::is_causal("phase"), o.settings.actuation);
      for (std::size_t i = 0; i < r.allocations.size(); ++i)
        std::printf("%s,%zu,%.3f,%.10g,%.10g\n", c.id.c_str(), i, c.timestamps[i], r.allocations[i].request.cpu,
                    r.allocations[i].request.memory);
      char line[256];
      std::snprintf(line, sizeof line, "#total,%s,%.9g,%.9g,%zu\n", c.id.c_str(), r.score.cpu.allocated,
                    r.score.memory.allocated, r.score.resizes);
      totals += line;
    }
    std::fputs(totals.c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_allocations: %s\n", e.what());
    return 1;
  }
}
