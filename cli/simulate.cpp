// phasescale simulate: replays traces through the provisioning policies and scores them.

#include "command.hpp"

#include <phasescale/control/decision.hpp>
#include <phasescale/control/quantity.hpp>
#include <phasescale/control/spec.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/model/error.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/train.hpp>
#include <phasescale/sim/experiment.hpp>
#include <phasescale/sim/report.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace phasescale::cli {
namespace {

struct SimulateArgs {
    std::vector<std::string> traces;
    std::string model;  // empty: train per fold when splitting, else the default model
    std::vector<std::string> policies = {"all"};
    std::string json_out, html_out, allocations_out;
    std::string id_column = "pod.id";
    std::string autoscaler;               // a PhaseAutoscaler YAML file; empty: the CRD's defaults
    std::vector<std::string> train_also;  // traces every fold's model also trains on, never scored
    std::string static_cpu, static_memory;  // quantities
    std::string memory_min_headroom;        // a quantity; empty: the autoscaler's
    std::string tick;                       // a duration; empty: every sample
    std::string rate_window;                // a duration; empty: 4 ticks
    model::TrainOptions training;
    sim::ExperimentOptions experiment;
};

std::vector<std::string> policies_from(const std::vector<std::string>& asked) {
    if (asked.size() == 1 && asked[0] == "all") return sim::kPolicies;
    for (const std::string& p : asked) {
        if (std::find(sim::kPolicies.begin(), sim::kPolicies.end(), p) == sim::kPolicies.end()) {
            std::string known = "all";
            for (const std::string& k : sim::kPolicies) known += ", " + k;
            throw UsageError("--policy: unknown policy '" + p + "' (known: " + known + ")");
        }
    }
    return asked;
}

void add_unique(std::vector<std::string>& columns, const std::vector<std::string>& more) {
    for (const std::string& c : more)
        if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
}

// The executions given, with only the columns given (in that order).
model::Trace subset(const model::Trace& trace, const std::vector<std::size_t>& executions,
                    const std::vector<std::string>& columns) {
    model::Trace part;
    part.columns = columns;
    for (std::size_t i : executions) {
        model::Execution e = trace.executions[i];
        e.values.resize(e.values.rows(), static_cast<Eigen::Index>(columns.size()));
        for (std::size_t c = 0; c < columns.size(); ++c)
            e.values.col(static_cast<Eigen::Index>(c)) = trace.executions[i].values.col(
                static_cast<Eigen::Index>(trace.column_index(columns[c])));
        part.executions.push_back(std::move(e));
    }
    return part;
}

std::string percent(double x) {
    if (!std::isfinite(x)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100 * x);
    return text;
}

void print_table(const sim::Report& r) {
    std::printf("%-14s %11s %7s %7s %8s %11s %7s %5s %6s %8s %8s\n", "policy", "cpu core-h",
                "fulfil", "vs vpa", "throttl", "mem GiB-h", "vs vpa", "ooms", "jobs", "resize/h",
                "unknown");
    for (const std::string& name : r.policies) {
        const sim::Score& s = r.results.at(name).score;
        std::printf("%-14s %11.2f %7s %7s %8s %11.2f %7s %5zu %6s %8.1f %8zu\n", name.c_str(),
                    s.cpu.allocated / 3600, percent(s.cpu.fulfilment()).c_str(),
                    percent(r.reduction(name, "vpa", "cpu")).c_str(),
                    percent(s.cpu.over_limit_share()).c_str(),
                    s.memory.allocated / 3600 / (1024.0 * 1024 * 1024),
                    percent(r.reduction(name, "vpa", "memory")).c_str(), s.oom_kills,
                    percent(s.jobs_oom_killed_share()).c_str(), s.resizes_per_pod_hour(),
                    s.unknown_phase_samples);
    }
    std::size_t held_out = r.containers.size();
    std::printf(
        "%zu held-out executions in %zu fold(s)%s; allocations integrate requests over time; ooms: "
        "OOM "
        "kills (memory over the limit), jobs: share of executions with one\n",
        held_out, r.folds.size(),
        r.split || r.options.target_fulfilment <= 0
            ? ""
            : " (no split: scored on the executions it calibrates on)");
    for (const std::string& note : r.notes) std::printf("note: %s\n", note.c_str());
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw model::InputError(path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The PhaseAutoscaler the replay runs as: the file's, else the CRD's defaults.
control::AutoscalerSpec autoscaler_spec(const std::string& path) {
    if (path.empty()) return {};
    const control::ParsedSpec parsed = control::parse_spec_yaml(read_text(path), path);
    if (!parsed.ok()) throw model::InputError("--autoscaler " + path + ": " + parsed.message());
    return parsed.spec;
}

// The autoscaler's settings, where no flag of the command line overrides them. The replay has
// no container names: the autoscaler's policy for "*" applies.
void apply_autoscaler(const control::AutoscalerSpec& spec, const CLI::App& app,
                      sim::PolicySettings& s) {
    const policy::PhaseOptions from_spec = control::phase_options(spec);
    policy::PhaseOptions& p = s.phase;
    auto unless_given = [&](const char* flag, auto& field, const auto& value) {
        if (app.count(flag) == 0) field = value;
    };
    unless_given("--cpu-quantile", p.cpu_quantile, from_spec.cpu_quantile);
    unless_given("--mem-quantile", p.memory_quantile, from_spec.memory_quantile);
    unless_given("--debounce", p.debounce, from_spec.debounce);
    unless_given("--cpu-target", p.cpu_target, from_spec.cpu_target);
    if (app.count("--proactive") == 0) p.proactive = from_spec.proactive;
    p.margins = from_spec.margins;
    p.memory_min_headroom = from_spec.memory_min_headroom;
    unless_given("--min-change", s.actuation.min_change, spec.min_change);
    unless_given("--cooldown", s.actuation.cooldown_s, static_cast<double>(spec.cooldown_seconds));
    s.actuation.safety_margins = control::safety_margins(spec);
    unless_given("--horizon", p.horizon_s,
                 s.actuation.cooldown_s);  // as phase_options() does for the operator
    s.actuation.bounds = control::container_bounds(spec.policy_for("*"));
}

// --mem-min-headroom, where given, over the autoscaler's.
void apply_min_headroom(const std::string& quantity, policy::PhaseOptions& p) {
    if (quantity.empty()) return;
    const auto bytes = control::parse_quantity(quantity);
    if (!bytes || !(*bytes >= 0) || *bytes > policy::kMaxMemoryBytes)
        throw UsageError("--mem-min-headroom: not a memory quantity: '" + quantity + "'");
    p.memory_min_headroom = *bytes;
}

double seconds_option(const std::string& duration, const char* option) {
    return std::chrono::duration<double>(duration_option(duration, option)).count();
}

// --tick and --rate-window, where given, in seconds (the operator's duration grammar). The
// window is by default what the operator's rates cover where Prometheus scrapes once a tick, as
// at its defaults: a scrape interval.
void apply_tick(const SimulateArgs& a, policy::ActuationOptions& actuation) {
    if (a.tick.empty()) {
        if (!a.rate_window.empty()) throw UsageError("--rate-window needs --tick");
        return;
    }
    actuation.tick_s = seconds_option(a.tick, "--tick");
    actuation.rate_window_s =
        a.rate_window.empty() ? actuation.tick_s : seconds_option(a.rate_window, "--rate-window");
}

std::optional<policy::Amount> static_allocation(const SimulateArgs& a) {
    if (a.static_cpu.empty() && a.static_memory.empty()) return std::nullopt;
    if (a.static_cpu.empty() || a.static_memory.empty())
        throw UsageError("--static-cpu and --static-memory go together");
    const auto cpu = control::parse_quantity(a.static_cpu),
               memory = control::parse_quantity(a.static_memory);
    if (!cpu || !(*cpu > 0))
        throw UsageError("--static-cpu: not a positive quantity: '" + a.static_cpu + "'");
    if (!memory || !(*memory > 0))
        throw UsageError("--static-memory: not a positive quantity: '" + a.static_memory + "'");
    return policy::Amount{*cpu, *memory};
}

// Every held-out sample's requests and limits in force, per policy: what the JSON integrates;
// and the requests the policy had last asked for (below those in force where the actuator held
// a cut back).
void write_allocations(const sim::Report& r, std::FILE* out) {
    std::fprintf(out,
                 "policy,id,index,timestamp,cpu_request,memory_request,cpu_limit,memory_limit,"
                 "usage_cpu,usage_memory,source,cpu_asked,memory_asked\n");
    for (const std::string& name : r.policies) {
        for (const sim::ContainerResult& c : r.containers) {
            const sim::Replay& replay = c.replays.at(name);
            const std::string id = csv_field(c.container.id),
                              source = csv_field(c.container.source);
            for (std::size_t i = 0; i < replay.allocations.size(); ++i) {
                const policy::Allocation& a = replay.allocations[i];
                const policy::Amount& asked = replay.asked[i];
                std::fprintf(
                    out, "%s,%s,%zu,%.3f,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%s,%.10g,%.10g\n",
                    name.c_str(), id.c_str(), i, c.container.timestamps[i], a.request.cpu,
                    a.request.memory, a.limit.cpu, a.limit.memory, c.container.usage[i].cpu,
                    c.container.usage[i].memory, source.c_str(), asked.cpu, asked.memory);
            }
        }
    }
}

// Whether every trace file has all the columns (the allocation columns are optional).
bool every_file_has(const std::vector<std::string>& files,
                    const std::vector<std::string>& columns) {
    for (const std::string& f : files) {
        const std::vector<std::string> header = model::read_header(f);
        for (const std::string& c : columns)
            if (std::find(header.begin(), header.end(), c) == header.end()) return false;
    }
    return true;
}

int run_simulate(SimulateArgs& a, const CLI::App& app) {
    sim::ExperimentOptions& o = a.experiment;
    o.policies = policies_from(a.policies);
    o.static_allocation = static_allocation(a);
    apply_autoscaler(autoscaler_spec(a.autoscaler), app, o.settings);
    apply_min_headroom(a.memory_min_headroom, o.settings.phase);
    apply_tick(a, o.settings.actuation);
    check_training_columns(a.training);
    // The phase policy reads the model's statistics of the usage columns scored here.
    o.settings.phase.cpu_column = o.columns.cpu;
    o.settings.phase.memory_column = o.columns.memory;
    add_unique(a.training.usage_columns, {o.columns.cpu, o.columns.memory});
    const bool split = o.train_fraction > 0 || o.folds > 0;
    const bool train_per_fold = a.model.empty() && split;

    std::shared_ptr<const model::PhaseModel> fixed;
    if (!train_per_fold)
        fixed = std::make_shared<const model::PhaseModel>(
            model::resolve_model(a.model.empty() ? "default" : a.model));

    std::vector<std::string> columns = {o.columns.cpu, o.columns.memory};
    const std::vector<std::string> allocation = {o.columns.static_cpu, o.columns.static_memory};
    if (every_file_has(a.traces, allocation)) add_unique(columns, allocation);
    if (fixed) {
        add_unique(columns, fixed->features);
    } else {
        add_unique(columns, a.training.features);
        add_unique(columns, a.training.usage_columns);
    }
    const model::Trace trace = model::read_trace(
        a.traces, model::TraceOptions{.id_column = a.id_column, .columns = columns});
    a.training.parameters.traces = a.traces;
    a.training.parameters.id_column = a.id_column;

    // What the models train on: the features and usage columns, also from --train-also.
    std::vector<std::string> training_columns = a.training.features;
    add_unique(training_columns, a.training.usage_columns);
    model::Trace also;
    if (!a.train_also.empty()) {
        if (!train_per_fold)
            throw UsageError("--train-also needs --folds or --train-fraction and no --model");
        also = model::read_trace(a.train_also, model::TraceOptions{.id_column = a.id_column,
                                                                   .columns = training_columns});
        a.training.parameters.traces.insert(a.training.parameters.traces.end(),
                                            a.train_also.begin(), a.train_also.end());
    }
    const sim::ModelSource source = [&](const std::vector<std::size_t>& training) {
        if (fixed) return fixed;
        model::Trace part = subset(trace, training, training_columns);
        for (const model::Execution& e : also.executions) part.executions.push_back(e);
        return std::make_shared<const model::PhaseModel>(model::train_model(part, a.training));
    };
    // Every output is opened before the (long) replay, so that a bad path fails at once and no
    // output is written when another cannot be.
    OutputFile json(a.json_out);
    std::optional<OutputFile> allocations, html;
    if (!a.allocations_out.empty()) allocations.emplace(a.allocations_out);
    if (!a.html_out.empty()) html.emplace(a.html_out);
    const sim::Report report = sim::run_experiment(trace, source, o);
    print_table(report);

    const std::string text = sim::report_json(report).dump(1) + "\n";
    std::fwrite(text.data(), 1, text.size(), json.stream());
    if (html) {
        const std::string page = sim::report_html(report);
        std::fwrite(page.data(), 1, page.size(), html->stream());
    }
    if (allocations) write_allocations(report, allocations->stream());
    // Everything is written before anything is put in place.
    json.commit();
    if (html) html->commit();
    if (allocations) allocations->commit();
    return 0;
}

}  // namespace

Command add_simulate_command(CLI::App& parent) {
    auto a = std::make_shared<SimulateArgs>();
    sim::ExperimentOptions& o = a->experiment;
    sim::PolicySettings& s = o.settings;
    CLI::App* app = parent.add_subcommand("simulate",
                                          "Replay traces through provisioning policies (static, "
                                          "vpa, vpa-updater, vpa-warm, window, krr, phase, "
                                          "phase-no-model, "
                                          "oracle, perfect) causally and score what each allocates "
                                          "(requests over time) and risks (OOM kills: memory "
                                          "over the limit; CPU throttling and fulfilment; "
                                          "resizes). `phase` runs as a PhaseAutoscaler does: with "
                                          "--autoscaler FILE its settings, else the CRD's defaults "
                                          "(quantiles, safety margins, CPU target "
                                          "fulfilment, debounceSamples, minChange, cooldownSeconds "
                                          "in trace time, minAllowed/maxAllowed, "
                                          "controlledValues of the \"*\" container policy). Flags "
                                          "below override single settings. With "
                                          "--target-fulfilment every policy's margins are instead "
                                          "calibrated on the training executions, to "
                                          "compare policies at equal risk");
    app->add_option("--trace", a->traces, "Trace CSV file(s), comma-separated")
        ->required()
        ->delimiter(',')
        ->type_name("FILE[,FILE...]")
        ->default_str("");
    app->add_option("--json", a->json_out, "Where to write the JSON report")
        ->required()
        ->type_name("REPORT.json");
    app->add_option("--html", a->html_out, "Where to write the HTML report (optional)")
        ->type_name("REPORT.html");
    app->add_option(
           "--allocations", a->allocations_out,
           "Where to write every held-out sample's requests and limits per policy (CSV, optional)")
        ->type_name("FILE.csv");
    app->add_option("--model", a->model,
                    "Phase model file, or 'default' (the built-in model). Without it: the default "
                    "model, or with "
                    "--train-fraction/--folds a model trained on each fold's training executions")
        ->type_name("MODEL.json");
    app->add_option("--policy", a->policies, "Policies to score: all, or a comma-separated list")
        ->delimiter(',')
        ->type_name("all|NAME[,NAME...]");
    app->add_option("--autoscaler", a->autoscaler,
                    "A PhaseAutoscaler (YAML, as for kubectl apply) whose settings `phase` "
                    "replays; without it, "
                    "the CRD's defaults")
        ->type_name("FILE.yaml");
    app->add_option("--static-cpu", a->static_cpu,
                    "The CPU every execution starts with and `static` keeps (a quantity: 2, "
                    "1500m); default: the "
                    "trace's allocation column, else `static` is skipped and executions start at "
                    "their first sample")
        ->type_name("QUANTITY");
    app->add_option("--static-memory", a->static_memory,
                    "The memory likewise (a quantity: 8Gi, 512Mi)")
        ->type_name("QUANTITY");
    app->add_option("--target-fulfilment", o.target_fulfilment,
                    "Calibrate each policy's safety margins on the training executions, to compare "
                    "policies at equal risk: phase's to this CPU fulfilment and no more OOM kills "
                    "than the VPA at its defaults; the others' to the risk phase reached (less, "
                    "when its margins cannot go below 0) (default 0: no calibration, each "
                    "policy's own settings)")
        ->check(CLI::Range(0.0, 0.999999));
    app->add_option("--inner-folds", o.inner_folds,
                    "With --target-fulfilment and a split: phase is calibrated on the training "
                    "executions with models that never saw them, trained on the other inner folds "
                    "of the training set (at most this many; 0: with the fold's own model, which "
                    "knows them and so reaches less risk there than held out)")
        ->check(non_negative());
    app->add_option("--train-fraction", o.train_fraction,
                    "Hold out executions: this share trains, the rest is scored")
        ->check(CLI::Range(0.0, 0.999999));
    app->add_option("--folds", o.folds, "Hold out executions by K-fold cross-validation")
        ->check(non_negative());
    app->add_option("--split-seed", o.seed,
                    "Seed of the split of executions into training and held-out ones");
    app->add_option("--train-also", a->train_also,
                    "With --folds or --train-fraction: trace(s) every fold's model also trains on, "
                    "never scored "
                    "(e.g. generated jobs beside real ones)")
        ->delimiter(',')
        ->type_name("FILE[,FILE...]");
    app->add_option("--id-column", a->id_column, "Column that names the execution of each row");
    app->add_option("--cpu-column", o.columns.cpu, "CPU usage column (cores)");
    app->add_option("--mem-column", o.columns.memory, "Memory usage column (bytes)");
    app->add_option("--static-cpu-column", o.columns.static_cpu,
                    "CPU allocation the trace ran with (cores)");
    app->add_option("--static-mem-column", o.columns.static_memory,
                    "Memory allocation the trace ran with (bytes)");
    app->add_option("--delay", s.actuation.delay, "Actuation delay in samples for causal policies")
        ->check(positive());
    app->add_option("--min-change", s.actuation.min_change,
                    "Smallest relative request change worth a resize (minChange)")
        ->check(non_negative());
    app->add_option(
           "--cooldown", s.actuation.cooldown_s,
           "Seconds of trace time after a resize before the next (cooldownSeconds; a raise "
           "let through within it does not restart it, and one that only raises CPU holds back "
           "only CPU cuts)")
        ->check(non_negative());
    app->add_option("--tick", a->tick,
                    "Replay at the operator's --tick (its default: 15s): causal policies observe "
                    "one sample per tick, as Prometheus reports it (CPU usage and throttling "
                    "averaged over the --rate-window before it, memory at the tick, an OOM kill "
                    "since the tick before), and decide only then; every sample is scored all the "
                    "same (memory over the limit between two ticks kills). --delay then counts "
                    "ticks. Default: every sample")
        ->type_name("DURATION");
    app->add_option("--rate-window", a->rate_window,
                    "With --tick: the seconds before a tick that CPU usage and throttling are "
                    "averaged over (the operator's: its --scrape-interval, which its default "
                    "queries' irate() covers; default a tick, as where Prometheus scrapes once a "
                    "tick, at the operator's defaults). A throttled share is judged under the CPU "
                    "limits of max(4 x this, --tick) before the tick, where the operator finds "
                    "the scrapes it is taken from")
        ->type_name("DURATION");
    app->add_option("--horizon", s.phase.horizon_s,
                    "Phase policy: seconds its memory looks ahead (default: the cooldown; 0: none)")
        ->check(non_negative());
    app->add_option("--rise-quantile", s.phase.rise_quantile,
                    "Phase policy: memory at least the latest usage times this quantile of how "
                    "far the phase's memory rose within a minute in the model's training "
                    "executions, times (1 + the memory margin) (0.5, 0.9, 0.95, 0.99 or 1; 0: off)")
        ->check(CLI::IsMember({0.0, 0.5, 0.9, 0.95, 0.99, 1.0}));
    app->add_option("--mem-step", s.phase.memory_step,
                    "Phase policy: what each OOM kill adds to the container's memory margin")
        ->check(non_negative());
    app->add_option("--mem-keep", s.phase.memory_keep,
                    "Phase policy: a recommendation never lowers memory below this share of the "
                    "request in force (0: no bound)")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--busy-cpu", s.phase.busy_cpu,
                    "Phase policy: --mem-keep holds until the container's last 4 samples each "
                    "used at least this many cores and its memory did not grow (--mem-noise) at "
                    "every one of them (its working set, not an idle start or a loading ramp); 0: "
                    "always")
        ->check(non_negative());
    app->add_option("--mem-noise", s.phase.memory_noise,
                    "Phase policy: for --busy-cpu, memory grew at a sample only by more than this "
                    "share of the usage before (smaller steps are noise)")
        ->check(non_negative());
    app->add_option("--mem-spike-factor", s.phase.memory_spike_factor,
                    "Phase policy: memory that spiked above its own quantile and came back down "
                    "is provisioned at its median plus this factor times the spike's height "
                    "above it (an evaluation or a checkpoint recurs, not always as high; 1: off)")
        ->check(CLI::Range(0.0, 1000.0));
    app->add_option("--mem-next-step", s.phase.memory_next_step,
                    "Phase policy: until a container has shown its working set, memory is ready "
                    "for a step of this factor: memory that grew at every one of its last 4 "
                    "samples (a ramp) is not cut below this many times its latest usage, nor below "
                    "its growth over those samples times it (nor held above the request in "
                    "force), and one at work at a level for less than the "
                    "horizon comes down by half or to this many times its usage (0: neither)")
        ->check(CLI::Range(0.0, 1000.0));
    app->add_option("--cpu-keep", s.phase.cpu_keep,
                    "Phase policy: a recommendation never lowers CPU below this share of the "
                    "request in force (0: no bound)")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--max-growth", s.phase.max_growth,
                    "Phase policy: a recommendation never gives more than this factor times a "
                    "request in force, but memory after an OOM kill (0: no bound)")
        ->check(CLI::Range(0.0, 1000.0));
    app->add_option(
           "--first-resize-samples", s.phase.first_resize_samples,
           "Phase policy: samples of its own a container is observed for before its first resize")
        ->check(CLI::Range(0, 1000000));
    app->add_option("--throttle-growth", s.phase.throttle_growth,
                    "Phase policy: after samples throttled at the CPU limit, CPU at least this "
                    "factor times that limit (0: off), unless throttled in most periods, where "
                    "the replay's throttled seconds give the demand above the limit (the "
                    "operator reads cAdvisor's) and CPU goes to it plus the margin; else "
                    "throttled in most periods right after a "
                    "cut from a request it ran unthrottled at, at most 10% above that request; "
                    "on its starting request, throttled in few periods but at it in the rest, "
                    "10% above it")
        ->check(CLI::Range(0.0, 1000.0));
    app->add_option("--throttled-seconds", s.phase.throttled_seconds,
                    "Phase policy: seconds throttled in a row before the throttle growth (one "
                    "2 s sample alone is within the CPU target; the online margin answers it; a "
                    "sample of a 15 s tick is enough). Before a container's first resize, one "
                    "throttled sample is enough: it runs on its starting request")
        ->check(CLI::Range(0.0, 3600.0));
    app->add_flag_callback(
        "--cpu-uncapped", [&s] { s.actuation.cpu_capped_at_limit = false; },
        "Policies observe the trace's CPU demand above the CPU limit, as on KWOK nodes, "
        "which run no cgroups (default: usage stops at the limit and the rest is "
        "throttled, as the kubelet reports it)");
    app->add_option("--cpu-target", s.phase.cpu_target,
                    "Phase policy: CPU target fulfilment its margins adapt to online (0: off)")
        ->check(CLI::Range(0.0, 0.999));
    app->add_option("--vpa-half-life", s.vpa.cpu_half_life_s,
                    "VPA histogram half-life, seconds (upstream 24 h)")
        ->check(positive())
        ->each([&s](const std::string&) { s.vpa.memory_half_life_s = s.vpa.cpu_half_life_s; });
    app->add_option("--vpa-interval", s.vpa.memory_interval_s,
                    "VPA memory peak aggregation interval, seconds (upstream 24 h)")
        ->check(positive());
    app->add_option("--window", s.window.samples, "Samples the window policy looks back on")
        ->check(positive());
    app->add_option("--window-quantile", s.window.quantile,
                    "Quantile of the window (1: its maximum)")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--cpu-quantile", s.phase.cpu_quantile,
                    "Phase statistic for CPU: 0.5, 0.9, 0.95, 0.99 or 1");
    app->add_option("--mem-quantile", s.phase.memory_quantile,
                    "Phase statistic for memory: 0.5, 0.9, 0.95, 0.99 or 1");
    app->add_option("--debounce", s.phase.debounce,
                    "Samples a new phase must last before the phase policy follows it")
        ->check(positive());
    app->add_option("--adapt", s.phase.adapt_samples,
                    "Phase policy: after this many samples of a container in a phase, use its own "
                    "usage quantile there (0: only the model's statistics)")
        ->check(non_negative());
    app->add_option(
           "--cpu-headroom", s.phase.headroom.cpu,
           "Phase policy: CPU never below the latest usage times (1 + headroom) (1 + margin)")
        ->check(non_negative());
    app->add_option("--mem-headroom", s.phase.headroom.memory,
                    "Phase policy: memory never below the most its last 4 samples used times (1 + "
                    "headroom) (1 + margin)")
        ->check(non_negative());
    app->add_option(
           "--mem-min-headroom", a->memory_min_headroom,
           "Phase policy: memory never below the most its last 4 samples used plus this "
           "much, whatever the margin (a quantity: 128Mi, 0 for none; default: the autoscaler's "
           "resources.memory.minHeadroom, 384Mi)")
        ->type_name("QUANTITY");
    app->add_flag("--proactive", s.phase.proactive,
                  "Phase policy: provision for the likely next phase once a visit runs long");
    add_training_options(
        app->add_option_group(
            "Model training",
            "With --train-fraction or --folds and no --model: how each fold's model is trained"),
        a->training);
    return {app, [a, app] { return run_simulate(*a, *app); }};
}

}  // namespace phasescale::cli
