// phasescale simulate: replays traces through the provisioning policies and scores them.

#include "command.hpp"

#include <phasescale/model/error.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/train.hpp>
#include <phasescale/sim/experiment.hpp>
#include <phasescale/sim/report.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace phasescale::cli {
namespace {

struct SimulateArgs {
  std::vector<std::string> traces;
  std::string model;  // empty: train per fold when splitting, else the default model
  std::vector<std::string> policies = {"all"};
  std::string json_out, html_out;
  std::string id_column = "pod.id";
  model::TrainOptions training;
  sim::ExperimentOptions experiment;
};

std::vector<std::string> policies_from(const std::vector<std::string>& asked) {
  if (asked.size() == 1 && asked[0] == "all") return sim::kPolicies;
  for (const std::string& p : asked) {
    if (std::find(sim::kPolicies.begin(), sim::kPolicies.end(), p) == sim::kPolicies.end()) {
      throw UsageError("--policy: unknown policy '" + p + "' (known: all, static, vpa, vpa-warm, window, phase, oracle, perfect)");
    }
  }
  return asked;
}

void add_unique(std::vector<std::string>& columns, const std::vector<std::string>& more) {
  for (const std::string& c : more)
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
}

model::Trace subset(const model::Trace& trace, const std::vector<std::size_t>& executions) {
  model::Trace part;
  part.columns = trace.columns;
  for (std::size_t i : executions) part.executions.push_back(trace.executions[i]);
  return part;
}

std::string percent(double x) {
  if (!std::isfinite(x)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * x);
  return text;
}

void print_table(const sim::Report& r) {
  std::printf("%-9s %12s %9s %8s %12s %9s %8s %5s %8s %8s\n", "policy", "cpu core-h", "fulfil", "vs vpa",
              "memory GiB-h", "fulfil", "vs vpa", "ooms", "resizes", "unknown");
  for (const std::string& name : r.policies) {
    const sim::Score& s = r.results.at(name).score;
    std::printf("%-9s %12.2f %9s %8s %12.2f %9s %8s %5zu %8zu %8zu\n", name.c_str(), s.cpu.allocated / 3600,
                percent(s.cpu.fulfilment()).c_str(), percent(r.reduction(name, "vpa", "cpu")).c_str(),
                s.memory.allocated / 3600 / (1024.0 * 1024 * 1024), percent(s.memory.fulfilment()).c_str(),
                percent(r.reduction(name, "vpa", "memory")).c_str(), s.oom_events, s.resizes,
                s.unknown_phase_samples);
  }
  std::size_t held_out = r.containers.size();
  std::printf("%zu held-out executions in %zu fold(s)%s; allocations integrate requests over time\n", held_out,
              r.folds.size(), r.split ? "" : " (no split: scored on the executions it calibrates on)");
}

int run_simulate(SimulateArgs& a) {
  sim::ExperimentOptions& o = a.experiment;
  o.policies = policies_from(a.policies);
  check_training_columns(a.training);
  // The phase policy reads the model's statistics of the usage columns scored here.
  o.settings.phase.cpu_column = o.columns.cpu;
  o.settings.phase.memory_column = o.columns.memory;
  add_unique(a.training.usage_columns, {o.columns.cpu, o.columns.memory});
  const bool split = o.train_fraction > 0 || o.folds > 0;
  const bool train_per_fold = a.model.empty() && split;

  std::shared_ptr<const model::PhaseModel> fixed;
  if (!train_per_fold) fixed = std::make_shared<const model::PhaseModel>(model::resolve_model(a.model.empty() ? "default" : a.model));

  std::vector<std::string> columns = {o.columns.cpu, o.columns.memory, o.columns.static_cpu, o.columns.static_memory};
  if (fixed) {
    add_unique(columns, fixed->features);
  } else {
    add_unique(columns, a.training.features);
    add_unique(columns, a.training.usage_columns);
  }
  const model::Trace trace = model::read_trace(a.traces, model::TraceOptions{.id_column = a.id_column, .columns = columns});
  a.training.parameters.traces = a.traces;
  a.training.parameters.id_column = a.id_column;

  const sim::ModelSource source = [&](const std::vector<std::size_t>& training) {
    if (fixed) return fixed;
    return std::make_shared<const model::PhaseModel>(model::train_model(subset(trace, training), a.training));
  };
  const sim::Report report = sim::run_experiment(trace, source, o);
  print_table(report);

  OutputFile json(a.json_out);
  const std::string text = sim::report_json(report).dump(1) + "\n";
  std::fwrite(text.data(), 1, text.size(), json.stream());
  json.commit();
  if (!a.html_out.empty()) {
    OutputFile html(a.html_out);
    const std::string page = sim::report_html(report);
    std::fwrite(page.data(), 1, page.size(), html.stream());
    html.commit();
  }
  return 0;
}

}  // namespace

