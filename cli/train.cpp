// phasescale train: learns a phase model from one or more traces and saves it.

#include "command.hpp"
#include "prometheus_trace.hpp"

#include <phasescale/model/error.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/model/train.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

namespace phasescale::cli {
namespace {

struct TrainArgs {
    std::vector<std::string> traces;
    std::string out;
    model::TrainOptions options;
    std::string extend;  // a model to extend with new phases instead of training one
    model::ExtendOptions extend_options;
    PrometheusSource prometheus;          // instead of trace files
    std::vector<std::string> containers;  // keep only these containers' executions
};

// How a trace names containers, for --help and errors.
constexpr const char* kContainerNaming =
    "a trace from --prometheus or export-trace names each execution NAMESPACE/POD/CONTAINER in "
    "its id column; the container is the part after the last '/' (the whole id when it has none)";

std::string container_of(const std::string& id) {
    return id.substr(id.rfind('/') + 1);  // npos + 1 == 0: the whole id
}

// Keeps the executions of the named containers (sidecars stay out of the model). Throws
// InputError, listing the trace's containers, when none matches.
void keep_containers(model::Trace& trace, const std::vector<std::string>& containers) {
    if (containers.empty()) return;
    const auto wanted = [&](const model::Execution& e) {
        return std::find(containers.begin(), containers.end(), container_of(e.id)) !=
               containers.end();
    };
    std::vector<std::string> seen;
    for (const model::Execution& e : trace.executions)
        if (std::find(seen.begin(), seen.end(), container_of(e.id)) == seen.end())
            seen.push_back(container_of(e.id));
    std::erase_if(trace.executions, [&](const model::Execution& e) { return !wanted(e); });
    if (!trace.executions.empty()) return;
    constexpr std::size_t kShown = 10;
    std::string listed;
    for (std::size_t i = 0; i < seen.size() && i < kShown; ++i)
        listed += (i == 0 ? "" : ", ") + seen[i];
    if (seen.size() > kShown) listed += ", ... (" + std::to_string(seen.size()) + " in all)";
    std::string asked;
    for (const std::string& c : containers) asked += (asked.empty() ? "" : ", ") + c;
    throw model::InputError("--container " + asked + ": no execution of the trace is in " +
                            (containers.size() == 1 ? "that container" : "those containers") +
                            "; its containers: " + listed + " (" + kContainerNaming + ")");
}

// One status line on stderr, redrawn in place. Small traces train thousands of epochs a second,
// so it redraws at most ten times a second (and always on the last epoch).
class ProgressBar {
public:
    void update(const model::EpochReport& report) {
        auto now = std::chrono::steady_clock::now();
        if (report.epoch < report.epochs && drawn_ &&
            now - last_ < std::chrono::milliseconds(100)) {
            return;
        }
        last_ = now;
        drawn_ = true;

        constexpr int kWidth = 30;
        double done = report.epochs > 0 ? double(report.epoch) / report.epochs : 1.0;
        int filled = std::clamp(static_cast<int>(done * kWidth), 0, kWidth);
        std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
        double left =
            report.epoch > 0 ? report.seconds / report.epoch * (report.epochs - report.epoch) : 0.0;
        std::fprintf(stderr,
                     "\r\033[Kepoch %d/%d [%s] reconstruction error %.4f  %s elapsed, %s left",
                     report.epoch, report.epochs, bar.c_str(), report.reconstruction_error,
                     format_duration(report.seconds).c_str(), format_duration(left).c_str());
        std::fflush(stderr);
    }

    // Clears the line when training ends (or fails): the summary that follows says it all.
    ~ProgressBar() {
        if (drawn_) std::fprintf(stderr, "\r\033[K");
    }

private:
    std::chrono::steady_clock::time_point last_{};
    bool drawn_ = false;
};

// Features first, then the usage columns not already among them.
std::vector<std::string> columns_to_read(const model::TrainOptions& options) {
    std::vector<std::string> columns = options.features;
    for (const auto& column : options.usage_columns) {
        if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
            columns.push_back(column);
        }
    }
    return columns;
}

void check_distinct(const std::vector<std::string>& names, const char* option) {
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].empty()) throw UsageError(std::string(option) + ": empty column name");
        if (std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i) {
            throw UsageError(std::string(option) + ": '" + names[i] + "' is listed twice");
        }
    }
}

