// phasescale predict: the phase and hidden activations of every sample of a trace, as CSV (the
// layout of the AI4DL golden files) and/or as one timeline line per execution.

#include "command.hpp"

#include <phasescale/model/model.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/trace.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>

namespace phasescale::cli {
namespace {

struct PredictArgs {
  std::string model;
  std::string trace;
  std::string id_column = "pod.id";
  std::string out;
  bool timeline = false;
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
  for (const auto& execution : trace.executions) id_width = std::max(id_width, execution.id.size());

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

int run_predict(const PredictArgs& args) {
  if (args.out.empty() && !args.timeline) {
    throw UsageError("predict needs --out FILE (or - for stdout), --timeline, or both");
  }
  if (args.out == "-" && args.timeline) {
    throw UsageError("--timeline and --out - would both write to stdout; give --out a file");
  }

  model::PhaseModel phase_model = model::resolve_model(args.model);
  model::Trace trace = model::read_trace(
      {args.trace},
      model::TraceOptions{.id_column = args.id_column, .columns = phase_model.features});

  std::vector<model::ExecutionPhases> results;
  results.reserve(trace.executions.size());
  for (const model::Execution& execution : trace.executions) {
    results.push_back(
        model::predict_phases(phase_model, model::model_features(phase_model, trace, execution)));
  }

  if (!args.out.empty()) {
    OutputFile out(args.out);
    write_csv(out.stream(), args.id_column, trace, results, phase_model.crbm.n_hid);
    out.commit();
  }
  if (args.timeline) {
    print_timeline(stdout, trace, results, phase_model.phases(), use_colour(stdout));
  }
  return 0;
}

}  // namespace

Command add_predict_command(CLI::App& parent) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* app = parent.add_subcommand(
      "predict",
      "Find the phase of every sample of a trace: CSV rows id,timestamp,index,phase,h0.. (empty "
      "until the history is full) and/or a timeline per execution");

  app->add_option("--model", args->model, "Model file (phasescale or AI4DL JSON), or 'default' for the built-in model")
      ->required()
      ->type_name("MODEL.json");
  app->add_option("--trace", args->trace, "Trace CSV file")->required()->type_name("FILE");
  app->add_option("--id-column", args->id_column, "Column that names the execution of each row");
  app->add_option("--out", args->out, "Where to write the phases CSV; - for stdout")
      ->type_name("PHASES.csv");
  app->add_flag("--timeline", args->timeline,
                "Print each execution's phases as one line of characters to stdout");

  return {app, [args] { return run_predict(*args); }};
}

}  // namespace phasescale::cli
