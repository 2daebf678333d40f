// phasescale predict: the phase and hidden activations of every sample of a trace, as CSV (the
// layout of the AI4DL golden files) and/or as one timeline line per execution; given the phases
// the training programs logged, how well the inferred phases agree with them.

#include "command.hpp"

#include <phasescale/model/model.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/sim/agreement.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phasescale::cli {
namespace {

struct PredictArgs {
    std::string model;
    std::string trace;
    std::string id_column = "pod.id";
    std::string out;
    bool timeline = false;
    std::vector<std::string> true_phases;  // one <execution id>.phases.csv per execution
};

void write_csv(std::FILE* out, const std::string& id_column, const model::Trace& trace,
               const std::vector<model::ExecutionPhases>& results, int n_hid) {
    std::fprintf(out, "%s,timestamp,index,phase", csv_field(id_column).c_str());
    for (int j = 0; j < n_hid; ++j) std::fprintf(out, ",h%d", j);
    std::fputc('\n', out);

    for (std::size_t e = 0; e < trace.executions.size(); ++e) {
        const model::Execution& execution = trace.executions[e];
        const model::ExecutionPhases& result = results[e];
        std::string id = csv_field(execution.id);
        for (std::size_t i = 0; i < execution.timestamps.size(); ++i) {
            std::string timestamp = format_number(execution.timestamps[i]);
            std::fprintf(out, "%s,%s,%zu,", id.c_str(), timestamp.c_str(), i);
            int phase = result.phases[i];
            if (phase < 0) {
                // No history yet: phase and activations stay empty, as in the golden files.
                for (int j = 0; j < n_hid; ++j) std::fputc(',', out);
            } else {
                std::fprintf(out, "%d", phase);
                // %.9g: the precision of the golden files, ample for activations in [0, 1].
                for (int j = 0; j < n_hid; ++j) std::fprintf(out, ",%.9g", result.hidden(i, j));
            }
            std::fputc('\n', out);
        }
    }
}

// One character per phase: 0-9, then a-z; '+' beyond 36 phases, '.' for no phase.
char phase_symbol(int phase) {
    if (phase < 0) return '.';
    if (phase < 10) return static_cast<char>('0' + phase);
    if (phase < 36) return static_cast<char>('a' + phase - 10);
    return '+';
}

// ANSI background colours, black text: twelve phases before the colours repeat.
constexpr int kBackgrounds[] = {41, 42, 43, 44, 45, 46, 101, 102, 103, 104, 105, 106};

void print_timeline(std::FILE* out, const model::Trace& trace,
                    const std::vector<model::ExecutionPhases>& results, int phases, bool colour) {
    std::fprintf(out,
                 "phase timeline, one character per sample (phases 0-%c; '.': history not yet "
                 "full)\n",
                 phase_symbol(phases - 1));
    std::size_t id_width = 0;
    for (const auto& execution : trace.executions)
        id_width = std::max(id_width, execution.id.size());

    for (std::size_t e = 0; e < trace.executions.size(); ++e) {
        const model::Execution& execution = trace.executions[e];
        std::fprintf(out, "%-*s %6zu samples  ", static_cast<int>(id_width), execution.id.c_str(),
                     execution.timestamps.size());
        int shown = -1;  // the phase whose colour is in effect; -1: none
        for (int phase : results[e].phases) {
            if (colour && phase != shown) {
                if (phase < 0) {
                    std::fputs("\033[0m", out);
                } else {
                    std::fprintf(out, "\033[30;%dm", kBackgrounds[phase % std::size(kBackgrounds)]);
                }
                shown = phase;
            }
            std::fputc(phase_symbol(phase), out);
        }
        if (colour && shown >= 0) std::fputs("\033[0m", out);
        std::fputc('\n', out);
    }
}

constexpr std::string_view kPhasesSuffix = ".phases.csv";

std::string some_ids(const model::Trace& trace) {
    constexpr std::size_t kShown = 5;
    std::string ids;
    for (std::size_t e = 0; e < trace.executions.size() && e < kShown; ++e) {
        ids += (e == 0 ? "" : ", ") + trace.executions[e].id;
    }
    return trace.executions.size() > kShown ? ids + ", ..." : ids;
}

// The true phases of each execution (by index), from files named <execution id>.phases.csv.
std::vector<std::optional<sim::PhaseLog>> read_true_phases(const std::vector<std::string>& paths,
                                                           const model::Trace& trace) {
    std::map<std::string, std::size_t> index;
    for (std::size_t e = 0; e < trace.executions.size(); ++e) {
        index.emplace(trace.executions[e].id, e);
    }
    std::vector<std::optional<sim::PhaseLog>> logs(trace.executions.size());
    for (const std::string& path : paths) {
        std::string name = std::filesystem::path(path).filename().string();
        if (!name.ends_with(kPhasesSuffix) || name.size() == kPhasesSuffix.size()) {
            throw UsageError("--true-phases " + path + ": name it <execution id>" +
                             std::string(kPhasesSuffix) + " to say which execution it belongs to");
        }
        std::string id = name.substr(0, name.size() - kPhasesSuffix.size());
        auto found = index.find(id);
        if (found == index.end()) {
            throw UsageError("--true-phases " + path + ": the trace has no execution \"" + id +
                             "\" (its executions: " + some_ids(trace) + ")");
        }
        if (logs[found->second]) {
            throw UsageError("--true-phases: more than one file for execution \"" + id + "\"");
        }
        logs[found->second] = sim::read_phase_log(path);
    }
    return logs;
}

// Inferred (raw) against true phases over some samples; `id` names them.
struct Agreement {
    std::string id;
    std::size_t samples = 0, compared = 0;
    double ami = 0;
    std::size_t inferred_changes = 0, true_changes = 0;
    double seconds = 0;  // time the samples cover, for changes per hour
};

Agreement agree(std::string id, const std::vector<int>& inferred, const std::vector<int>& truth,
                double seconds) {
    Agreement a{.id = std::move(id), .samples = inferred.size()};
    for (std::size_t i = 0; i < inferred.size(); ++i)
        a.compared += inferred[i] >= 0 && truth[i] >= 0;
    a.ami = sim::adjusted_mutual_information(inferred, truth);
    a.inferred_changes = sim::label_changes(inferred);
    a.true_changes = sim::label_changes(truth);
    a.seconds = seconds;
    return a;
}

// One row per execution with true phases, then all of them pooled: the same phase number (and
// the same logged phase name) means the same phase in every execution.
std::vector<Agreement> agreements(const model::Trace& trace,
                                  const std::vector<model::ExecutionPhases>& results,
                                  const std::vector<std::optional<sim::PhaseLog>>& logs) {
    sim::PhaseIds ids;
    std::vector<Agreement> rows;
    std::vector<int> all_inferred, all_truth;
    double all_seconds = 0;
    for (std::size_t e = 0; e < trace.executions.size(); ++e) {
        if (!logs[e]) continue;
        const model::Execution& execution = trace.executions[e];
        std::vector<int> truth = sim::label_samples(*logs[e], execution.timestamps, ids);
        const std::vector<int>& inferred = results[e].phases;
        double seconds = sim::covered_seconds(execution.timestamps);
        rows.push_back(agree(execution.id, inferred, truth, seconds));
        all_inferred.insert(all_inferred.end(), inferred.begin(), inferred.end());
        all_truth.insert(all_truth.end(), truth.begin(), truth.end());
        all_seconds += seconds;
    }
    Agreement overall = agree("overall", all_inferred, all_truth, all_seconds);
    // Pooling would count a change at each boundary between executions: sum theirs instead.
    overall.inferred_changes = overall.true_changes = 0;
    for (const Agreement& row : rows) {
        overall.inferred_changes += row.inferred_changes;
        overall.true_changes += row.true_changes;
    }
    rows.push_back(overall);
    return rows;
}

double per_hour(std::size_t changes, double seconds) {
    return seconds > 0 ? static_cast<double>(changes) * 3600 / seconds : std::nan("");
}

void print_agreement(std::FILE* out, const std::vector<Agreement>& rows) {
    std::fprintf(out,
                 "agreement with the true phases: AMI of the raw inferred phase (1: the same "
                 "partition, 0: chance), phase changes per hour of sampled time\n");
    int width = static_cast<int>(std::string_view("execution").size());
    for (const Agreement& row : rows) width = std::max(width, static_cast<int>(row.id.size()));
    std::fprintf(out, "%-*s %8s %8s %8s %19s %15s\n", width, "execution", "samples", "compared",
                 "AMI raw", "inferred changes/h", "true changes/h");
    for (const Agreement& row : rows) {
        std::fprintf(out, "%-*s %8zu %8zu %8.3f %19.1f %15.1f\n", width, row.id.c_str(),
                     row.samples, row.compared, row.ami,
                     per_hour(row.inferred_changes, row.seconds),
                     per_hour(row.true_changes, row.seconds));
    }
}

int run_predict(const PredictArgs& args) {
    if (args.out.empty() && !args.timeline && args.true_phases.empty()) {
        throw UsageError(
            "predict needs --out FILE (or - for stdout), --timeline, --true-phases, or "
            "some of them");
    }
    if (args.out == "-" && args.timeline) {
        throw UsageError("--timeline and --out - would both write to stdout; give --out a file");
    }
    if (args.out == "-" && !args.true_phases.empty()) {
        throw UsageError("--true-phases and --out - would both write to stdout; give --out a file");
    }

    model::PhaseModel phase_model = model::resolve_model(args.model);
    model::Trace trace = model::read_trace(
        {args.trace},
        model::TraceOptions{.id_column = args.id_column, .columns = phase_model.features});
    // Before any output: a file that matches no execution leaves nothing written.
    std::vector<std::optional<sim::PhaseLog>> logs = read_true_phases(args.true_phases, trace);

    std::vector<model::ExecutionPhases> results;
    results.reserve(trace.executions.size());
    for (const model::Execution& execution : trace.executions) {
        results.push_back(model::predict_phases(
            phase_model, model::model_features(phase_model, trace, execution)));
    }

    if (!args.out.empty()) {
        OutputFile out(args.out);
        write_csv(out.stream(), args.id_column, trace, results, phase_model.crbm.n_hid);
        out.commit();
    }
    if (args.timeline) {
        print_timeline(stdout, trace, results, phase_model.phases(), use_colour(stdout));
    }
    if (!args.true_phases.empty()) print_agreement(stdout, agreements(trace, results, logs));
    return 0;
}

}  // namespace