// AI4DL's phase expansion: the model keeps its CRBM; what it does not know becomes new phases.
int run_extend(TrainArgs& args) {
    if (args.traces.empty()) throw UsageError("--extend needs --trace FILE[,FILE...]");
    const model::PhaseModel base = model::resolve_model(args.extend);
    std::vector<std::string> columns = base.features;
    if (base.statistics) {
        for (const auto& c : base.statistics->usage_columns)
            if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
    model::Trace trace = model::read_trace(
        args.traces,
        model::TraceOptions{.id_column = args.options.parameters.id_column, .columns = columns});
    keep_containers(trace, args.containers);
    model::ExtendResult extended = model::extend_model(base, trace, args.extend_options);
    if (extended.model.parameters) {
        auto& traces = extended.model.parameters->traces;
        traces.insert(traces.end(), args.traces.begin(), args.traces.end());
    }
    model::save_model(extended.model, args.out);
    std::printf(
        "extended %s into %s: %d phases + %d new, from %zu of %zu samples in no known phase\n",
        args.extend.c_str(), args.out.c_str(), base.phases(), args.extend_options.new_phases,
        extended.unknown_samples, extended.samples);
    return 0;
}

int run_train(TrainArgs& args) {
    if (!args.extend.empty()) return run_extend(args);
    check_training_columns(args.options);
    model::TrainingParameters& parameters = args.options.parameters;
    model::Trace trace;
    if (wanted(args.prometheus)) {
        // The history holds the two default features only.
        const std::vector<std::string> columns = columns_to_read(args.options);
        model::Trace history = read_prometheus_trace(args.prometheus);
        for (const std::string& c : columns)
            if (std::find(history.columns.begin(), history.columns.end(), c) ==
                history.columns.end())
                throw UsageError(
                    "--prometheus gives the columns cpu.usage.cores and mem.working.set only, not "
                    "'" +
                    c + "'");
        trace = std::move(history);
        parameters.traces = {describe(args.prometheus)};
    } else {
        if (args.traces.empty())
            throw UsageError("give --trace FILE[,FILE...] or --prometheus URL");
        parameters.traces = args.traces;
        trace = model::read_trace(args.traces,
                                  model::TraceOptions{.id_column = parameters.id_column,
                                                      .columns = columns_to_read(args.options)});
    }
    keep_containers(trace, args.containers);

    model::PhaseModel trained = [&] {
        ProgressBar bar;
        std::function<void(const model::EpochReport&)> on_epoch;
        if (is_terminal(stderr)) {
            on_epoch = [&bar](const model::EpochReport& report) { bar.update(report); };
        }
        return model::train_model(trace, args.options, on_epoch);
    }();
    model::save_model(trained, args.out);

    // train_model always fills the summary; it is optional only in models read from a file.
    model::TrainingSummary summary = trained.training.value_or(model::TrainingSummary{});
    std::printf(
        "trained %s: %zu features, %d hidden, history %d, %d phases from %zu executions "
        "(%zu rows, %zu slices), %zu epochs%s in %s, final reconstruction error %.4f\n",
        args.out.c_str(), trained.features.size(), trained.crbm.n_hid, trained.crbm.n_his,
        trained.phases(), summary.executions, summary.rows, summary.slices,
        summary.reconstruction_error_per_epoch.size(),
        summary.stopped_early ? " (stopped early)" : "", format_duration(summary.seconds).c_str(),
        summary.final_reconstruction_error);
    return 0;
}

}  // namespace

void check_training_columns(const model::TrainOptions& options) {
    check_distinct(options.features, "--features");
    check_distinct(options.usage_columns, "--usage-columns");
}

