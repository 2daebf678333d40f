// phasescale name-phases: lists a model's phase names, and renames phases (--set N=NAME) or names
// them afresh from their statistics (--derive). The names are label values: the operator's
// phasescale.io/phase label shows them (docs/model.md, "Phase names").

#include "command.hpp"

#include <phasescale/model/model.hpp>
#include <phasescale/model/phase_names.hpp>
#include <phasescale/model/pretrained.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace phasescale::cli {
namespace {

struct NamePhasesArgs {
    std::string model;
    std::vector<std::string> set;  // N=NAME
    bool derive = false;
    std::string out;
};

// "3=data-load" into the model's names; UsageError for a bad index or name.
void apply_rename(model::PhaseModel& m, const std::string& assignment) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos)
        throw UsageError("--set " + assignment + ": write PHASE=NAME, e.g. --set 3=data-load");
    const std::string index = assignment.substr(0, equals), name = assignment.substr(equals + 1);
    std::size_t used = 0;
    int phase = -1;
    try {
        phase = std::stoi(index, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != index.size() || used == 0 || phase < 0 || phase >= m.phases())
        throw UsageError("--set " + assignment + ": '" + index +
                         "' is not a phase of this model (0 to " + std::to_string(m.phases() - 1) +
                         ")");
    if (const std::string problem = model::phase_name_problem(name); !problem.empty())
        throw UsageError("--set " + assignment + ": " + problem +
                         " (a phase name is a Kubernetes label value: at most 63 lowercase "
                         "letters, digits and '-', a letter or digit at each end)");
    m.phase_names[static_cast<std::size_t>(phase)] = name;
}

void check_unique(const model::PhaseModel& m) {
    for (std::size_t i = 0; i < m.phase_names.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (m.phase_names[i] == m.phase_names[j])
                throw UsageError("phases " + std::to_string(j) + " and " + std::to_string(i) +
                                 " would both be named \"" + m.phase_names[i] +
                                 "\": a model's phase names must differ");
}

// Each phase's name and, when the model has them, its median CPU and memory.
void print_names(const model::PhaseModel& m) {
    const model::PhaseStatistics* s = m.statistics ? &*m.statistics : nullptr;
    const auto column = [s](const char* name) -> int {
        if (s == nullptr) return -1;
        for (std::size_t c = 0; c < s->usage_columns.size(); ++c)
            if (s->usage_columns[c] == name) return static_cast<int>(c);
        return -1;
    };
    const int cpu = column("cpu.usage.cores"), memory = column("mem.working.set");
    std::printf("%-5s %-32s %10s %14s\n", "phase", "name", "CPU p50", "memory p50");
    for (int p = 0; p < m.phases(); ++p) {
        std::string cpu_text = "-", memory_text = "-";
        if (s != nullptr && static_cast<std::size_t>(p) < s->phases.size()) {
            const model::PhaseStats& ps = s->phases[static_cast<std::size_t>(p)];
            char buffer[32];
            if (cpu >= 0) {
                std::snprintf(buffer, sizeof buffer, "%.3f", ps.usage[cpu].p50);
                cpu_text = buffer;
            }
            if (memory >= 0) {
                std::snprintf(buffer, sizeof buffer, "%.0f MiB",
                              ps.usage[memory].p50 / (1024.0 * 1024.0));
                memory_text = buffer;
            }
        }
        std::printf("%-5d %-32s %10s %14s\n", p, m.phase_name(p).c_str(), cpu_text.c_str(),
                    memory_text.c_str());
    }
}

int run_name_phases(const NamePhasesArgs& args) {
    model::PhaseModel m = model::resolve_model(args.model);
    const bool changing = args.derive || !args.set.empty();
    std::string out = args.out.empty() ? args.model : args.out;
    if (changing && args.out.empty() && args.model == model::kDefaultModelName)
        throw UsageError("the built-in default model cannot be changed: give --out FILE");
    if (!changing && !args.out.empty())
        throw UsageError("--out writes a renamed model: give --set or --derive too");

    if (args.derive) m.phase_names = model::derive_phase_names(m);
    for (const std::string& assignment : args.set) apply_rename(m, assignment);
    check_unique(m);
    if (changing) model::save_model(m, out);
    print_names(m);
    if (changing) std::printf("wrote %s\n", out.c_str());
    return 0;
}

}  // namespace

Command add_name_phases_command(CLI::App& parent) {
    auto args = std::make_shared<NamePhasesArgs>();
    CLI::App* app = parent.add_subcommand(
        "name-phases",
        "List a model's phase names (the operator's phasescale.io/phase label shows them), "
        "rename phases, or name them afresh from their statistics");
    app->add_option("model", args->model,
                    "Model file (phasescale or AI4DL JSON), or 'default' for the built-in model")
        ->required()
        ->type_name("MODEL.json");
    app->add_option("--set", args->set,
                    "Rename a phase, e.g. --set 3=data-load (repeatable): at most 63 lowercase "
                    "letters, digits and '-', unique in the model")
        ->type_name("PHASE=NAME")
        ->default_str("");
    app->add_flag("--derive", args->derive,
                  "Name every phase from its statistics (cpu-LEVEL-mem-LEVEL), replacing the "
                  "names it has; --set applies after");
    app->add_option("--out", args->out,
                    "Where to write the renamed model (default: over MODEL itself)")
        ->type_name("MODEL.json");
    app->footer(
        "Names are derived when a model is trained: each phase's median CPU and memory against the "
        "model's other phases (low, mid, high in thirds of a log scale; idle below 0.05 cores). "
        "docs/model.md describes them.");
    return {app, [args] { return run_name_phases(*args); }};
}

}  // namespace phasescale::cli