Command add_simulate_command(CLI::App& parent) {
  auto a = std::make_shared<SimulateArgs>();
  sim::ExperimentOptions& o = a->experiment;
  sim::PolicySettings& s = o.settings;
  CLI::App* app = parent.add_subcommand(
      "simulate",
      "Replay traces through provisioning policies (static, vpa, vpa-warm, window, phase, oracle, "
      "perfect) causally, calibrate each to a target fulfilment, and score what each allocates");
  app->add_option("--trace", a->traces, "Trace CSV file(s), comma-separated")->required()->delimiter(',')->type_name("FILE[,FILE...]")->default_str("");
  app->add_option("--json", a->json_out, "Where to write the JSON report")->required()->type_name("REPORT.json");
  app->add_option("--html", a->html_out, "Where to write the HTML report (optional)")->type_name("REPORT.html");
  app->add_option("--model", a->model,
                  "Phase model file, or 'default' (the built-in model). Without it: the default model, or with "
                  "--train-fraction/--folds a model trained on each fold's training executions")
      ->type_name("MODEL.json");
  app->add_option("--policy", a->policies, "Policies to score: all, or a comma-separated list")->delimiter(',')->type_name("all|NAME[,NAME...]");
  app->add_option("--target-fulfilment", o.target_fulfilment,
                  "Calibrate each policy's safety margins to reach this fulfilment on the training executions "
                  "(0: no calibration, default margins)")
      ->check(CLI::Range(0.0, 0.999999));
  app->add_option("--train-fraction", o.train_fraction, "Hold out executions: this share trains, the rest is scored")
      ->check(CLI::Range(0.0, 0.999999));
  app->add_option("--folds", o.folds, "Hold out executions by K-fold cross-validation")->check(CLI::NonNegativeNumber);
  app->add_option("--split-seed", o.seed, "Seed of the split of executions into training and held-out ones");
  app->add_option("--id-column", a->id_column, "Column that names the execution of each row");
  app->add_option("--cpu-column", o.columns.cpu, "CPU usage column (cores)");
  app->add_option("--mem-column", o.columns.memory, "Memory usage column (bytes)");
  app->add_option("--static-cpu-column", o.columns.static_cpu, "CPU allocation the trace ran with (cores)");
  app->add_option("--static-mem-column", o.columns.static_memory, "Memory allocation the trace ran with (bytes)");
  app->add_option("--delay", s.actuation.delay, "Actuation delay in samples for causal policies")->check(CLI::PositiveNumber);
  app->add_option("--min-change", s.actuation.min_change, "Smallest relative request change worth a resize")->check(CLI::NonNegativeNumber);
  app->add_option("--vpa-half-life", s.vpa.cpu_half_life_s, "VPA histogram half-life, seconds (upstream 24 h)")->check(CLI::PositiveNumber)
      ->each([&s](const std::string&) { s.vpa.memory_half_life_s = s.vpa.cpu_half_life_s; });
  app->add_option("--vpa-interval", s.vpa.memory_interval_s, "VPA memory peak aggregation interval, seconds (upstream 24 h)")->check(CLI::PositiveNumber);
  app->add_option("--window", s.window.samples, "Samples the window policy looks back on")->check(CLI::PositiveNumber);
  app->add_option("--window-quantile", s.window.quantile, "Quantile of the window (1: its maximum)")->check(CLI::Range(0.0, 1.0));
  app->add_option("--cpu-quantile", s.phase.cpu_quantile, "Phase statistic for CPU: 0.5, 0.9, 0.95, 0.99 or 1");
  app->add_option("--mem-quantile", s.phase.memory_quantile, "Phase statistic for memory: 0.5, 0.9, 0.95, 0.99 or 1");
  app->add_option("--debounce", s.phase.debounce, "Samples a new phase must last before the phase policy follows it")->check(CLI::PositiveNumber);
  app->add_option("--adapt", s.phase.adapt_samples, "Phase policy: after this many samples of a container in a phase, use its own usage quantile there (0: only the model's statistics)")->check(CLI::NonNegativeNumber);
  app->add_option("--cpu-headroom", s.phase.headroom.cpu, "Phase policy: CPU never below the latest usage times (1 + headroom)")->check(CLI::NonNegativeNumber);
  app->add_option("--mem-headroom", s.phase.headroom.memory, "Phase policy: memory never below the latest usage times (1 + headroom)")->check(CLI::NonNegativeNumber);
  app->add_flag("--proactive", s.phase.proactive, "Phase policy: provision for the likely next phase once a visit runs long");
  add_training_options(app->add_option_group("Model training", "With --train-fraction or --folds and no --model: how each fold's model is trained"), a->training);
  return {app, [a] { return run_simulate(*a); }};
}

}  // namespace phasescale::cli