void add_training_options(CLI::App* app, model::TrainOptions& options) {
    model::TrainingParameters& p = options.parameters;
    app->add_option("--features", options.features, "Trace columns the model reads, in order")
        ->delimiter(',')
        ->type_name("COLUMN[,COLUMN...]");
    app->add_option("--usage-columns", options.usage_columns,
                    "Columns whose per-phase statistics the model records")
        ->delimiter(',')
        ->type_name("COLUMN[,COLUMN...]");
    const CLI::Validator below_one =
        number_that_is("in [0, 1)", [](double v) { return v >= 0 && v < 1; });

    // Upper bounds far above any useful model, below what exhausts memory or time.
    auto from_one_to = [](double most) {
        return number_that_is("in [1, " + format_number(most) + "]",
                              [most](double v) { return v >= 1 && v <= most; });
    };
    app->add_option("--hidden", p.hidden, "Hidden units of the CRBM")->check(from_one_to(4096));
    app->add_option("--history", p.history, "Previous samples the CRBM is conditioned on")
        ->check(from_one_to(1000));
    app->add_option("--phases", p.phases, "Phases (k-means clusters)")->check(from_one_to(1000));
    app->add_option("--epochs", p.epochs, "Training epochs")->check(from_one_to(1e6));
    app->add_option("--learning-rate", p.learning_rate, "SGD learning rate")->check(positive());
    app->add_option("--batch", p.batch, "Slices per update (1 is the AI4DL reference)")
        ->check(from_one_to(1e6));
    app->add_option("--cd-steps", p.cd_steps, "k of CD-k (Gibbs steps per update)")
        ->check(from_one_to(1000));
    app->add_option("--momentum", p.momentum, "SGD momentum (0 disables)")->check(below_one);
    app->add_option("--weight-decay", p.weight_decay, "L2 penalty on W, A and B (0 disables)")
        ->check(non_negative());
    app->add_option("--patience", p.patience,
                    "Stop after this many epochs without improvement (0 disables)")
        ->check(non_negative());
    app->add_option("--restarts", p.kmeans_restarts, "k-means++ restarts; the best one is kept")
        ->check(from_one_to(1000));
    app->add_option("--seed", p.seed, "Seed of every random choice: the same seed, the same model")
        ->check(non_negative());
}

Command add_train_command(CLI::App& parent) {
    auto args = std::make_shared<TrainArgs>();
    CLI::App* app = parent.add_subcommand(
        "train",
        "Learn a phase model from traces (a CRBM trained with CD-k, k-means over its hidden "
        "activations) with each phase's usage statistics");

    CLI::Option* traces =
        app->add_option("--trace", args->traces, "Trace CSV file(s), comma-separated")
            ->delimiter(',')
            ->type_name("FILE[,FILE...]")
            ->default_str("");
    app->add_option("--out", args->out, "Where to write the model (JSON)")
        ->required()
        ->type_name("MODEL.json");
    app->add_option("--id-column", args->options.parameters.id_column,
                    "Column that names the execution of each row");
    app->add_option("--container", args->containers,
                    std::string("Train only on this container's series, e.g. to keep sidecars "
                                "out of the model (repeatable): ") +
                        kContainerNaming)
        ->type_name("NAME")
        ->default_str("");
    add_training_options(app, args->options);
    CLI::Option* prometheus = add_prometheus_options(app, args->prometheus, false);
    traces->excludes(prometheus);
    app->footer(
        "Train from your own cluster's history (the containers' CPU and memory in Prometheus):\n"
        "  phasescale train --prometheus http://prometheus:9090 --namespace ml --selector "
        "app=trainer \\\n"
        "      --since 14d --step 15s --out trainers.model.json");
    CLI::Option* extend = app->add_option("--extend", args->extend,
                                          "Instead of training from scratch, extend this model "
                                          "(file or 'default'): keep its CRBM and "
                                          "add phases for the samples of --trace that lie in no "
                                          "known phase (AI4DL's phase expansion)")
                              ->type_name("MODEL.json");
    extend->excludes(prometheus);
    app->add_option("--new-phases", args->extend_options.new_phases,
                    "With --extend: how many phases to add")
        ->check(positive());

    return {app, [args] { return run_train(*args); }};
}

}  // namespace phasescale::cli
