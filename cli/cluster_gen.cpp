// phasescale cluster-gen: a synthetic job trace and a diurnal inference load for cluster-sim
// (docs/cluster-sim.md).

#include "command.hpp"

#include <phasescale/sim/cluster_trace.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace phasescale::cli {
namespace {

struct ClusterGenArgs {
    sim::ClusterGenOptions options;
    std::string jobs_out, load_out;
};

int run_cluster_gen(const ClusterGenArgs& a) {
    if (a.jobs_out == "-" && a.load_out == "-")
        throw UsageError("--jobs-out and --load-out cannot both be stdout");
    if (a.jobs_out == a.load_out) throw UsageError("--jobs-out and --load-out name the same file");
    std::vector<sim::ClusterJob> jobs;
    std::vector<sim::LoadPoint> load;
    try {
        jobs = sim::generate_cluster_jobs(a.options);
        load = sim::generate_inference_load(a.options);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());  // options that pass one by one but not together
    }
    std::ostringstream jobs_csv, load_csv;
    sim::write_cluster_jobs(jobs_csv, jobs);
    sim::write_inference_load(load_csv, load);
    // Both files are complete in memory before either is renamed into place.
    OutputFile jobs_file(a.jobs_out), load_file(a.load_out);
    std::fputs(jobs_csv.str().c_str(), jobs_file.stream());
    std::fputs(load_csv.str().c_str(), load_file.stream());
    jobs_file.commit();
    load_file.commit();

    std::size_t elastic = 0;
    for (const auto& j : jobs) elastic += j.elastic();
    std::FILE* report = a.jobs_out == "-" || a.load_out == "-" ? stderr : stdout;
    std::fprintf(
        report,
        "generated %zu jobs (%zu elastic) over %s days, offered load %.1f GPUs; %zu load points\n",
        jobs.size(), elastic, format_number(a.options.days).c_str(),
        sim::offered_gpus(jobs, a.options.days * 86400), load.size());
    return 0;
}

}  // namespace

Command add_cluster_gen_command(CLI::App& parent) {
    auto a = std::make_shared<ClusterGenArgs>();
    sim::ClusterGenOptions& o = a->options;
    CLI::App* app = parent.add_subcommand("cluster-gen",
                                          "Generate a job trace (heavy-tailed durations and sizes, "
                                          "some jobs elastic) and a diurnal inference "
                                          "load for cluster-sim");
    app->footer(
        "The same options give the same files, byte for byte. docs/cluster-sim.md describes both "
        "formats, the "
        "distributions and every parameter.");
    app->add_option("--seed", o.seed, "Seed of every random choice")->type_name("S");
    app->add_option("--days", o.days, "Length of the trace in days")
        ->check(CLI::Range(1e-6, 3650.0));
    app->add_option("--jobs-out", a->jobs_out, "Where to write the job CSV; - for stdout")
        ->required()
        ->type_name("JOBS.csv");
    app->add_option("--load-out", a->load_out, "Where to write the load CSV; - for stdout")
        ->required()
        ->type_name("LOAD.csv");
    app->add_option("--jobs-per-day", o.jobs_per_day, "Mean job submissions per day")
        ->check(CLI::Range(0.0, 1e6));
    app->add_option("--submit-swing", o.submit_swing,
                    "Submission rate varies by +- this share over the day")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--median-duration", o.median_duration_s,
                    "Median job duration at base demand, seconds (lognormal)")
        ->check(CLI::Range(1.0, 1e9));
    app->add_option("--duration-sigma", o.duration_sigma,
                    "Standard deviation of log(duration): the tail's weight")
        ->check(CLI::Range(0.0, 10.0));
    app->add_option("--max-duration", o.max_duration_s,
                    "Longest job duration, seconds (longer draws are redrawn)")
        ->check(CLI::Range(1.0, 1e9));
    app->add_option("--elastic-share", o.elastic.share, "Share of jobs that are elastic")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--max-scale", o.elastic.max_scale,
                    "An elastic job's max workers = min workers x this")
        ->check(CLI::Range(2, 64));
    app->add_option("--load-interval", o.load_interval_s, "Seconds between inference load points")
        ->check(CLI::Range(1.0, 86400.0));
    app->add_option("--load-trough", o.load_trough,
                    "Share of inference servers needed at the daily low")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--load-peak", o.load_peak,
                    "Share of inference servers needed at the daily peak")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--peak-hour", o.peak_hour, "Hour of the day of the peak, from the trace start")
        ->check(CLI::Range(0.0, 24.0));
    app->add_option("--load-noise", o.load_noise,
                    "Standard deviation of the noise on each load point")
        ->check(CLI::Range(0.0, 1.0));
    return {app, [a] { return run_cluster_gen(*a); }};
}

}  // namespace phasescale::cli