Command add_predict_command(CLI::App& parent) {
    auto args = std::make_shared<PredictArgs>();
    CLI::App* app = parent.add_subcommand(
        "predict",
        "Find the phase of every sample of a trace: CSV rows id,timestamp,index,phase,h0.. (empty "
        "until the history is full) and/or a timeline per execution");

    app->add_option("--model", args->model,
                    "Model file (phasescale or AI4DL JSON), or 'default' for the built-in model")
        ->required()
        ->type_name("MODEL.json");
    app->add_option("--trace", args->trace, "Trace CSV file")->required()->type_name("FILE");
    app->add_option("--id-column", args->id_column, "Column that names the execution of each row");
    app->add_option("--out", args->out, "Where to write the phases CSV; - for stdout")
        ->type_name("PHASES.csv");
    app->add_flag("--timeline", args->timeline,
                  "Print each execution's phases as one line of characters to stdout");
    app->add_option(
           "--true-phases", args->true_phases,
           "The phases each training program logged (unix_time,phase,epoch rows), one "
           "file per execution, named <execution id>.phases.csv: prints to stdout how well "
           "the raw inferred phases agree with them (AMI) and both phases' changes per "
           "hour")
        ->delimiter(',')
        ->type_name("FILE[,FILE...]")
        ->default_str("");

    return {app, [args] { return run_predict(*args); }};
}

}  // namespace phasescale::cli
