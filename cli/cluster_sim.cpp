// phasescale cluster-sim: a GPU cluster with a training and an inference pool under the
// baseline, loan, elastic and aryl policies (docs/cluster-sim.md).

#include "command.hpp"

#include <phasescale/sim/cluster.hpp>
#include <phasescale/sim/cluster_report.hpp>
#include <phasescale/sim/cluster_trace.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace phasescale::cli {
namespace {

struct ClusterSimArgs {
    std::string jobs, load, json_out, html_out;
    std::vector<std::string> policies = {"all"};
    std::string curves;  // no default: the measured curves are data, not part of phasescale
    std::string knapsack = "dp";
    sim::ClusterOptions options;
    sim::PhillyWindow philly;
    CLI::Option* cluster = nullptr;
    CLI::Option* from = nullptr;
    CLI::Option* days = nullptr;
};

std::vector<sim::ClusterPolicy> policies_from(const std::vector<std::string>& asked) {
    std::vector<sim::ClusterPolicy> out;
    if (asked.size() == 1 && asked[0] == "all")
        return {std::begin(sim::kClusterPolicies), std::end(sim::kClusterPolicies)};
    for (const std::string& name : asked) {
        const auto p = sim::parse_cluster_policy(name);
        if (!p)
            throw UsageError("--policy: unknown policy '" + name +
                             "' (known: all, baseline, loan, elastic, aryl)");
        if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    }
    return out;
}

// Without --curves every job must scale linearly; name the first that does not.
void require_no_measured_curve(const std::vector<sim::ClusterJob>& jobs) {
    for (const sim::ClusterJob& job : jobs) {
        if (job.curve.empty() || job.curve == "linear") continue;
        throw UsageError("job '" + job.id + "' scales by the measured curve '" + job.curve +
                         "': give --curves DIR, the directory holding scalability-" + job.curve +
                         ".csv (the Philly data's directory holds all six; see "
                         "docs/cluster-sim.md, Scaling curves)");
    }
}

void write_text(const std::string& path, const std::string& text) {
    OutputFile out(path);
    std::fwrite(text.data(), 1, text.size(), out.stream());
    out.commit();
}

int run_cluster_sim(ClusterSimArgs& a) {
    const std::vector<sim::ClusterPolicy> policies = policies_from(a.policies);
    const bool philly = a.cluster->count() > 0;
    if (!philly && (a.from->count() > 0 || a.days->count() > 0)) {
        throw UsageError(
            "--from and --days take a window of the Philly trace: give --cluster ID too");
    }
    if (philly && a.from->count() == 0)
        throw UsageError("--cluster needs --from DATE (and --days, default 15)");
    if (a.knapsack != "dp" && a.knapsack != "greedy")
        throw UsageError("--knapsack: 'dp' or 'greedy', not '" + a.knapsack + "'");
    a.options.greedy_knapsack = a.knapsack == "greedy";

    const std::vector<sim::ClusterJob> jobs =
        philly ? sim::read_philly_jobs(a.jobs, a.philly) : sim::read_cluster_jobs(a.jobs);
    if (jobs.empty())
        throw std::runtime_error(a.jobs + ": no jobs" + (philly ? " in the window" : ""));
    const std::vector<sim::LoadPoint> load = sim::read_inference_load(a.load);
    if (a.curves.empty()) require_no_measured_curve(jobs);
    const auto curves = sim::read_scaling_curves(a.curves, jobs);

    sim::ClusterReport report;
    report.jobs_source = philly ? a.jobs + " (cluster " + a.philly.cluster + ", " +
                                      format_number(a.philly.days) + " days from " + a.philly.from +
                                      ")"
                                : a.jobs;
    report.load_source = a.load;
    report.options = a.options;
    report.jobs = jobs.size();
    for (sim::ClusterPolicy p : policies) {
        report.results.push_back(sim::simulate_cluster(jobs, load, curves, p, a.options));
    }
    report.offered_gpus = sim::offered_gpus(jobs, report.results.front().metrics.horizon_s);

    const sim::ClusterMetrics& first = report.results.front().metrics;
    std::printf(
        "%zu jobs (%zu elastic, %zu larger than the training pool left out), offered load %.1f "
        "GPUs; "
        "training pool %d GPUs, inference pool %d GPUs\n",
        first.jobs + first.rejected, first.elastic_jobs, first.rejected, report.offered_gpus,
        a.options.training_servers * a.options.gpus_per_server,
        a.options.inference_servers * a.options.gpus_per_server);
    std::printf("%-9s %11s %11s %11s %11s %7s %7s %7s %7s %7s %7s\n", "policy", "avg queue",
                "p95 queue", "avg JCT", "p95 JCT", "usage", "train", "infer", "preempt", "loans",
                "reclaim");
    for (const sim::ClusterResult& r : report.results) {
        const sim::ClusterMetrics& m = r.metrics;
        std::printf("%-9s %11s %11s %11s %11s %6.1f%% %6.1f%% %6.1f%% %7zu %7zu %7zu\n",
                    std::string(sim::cluster_policy_name(r.policy)).c_str(),
                    format_duration(m.avg_queue_s).c_str(), format_duration(m.p95_queue_s).c_str(),
                    format_duration(m.avg_jct_s).c_str(), format_duration(m.p95_jct_s).c_str(),
                    100 * m.gpu_usage, 100 * m.training_pool_usage, 100 * m.inference_pool_usage,
                    m.preemptions, m.loans, m.reclaims);
    }

    write_text(a.json_out, sim::cluster_report_json(report).dump(1) + "\n");
    if (!a.html_out.empty()) write_text(a.html_out, sim::cluster_report_html(report));
    return 0;
}

}  // namespace

