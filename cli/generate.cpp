// phasescale generate: synthetic traces of deep-learning training containers, with the true phase
// of every sample (docs/generator.md).

#include "command.hpp"

#include <phasescale/sim/generator.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <ostream>
#include <streambuf>

namespace phasescale::cli {
namespace {

struct GenerateArgs {
    sim::GeneratorOptions options;
    std::string out;
};

// An std::ostream onto a C stream, so that the generator writes through OutputFile.
class FileBuffer : public std::streambuf {
public:
    explicit FileBuffer(std::FILE* file) : file_(file) {}

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        return std::fputc(c, file_) == EOF ? traits_type::eof() : c;
    }
    std::streamsize xsputn(const char* text, std::streamsize n) override {
        return static_cast<std::streamsize>(
            std::fwrite(text, 1, static_cast<std::size_t>(n), file_));
    }

private:
    std::FILE* file_;
};

std::string utc_time(std::int64_t unix_seconds) {
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &tm);
    return buffer;
}

// A finite number of at least `minimum`.
CLI::Validator number_at_least(double minimum, const std::string& requirement) {
    return number_that_is(requirement,
                          [minimum](double v) { return std::isfinite(v) && v >= minimum; });
}

int run_generate(const GenerateArgs& args) {
    OutputFile out(args.out);
    FileBuffer buffer(out.stream());
    std::ostream csv(&buffer);
    sim::GeneratorSummary summary = sim::generate_traces(args.options, csv);
    csv.flush();
    out.commit();

    // With the CSV on stdout the summary goes to stderr.
    std::FILE* report = args.out == "-" ? stderr : stdout;
    std::fprintf(
        report, "generated %s: %zu jobs, %zu rows, %s to %s UTC (%s)\n",
        args.out == "-" ? "stdout" : args.out.c_str(), summary.jobs, summary.rows,
        utc_time(summary.first_timestamp).c_str(), utc_time(summary.last_timestamp).c_str(),
        format_duration(static_cast<double>(summary.last_timestamp - summary.first_timestamp))
            .c_str());
    return 0;
}

}  // namespace

Command add_generate_command(CLI::App& parent) {
    auto args = std::make_shared<GenerateArgs>();
    sim::GeneratorOptions& o = args->options;
    o.seed = 1;
    CLI::App* app = parent.add_subcommand(
        "generate",
        "Generate synthetic traces of deep-learning training containers (start-up, loading, "
        "warm-up, training with evaluations and checkpoints, memory growth, tail) with the true "
        "phase of every sample");
    app->footer(
        "Writes the canonical trace CSV: timestamp, pod.id, cpu.usage.cores, mem.working.set, the "
        "allocation the job was submitted with (cpu.num.cores, mem.limit), and as text the phase "
        "(startup, loading, warmup, training, growth, tail) and event (eval, checkpoint, reload, "
        "cache, leak, dropout) of each sample. The same options give the same file, byte for byte. "
        "docs/generator.md describes the phases, their parameters and the noise.");

    app->add_option("--jobs", o.jobs, "Jobs (containers) to generate, one pod.id each")
        ->required()
        ->type_name("N")
        ->check(number_at_least(1, "at least 1"))
        ->check(CLI::Range(1.0, 100000.0))
        ->default_str("");
    app->add_option("--seed", o.seed,
                    "Seed of every random choice: the same seed, the same traces; job i is the "
                    "same whatever --jobs is")
        ->type_name("S");
    app->add_option("--out", args->out, "Where to write the trace CSV; - for stdout")
        ->required()
        ->type_name("FILE.csv");
    app->add_option("--interval", o.interval_s,
                    "Mean seconds between samples; each step varies by up to 20% either way")
        ->type_name("SECONDS")
        ->check(number_at_least(1, "at least 1 (timestamps are whole seconds)"))
        ->check(CLI::Range(1.0, 86400.0));
    app->add_option("--start-time", o.start_time, "Unix time at which the first job starts")
        ->type_name("SECONDS")
        ->check(number_at_least(0, "a unix time (non-negative)"))
        ->check(CLI::Range(0.0, 1e10))
        ->default_str("1700000000");

    return {app, [args] { return run_generate(*args); }};
}

}  // namespace phasescale::cli
