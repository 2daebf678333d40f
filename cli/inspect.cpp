// phasescale inspect: what a model file holds, as readable tables.

#include "command.hpp"

#include <phasescale/model/model.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/statistics.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace phasescale::cli {
namespace {

// Columns padded to their widest cell: the first and those marked as text left-aligned, the
// others (numbers) right-aligned.
class Table {
public:
    explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    Table& text_column(std::size_t column) {
        text_columns_.push_back(column);
        return *this;
    }

    void print(std::FILE* out) const {
        std::vector<std::size_t> widths;
        for (const auto& row : rows_) {
            widths.resize(std::max(widths.size(), row.size()), 0);
            for (std::size_t c = 0; c < row.size(); ++c)
                widths[c] = std::max(widths[c], row[c].size());
        }
        for (const auto& row : rows_) {
            std::string line = " ";
            for (std::size_t c = 0; c < row.size(); ++c) {
                std::string padding(widths[c] - row[c].size(), ' ');
                line += ' ';
                line += is_text(c) ? row[c] + padding : padding + row[c];
                line += ' ';
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            std::fprintf(out, "%s\n", line.c_str());
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
    std::vector<std::size_t> text_columns_;

    bool is_text(std::size_t column) const {
        return column == 0 ||
               std::find(text_columns_.begin(), text_columns_.end(), column) != text_columns_.end();
    }
};

std::string printf_string(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
    return text;
}

bool is_bytes_column(const std::string& column) {
    return column == "mem.working.set" || column == "mem.current" || column == "mem.limit" ||
           column.ends_with("bytes");
}

// Memory in MiB below a GiB, GiB above; cores with three decimals; anything else compactly.
std::string format_usage(const std::string& column, double value) {
    if (is_bytes_column(column)) {
        constexpr double kMiB = 1024.0 * 1024.0;
        constexpr double kGiB = 1024.0 * kMiB;
        if (value >= kGiB) return printf_string("%.2f GiB", value / kGiB);
        return printf_string("%.1f MiB", value / kMiB);
    }
    if (column == "cpu.usage.cores") return printf_string("%.3f", value);
    return printf_string("%.4g", value);
}

std::string usage_title(const std::string& column) {
    if (column == "cpu.usage.cores") return "CPU, cores (cpu.usage.cores)";
    if (column == "mem.working.set") return "memory (mem.working.set)";
    return column;
}

void print_header(const model::PhaseModel& m, const std::string& path) {
    std::printf("model      %s\n", path.c_str());
    if (m.format == model::kModelFormat) {
        std::printf("format     %s, version %d\n", m.format.c_str(), model::kModelVersion);
    } else {
        std::printf("format     %s (the pretrained AI4DL model)\n", m.format.c_str());
    }
    std::printf("features   %zu: %s\n", m.features.size(), join(m.features, ", ").c_str());
    std::printf("sizes      %d visible, %d hidden units, history %d, %d phases\n", m.crbm.n_vis,
                m.crbm.n_hid, m.crbm.n_his, m.phases());
    if (m.training) {
        const model::TrainingSummary& t = *m.training;
        std::printf("training   %zu epochs%s in %s, final reconstruction error %.4f\n",
                    t.reconstruction_error_per_epoch.size(),
                    t.stopped_early ? " (stopped early)" : "", format_duration(t.seconds).c_str(),
                    t.final_reconstruction_error);
        std::printf(
            "           %zu slices per epoch from %zu executions (%zu rows), "
            "k-means inertia %.4g\n",
            t.slices, t.executions, t.rows, t.kmeans_inertia);
    }
    if (m.parameters) {
        const model::TrainingParameters& p = *m.parameters;
        std::printf(
            "parameters learning rate %g, batch %d, CD-%d, momentum %g, weight decay %g, "
            "patience %d, k-means restarts %d, seed %llu\n",
            p.learning_rate, p.batch, p.cd_steps, p.momentum, p.weight_decay, p.patience,
            p.kmeans_restarts, static_cast<unsigned long long>(p.seed));
        if (!p.traces.empty()) std::printf("traces     %s\n", join(p.traces, ", ").c_str());
    }
}

void print_phases(const model::PhaseModel& m) {
    const model::PhaseStatistics& s = *m.statistics;
    std::size_t total = 0;
    for (const auto& phase : s.phases) total += phase.samples;
    std::printf("\nphases: %zu samples with a phase, from %zu executions\n", total, s.executions);
    std::printf(
        "(a visit is a run of consecutive samples in one phase; its length in samples and "
        "in seconds)\n");
    Table table({"phase", "name", "samples", "share", "visits", "visit p50", "visit mean",
                 "visit p50 (s)", "visit mean (s)"});
    table.text_column(1);
    for (std::size_t k = 0; k < s.phases.size(); ++k) {
        const model::PhaseStats& phase = s.phases[k];
        double share = total > 0 ? 100.0 * phase.samples / total : 0.0;
        table.add({std::to_string(k), m.phase_name(static_cast<int>(k)),
                   std::to_string(phase.samples), printf_string("%.1f%%", share),
                   std::to_string(phase.visit_samples.count),
                   printf_string("%.0f", phase.visit_samples.p50),
                   printf_string("%.1f", phase.visit_samples.mean),
                   printf_string("%.0f", phase.visit_seconds.p50),
                   printf_string("%.0f", phase.visit_seconds.mean)});
    }
    table.print(stdout);

    for (std::size_t c = 0; c < s.usage_columns.size(); ++c) {
        const std::string& column = s.usage_columns[c];
        std::printf("\n%s per phase\n", usage_title(column).c_str());
        Table usage({"phase", "mean", "p50", "p95", "p99", "max"});
        for (std::size_t k = 0; k < s.phases.size(); ++k) {
            if (c >= s.phases[k].usage.size()) continue;
            const model::Summary& u = s.phases[k].usage[c];
            usage.add({std::to_string(k), format_usage(column, u.mean), format_usage(column, u.p50),
                       format_usage(column, u.p95), format_usage(column, u.p99),
                       format_usage(column, u.max)});
        }
        usage.print(stdout);
    }
}

void print_transitions(const model::PhaseStatistics& s) {
    model::Matrix probabilities = s.transition_probabilities();
    std::printf("\ntransition probabilities (row: from, column: to the next phase visited)\n");
    std::vector<std::string> header = {"from\\to"};
    for (Eigen::Index j = 0; j < probabilities.cols(); ++j) header.push_back(std::to_string(j));
    Table table(header);
    for (Eigen::Index i = 0; i < probabilities.rows(); ++i) {
        std::vector<std::string> row = {std::to_string(i)};
        for (Eigen::Index j = 0; j < probabilities.cols(); ++j) {
            double p = probabilities(i, j);
            row.push_back(p > 0 ? printf_string("%.2f", p) : "-");
        }
        table.add(row);
    }
    table.print(stdout);
}

void print_sequences(const model::PhaseStatistics& s) {
    constexpr std::size_t kShownVisits = 24;  // longer sequences are cut to stay on one line
    std::printf("\nmost common phase sequences (visits in order)\n");
    Table table({"executions", "visits", "sequence"});
    table.text_column(2);
    for (const model::PhaseSequence& sequence : s.sequences) {
        std::string text;
        for (std::size_t i = 0; i < sequence.phases.size() && i < kShownVisits; ++i) {
            text += (i == 0 ? "" : " > ") + std::to_string(sequence.phases[i]);
        }
        if (sequence.phases.size() > kShownVisits) text += " > ...";
        table.add({std::to_string(sequence.executions) + " of " + std::to_string(s.executions),
                   std::to_string(sequence.phases.size()), text});
    }
    table.print(stdout);
}

int run_inspect(const std::string& path) {
    model::PhaseModel m = model::resolve_model(path);
    print_header(m, path);
    if (!m.statistics) {
        std::printf(
            "\nno phase statistics in this model (models phasescale trains have them); "
            "%d centroids over %d hidden activations define its phases\n",
            m.phases(), static_cast<int>(m.centroids.cols()));
        std::printf("phase names: %s\n", join(m.phase_names, ", ").c_str());
        return 0;
    }
    print_phases(m);
    print_transitions(*m.statistics);
    print_sequences(*m.statistics);
    return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& parent) {
    auto path = std::make_shared<std::string>();
    CLI::App* app = parent.add_subcommand(
        "inspect",
        "Show a model: features, training, and per phase its share, CPU and memory quantiles, "
        "visit lengths, transitions and typical sequences");
    app->add_option("model", *path,
                    "Model file (phasescale or AI4DL JSON), or 'default' for the built-in model")
        ->required()
        ->type_name("MODEL.json");
    return {app, [path] { return run_inspect(*path); }};
}

}  // namespace phasescale::cli