Command add_cluster_sim_command(CLI::App& parent) {
    auto a = std::make_shared<ClusterSimArgs>();
    sim::ClusterOptions& o = a->options;
    CLI::App* app = parent.add_subcommand(
        "cluster-sim",
        "Simulate a GPU cluster with a training and an inference pool: baseline (no loaning, no "
        "elasticity), "
        "loan (idle inference servers loaned to training), elastic (elastic jobs get extra "
        "workers), aryl "
        "(both); report queuing time, JCT, GPU usage, preemptions, loans and reclaims per policy");
    app->footer(
        "Jobs: the job CSV of `phasescale cluster-gen` "
        "(id,submit_s,gpus_per_worker,min_workers,max_workers,"
        "duration_s,elastic,curve), or with --cluster the Philly trace "
        "(../shared/data/philly/philly-jobs.csv), "
        "whose jobs are made elastic by the seeded rule of docs/cluster-sim.md. Load: time_s,load "
        "(the share of "
        "inference servers inference needs). docs/cluster-sim.md describes the model and the "
        "reports.");
    app->add_option("--jobs", a->jobs, "Job CSV, or the Philly trace with --cluster")
        ->required()
        ->type_name("JOBS.csv");
    app->add_option("--inference-load", a->load, "Inference load CSV (time_s,load)")
        ->required()
        ->type_name("LOAD.csv");
    app->add_option("--json", a->json_out, "Where to write the JSON report")
        ->required()
        ->type_name("REPORT.json");
    app->add_option("--html", a->html_out, "Where to write the HTML report (optional)")
        ->type_name("REPORT.html");
    app->add_option(
           "--policy", a->policies,
           "Policies to run: all, or a comma-separated list of baseline, loan, elastic, aryl")
        ->delimiter(',')
        ->type_name("all|NAME[,NAME...]");
    app->add_option("--training-servers", o.training_servers, "Servers in the training pool")
        ->check(CLI::Range(1, 1000000));
    app->add_option("--inference-servers", o.inference_servers, "Servers in the inference pool")
        ->check(CLI::Range(0, 1000000));
    app->add_option("--gpus-per-server", o.gpus_per_server, "GPUs in every server")
        ->check(CLI::Range(1, 1024));
    app->add_option("--loaned-speed", o.loaned_speed,
                    "Training speed of a loaned inference GPU against a training GPU")
        ->check(CLI::Range(0.01, 1.0));
    app->add_option("--knapsack", a->knapsack,
                    "Extra workers by the exact dynamic program (dp) or the greedy heuristic")
        ->type_name("dp|greedy");
    app->add_option("--curves", a->curves,
                    "Directory of the scalability-<model>.csv files the jobs' curves name; "
                    "needed when a job names one (elastic jobs of cluster-gen and of --cluster "
                    "do), e.g. the Philly data's directory")
        ->type_name("DIR");
    a->cluster = app->add_option("--cluster", a->philly.cluster,
                                 "Philly trace: the cluster id to take (e.g. 6214e9)")
                     ->type_name("ID");
    a->from = app->add_option("--from", a->philly.from,
                              "Philly trace: first day of the window, YYYY-MM-DD (UTC)")
                  ->type_name("DATE");
    a->days =
        app->add_option("--days", a->philly.days, "Philly trace: length of the window in days")
            ->check(positive());
    app->add_option("--seed", a->philly.elastic.seed,
                    "Philly trace: seed of the rule that makes jobs elastic");
    app->add_option("--elastic-share", a->philly.elastic.share,
                    "Philly trace: share of jobs made elastic")
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--max-scale", a->philly.elastic.max_scale,
                    "Philly trace: an elastic job's max workers = min x this")
        ->check(CLI::Range(2, 64));
    return {app, [a] { return run_cluster_sim(*a); }};
}

}  // namespace phasescale::cli
