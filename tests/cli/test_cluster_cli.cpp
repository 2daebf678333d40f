// phasescale cluster-gen and cluster-sim as a user runs them: outputs, the JSON layout, errors
// and exit codes (0 success, 1 a bad input file, 2 a bad command line).

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "run_cli.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using phasescale::testing::read_file;
using phasescale::testing::Run;
using phasescale::testing::run_cli;
using phasescale::testing::TempDir;

namespace {

// The measured scaling curves (docs/cluster-sim.md), read from the shared data.
const std::string kCurves = "../shared/data/philly";

// A small generated trace: 2 days, in `dir`.
void generate(const TempDir& dir) {
    const Run gen =
        run_cli(dir, {"cluster-gen", "--seed", "2", "--days", "2", "--jobs-per-day", "150",
                      "--jobs-out", dir / "jobs.csv", "--load-out", dir / "load.csv"});
    REQUIRE(gen.code == 0);
}

}  // namespace

TEST_CASE("cluster-gen: deterministic files and a summary", "[cluster][cli]") {
    TempDir dir;
    generate(dir);
    const std::string jobs = read_file(dir / "jobs.csv"), load = read_file(dir / "load.csv");
    CHECK(
        jobs.rfind("id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n",
                   0) == 0);
    CHECK(load.rfind("time_s,load\n", 0) == 0);
    std::filesystem::rename(dir / "jobs.csv", dir / "jobs-1.csv");
    generate(dir);
    CHECK(read_file(dir / "jobs.csv") == jobs);
    CHECK(read_file(dir / "load.csv") == load);

    const Run same =
        run_cli(dir, {"cluster-gen", "--jobs-out", dir / "x.csv", "--load-out", dir / "x.csv"});
    CHECK(same.code == 2);
    const Run bad = run_cli(dir, {"cluster-gen", "--jobs-out", dir / "a.csv", "--load-out",
                                  dir / "b.csv", "--load-trough", "0.9", "--load-peak", "0.5"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("trough"));
    CHECK(run_cli(dir, {"cluster-gen", "--jobs-out", dir / "a.csv"}).code ==
          2);  // --load-out missing
}

TEST_CASE("cluster-sim: the JSON layout, the HTML page, the table", "[cluster][cli]") {
    TempDir dir;
    generate(dir);
    const Run run = run_cli(
        dir, {"cluster-sim", "--jobs", dir / "jobs.csv", "--inference-load", dir / "load.csv",
              "--curves", kCurves, "--training-servers", "4", "--inference-servers", "4", "--json",
              dir / "report.json", "--html", dir / "report.html"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out, Catch::Contains("aryl"));
    const auto report = nlohmann::json::parse(read_file(dir / "report.json"));
    for (const char* policy : {"baseline", "loan", "elastic", "aryl"}) {
        INFO(policy);
        const auto& p = report.at("policies").at(policy);
        for (const char* field :
             {"avg_queue_s", "p95_queue_s", "avg_jct_s", "p95_jct_s", "gpu_usage", "preemptions",
              "loans", "reclaims", "training_pool_usage", "inference_pool_usage"}) {
            CHECK(p.contains(field));
        }
    }
    CHECK(report.at("versus_baseline").at("aryl").contains("queue_reduction"));
    const std::string html = read_file(dir / "report.html");
    CHECK_THAT(html, Catch::Contains("<svg"));
    CHECK_THAT(html, Catch::Contains("Jobs waiting"));
    CHECK_THAT(html, Catch::Contains("Loaned servers"));
    CHECK_THAT(html, Catch::Contains("GPUs in use by pool"));
    CHECK(html.find("http") == std::string::npos);  // self-contained

    const Run one =
        run_cli(dir, {"cluster-sim", "--jobs", dir / "jobs.csv", "--inference-load",
                      dir / "load.csv", "--curves", kCurves, "--policy", "baseline,aryl",
                      "--knapsack", "greedy", "--json", dir / "two.json"});
    REQUIRE(one.code == 0);
    const auto two = nlohmann::json::parse(read_file(dir / "two.json"));
    CHECK(two.at("policies").size() == 2);
    CHECK(two.at("cluster").at("knapsack") == "greedy");
}

TEST_CASE("cluster-sim: the Philly trace by window", "[cluster][cli]") {
    TempDir dir;
    generate(dir);
    const Run run = run_cli(dir, {"cluster-sim", "--jobs", "../shared/data/philly/philly-jobs.csv",
                                  "--cluster", "6214e9", "--from", "2017-10-02", "--days", "0.5",
                                  "--inference-load", dir / "load.csv", "--curves", kCurves,
                                  "--policy", "baseline", "--json", dir / "philly.json"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    const auto report = nlohmann::json::parse(read_file(dir / "philly.json"));
    CHECK(report.at("trace").at("jobs").get<int>() > 50);
}

TEST_CASE("cluster-sim: clear errors and exit codes, nothing half-written", "[cluster][cli]") {
    TempDir dir;
    generate(dir);
    const std::string jobs = dir / "jobs.csv", load = dir / "load.csv", json = dir / "out.json";
    auto sim = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"cluster-sim"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cli(dir, args);
    };

    CHECK(sim({"--help"}).code == 0);
    CHECK_THAT(sim({"--help"}).out, Catch::Contains("--inference-load"));
    CHECK(sim({"--jobs", jobs, "--inference-load", load}).code == 2);  // --json missing
    const Run policy =
        sim({"--jobs", jobs, "--inference-load", load, "--policy", "fifo", "--json", json});
    CHECK(policy.code == 2);
    CHECK_THAT(policy.err, Catch::Contains("unknown policy 'fifo'"));
    const Run window =
        sim({"--jobs", jobs, "--inference-load", load, "--from", "2017-10-01", "--json", json});
    CHECK(window.code == 2);
    CHECK_THAT(window.err, Catch::Contains("--cluster"));
    CHECK(sim({"--jobs", jobs, "--inference-load", load, "--training-servers", "0", "--json", json})
              .code == 2);
    CHECK(sim({"--jobs", jobs, "--inference-load", load, "--knapsack", "best", "--json", json})
              .code == 2);

    const Run missing = sim({"--jobs", dir / "nope.csv", "--inference-load", load, "--json", json});
    CHECK(missing.code == 1);
    CHECK_THAT(missing.err, Catch::Contains("nope.csv: cannot open"));
    const std::string bad = dir.write("bad-load.csv", "time_s,load\n0,0.5\n60,2\n");
    const Run bad_load = sim({"--jobs", jobs, "--inference-load", bad, "--json", json});
    CHECK(bad_load.code == 1);
    CHECK_THAT(bad_load.err, Catch::Contains("bad-load.csv:3: column 2 (load)"));
    const std::string curve =
        dir.write("curve.csv",
                  "id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n"
                  "a,0,1,1,2,10,1,resnet\n");
    // No default directory of curves: a job that names one needs --curves.
    const Run no_curves = sim({"--jobs", curve, "--inference-load", load, "--json", json});
    CHECK(no_curves.code == 2);
    CHECK_THAT(no_curves.err, Catch::Contains("job 'a' scales by the measured curve 'resnet': "
                                              "give --curves DIR"));
    const Run no_curve =
        sim({"--jobs", curve, "--inference-load", load, "--curves", kCurves, "--json", json});
    CHECK(no_curve.code == 1);
    CHECK_THAT(no_curve.err, Catch::Contains("scalability-resnet.csv"));
    // Jobs that all scale linearly need none.
    const std::string linear =
        dir.write("linear.csv",
                  "id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n"
                  "a,0,1,1,2,10,1,linear\n");
    const Run linear_run =
        sim({"--jobs", linear, "--inference-load", load, "--json", dir / "linear.json"});
    INFO(linear_run.err);
    CHECK(linear_run.code == 0);
    std::filesystem::remove(dir / "linear.json");
    const Run bad_date =
        sim({"--jobs", "../shared/data/philly/philly-jobs.csv", "--cluster", "6214e9", "--from",
             "Oct 1", "--inference-load", load, "--json", json});
    CHECK(bad_date.code == 1);
    CHECK_THAT(bad_date.err, Catch::Contains("bad date 'Oct 1'"));
    CHECK(!std::filesystem::exists(json));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        CHECK(entry.path().filename().string().find(".tmp-") ==
              std::string::npos);  // no temporary left
    }
}
