#pragma once

#include <phasescale/model/atomic_file.hpp>
// Pieces shared by the phasescale commands: how a command plugs into main, usage errors, and
// output that never leaves half a file behind.

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include <phasescale/model/train.hpp>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace phasescale::cli {

// A subcommand: its parser, and what to run once the whole command line has parsed. Running it
// returns the exit code; errors are thrown and reported by main.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command add_train_command(CLI::App& parent);
Command add_predict_command(CLI::App& parent);
Command add_inspect_command(CLI::App& parent);
Command add_generate_command(CLI::App& parent);
Command add_simulate_command(CLI::App& parent);
Command add_export_trace_command(CLI::App& parent);
Command add_cluster_sim_command(CLI::App& parent);
Command add_cluster_gen_command(CLI::App& parent);
Command add_recommend_command(CLI::App& parent);
Command add_name_phases_command(CLI::App& parent);
Command add_score_live_command(CLI::App& parent);

// The options of `train` that shape a model (features, sizes, SGD, k-means, seed), shared with
// `simulate`, which trains a model per fold; and the check of their column lists.
void add_training_options(CLI::App* app, model::TrainOptions& options);
void check_training_columns(const model::TrainOptions& options);

// Checks of a number option (->check) that say what is wrong ("must be positive, not -5",
// "'abc' is not a number"), where CLI11's range validators print their range up to the largest
// double. number_that_is: any requirement; non_negative, positive: finite ones.
CLI::Validator number_that_is(const std::string& requirement, std::function<bool(double)> holds);
CLI::Validator non_negative();
CLI::Validator positive();

// A command line that parsed but asks for something impossible: exit code 2, as parse errors.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The flags' one duration grammar (model/duration.hpp); a bad one is a usage error.
std::chrono::milliseconds duration_option(const std::string& text, const char* option);

// Shortest text that reads back as the same double, whole numbers in full: "1700000000", "0.5",
// "1e-07" (model::number_text).
std::string format_number(double value);
// "0.9 s", "4m05s", "1h02m": for elapsed and remaining times.
std::string format_duration(double seconds);
// Quotes a CSV field when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text);

bool is_terminal(std::FILE* stream);
// Colour on a terminal unless NO_COLOR is set (https://no-color.org).
bool use_colour(std::FILE* stream);

// A model::AtomicFile behind a C stream: nothing appears at `path` before commit(), and a
// process that dies first leaves nothing behind. "-" writes to stdout directly.
class OutputFile {
public:
    explicit OutputFile(std::string path);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    std::FILE* stream() const { return stream_; }
    void commit();

private:
    std::string path_;
    std::optional<model::AtomicFile> file_;  // none for stdout
    std::FILE* stream_ = nullptr;
};

}  // namespace phasescale::cli
