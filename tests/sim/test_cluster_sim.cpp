// The cluster simulator (sim/cluster.hpp) and its inputs (sim/cluster_trace.hpp): bookkeeping at
// every event under every policy, hand-made cases with known answers, the CSV formats, the Philly
// reader and the generator.

#include <phasescale/sim/cluster.hpp>
#include <phasescale/sim/cluster_report.hpp>
#include <phasescale/sim/cluster_trace.hpp>

#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include <cmath>
#include <functional>
#include <sstream>

using namespace phasescale::sim;
using phasescale::testing::TempDir;

namespace {

const std::string kPhilly = "../shared/data/philly/";

ClusterJob job(std::string id, double submit, int gpw, int min, int max, double duration,
               std::string curve = "linear") {
    return {std::move(id), submit, gpw, min, max, duration, std::move(curve)};
}

ClusterOptions small_cluster(int training, int inference) {
    ClusterOptions o;
    o.training_servers = training;
    o.inference_servers = inference;
    o.gpus_per_server = 8;
    return o;
}

// Checks what must hold at every event; returns the number of events seen.
struct Bookkeeper {
    const std::vector<ClusterJob>* jobs;
    ClusterPolicy policy;
    std::size_t events = 0;
    std::size_t saw_loaned_work = 0, saw_extra_workers = 0;

    void operator()(const ClusterSnapshot& s) {
        ++events;
        std::vector<int> workers(jobs->size(), 0);
        for (const ServerView& server : s.servers) {
            int used = 0;
            for (const auto& p : server.placements) {
                REQUIRE(p.job < jobs->size());
                REQUIRE(p.workers > 0);
                used += p.workers * (*jobs)[p.job].gpus_per_worker;
                workers[p.job] += p.workers;
            }
            INFO("time " << s.time_s);
            REQUIRE(used <= server.gpus);  // no GPU double-booked
            REQUIRE(!(server.busy && server.loaned));
            if (!server.inference) REQUIRE((!server.busy && !server.loaned));
            if (server.busy) REQUIRE(server.placements.empty());  // inference has it
            if (server.inference && !server.loaned) REQUIRE(server.placements.empty());
            if (server.loaned) REQUIRE(loans(policy));
            if (server.loaned && used > 0) ++saw_loaned_work;
        }
        for (std::size_t j = 0; j < jobs->size(); ++j) {
            const ClusterJob& spec = (*jobs)[j];
            const JobView& view = s.jobs[j];
            REQUIRE(workers[j] == view.workers);
            if (view.state == JobState::running) {
                REQUIRE(view.workers >= spec.min_workers);
                REQUIRE(view.workers <= (scales(policy) ? spec.max_workers : spec.min_workers));
                if (view.workers > spec.min_workers) ++saw_extra_workers;
            } else {
                REQUIRE(view.workers == 0);
            }
            const bool submitted =
                view.state == JobState::waiting || view.state == JobState::running;
            if (submitted && spec.submit_s > s.time_s)
                FAIL("job " << j << " seen before its submission");
        }
    }
};

}  // namespace

TEST_CASE("cluster-sim: bookkeeping at every event, every job finishes once, under every policy",
          "[cluster][sim]") {
    ClusterGenOptions gen;
    gen.seed = 5;
    gen.days = 2;
    gen.jobs_per_day = 300;
    const std::vector<ClusterJob> jobs = generate_cluster_jobs(gen);
    const std::vector<LoadPoint> load = generate_inference_load(gen);
    const auto curves = read_scaling_curves(kPhilly, jobs);
    REQUIRE(jobs.size() > 300);

    for (ClusterPolicy policy : kClusterPolicies) {
        INFO("policy " << cluster_policy_name(policy));
        Bookkeeper check{&jobs, policy};
        const ClusterResult r =
            simulate_cluster(jobs, load, curves, policy, small_cluster(6, 6), std::ref(check));
        CHECK(check.events == r.metrics.events);
        CHECK(check.events > jobs.size());
        REQUIRE(r.jobs.size() == jobs.size());
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            const JobOutcome& o = r.jobs[j];
            if (o.rejected) {
                CHECK(o.finishes == 0);
                CHECK(jobs[j].min_workers * jobs[j].gpus_per_worker > 6 * 8);
                continue;
            }
            CHECK(o.finishes == 1);
            CHECK(o.first_start_s >= jobs[j].submit_s);
            CHECK(o.queue_s >= 0);
            CHECK(o.finish_s > o.first_start_s);
            // Never faster than the job's most workers could make it, never before its queuing
            // ends.
            CHECK(o.finish_s - jobs[j].submit_s >= o.queue_s);
        }
        CHECK(r.metrics.jobs + r.metrics.rejected == jobs.size());
        CHECK(r.metrics.gpu_usage > 0);
        CHECK(r.metrics.gpu_usage <= 1);
        CHECK(r.metrics.training_pool_usage <= 1);
        CHECK(r.metrics.inference_pool_usage <= 1);
        if (loans(policy)) {
            CHECK(r.metrics.loans > 0);
            CHECK(r.metrics.reclaims > 0);
            CHECK(check.saw_loaned_work > 0);
        } else {
            CHECK(r.metrics.loans == 0);
            CHECK(r.metrics.preemptions == 0);
        }
        if (scales(policy)) CHECK(check.saw_extra_workers > 0);
        if (policy == ClusterPolicy::aryl) CHECK(r.metrics.preemptions + r.metrics.shrinks > 0);
    }
}

TEST_CASE("cluster-sim: the same input gives the same result", "[cluster][sim]") {
    ClusterGenOptions gen;
    gen.days = 1;
    gen.jobs_per_day = 200;
    const auto jobs = generate_cluster_jobs(gen);
    const auto load = generate_inference_load(gen);
    const auto curves = read_scaling_curves(kPhilly, jobs);
    const auto a = simulate_cluster(jobs, load, curves, ClusterPolicy::aryl, small_cluster(4, 4));
    const auto b = simulate_cluster(jobs, load, curves, ClusterPolicy::aryl, small_cluster(4, 4));
    ClusterReport ra, rb;
    ra.results = {a};
    rb.results = {b};
    CHECK(cluster_report_json(ra).dump() == cluster_report_json(rb).dump());
}

TEST_CASE("cluster-sim: hand-made cases with known answers", "[cluster][sim]") {
    const std::vector<std::pair<std::string, phasescale::policy::ScalingCurve>> no_curves;

    SECTION("a lone job runs at once; an elastic one on a linear curve doubles its speed") {
        const std::vector<ClusterJob> jobs = {job("a", 10, 2, 2, 4, 1000)};
        const auto base =
            simulate_cluster(jobs, {}, no_curves, ClusterPolicy::baseline, small_cluster(1, 0));
        CHECK(base.jobs[0].queue_s == 0);
        CHECK(base.jobs[0].finish_s == Approx(1010));
        const auto elastic =
            simulate_cluster(jobs, {}, no_curves, ClusterPolicy::elastic, small_cluster(1, 0));
        CHECK(elastic.jobs[0].finish_s == Approx(510));
    }

    SECTION("base demands before extra workers: an arrival takes GPUs back from an elastic job") {
        // a: 4..8 workers, 800 s at 4 (400 s at 8); b arrives at 100 and needs 4 GPUs.
        const std::vector<ClusterJob> jobs = {job("a", 0, 1, 4, 8, 800),
                                              job("b", 100, 1, 4, 4, 100)};
        const auto r =
            simulate_cluster(jobs, {}, no_curves, ClusterPolicy::elastic, small_cluster(1, 0));
        CHECK(r.jobs[1].queue_s == 0);
        CHECK(r.jobs[1].finish_s == Approx(200));
        // a: 100 s at 8 workers (200 s of work), 100 s at 4 (100 s), then 500 s left at 8 workers:
        // 250 s.
        CHECK(r.jobs[0].finish_s == Approx(450));
    }

    SECTION("shortest remaining time first, and backfilling past a job that does not fit") {
        // The pool is full until 100; then d, the shortest, runs first, and c and b after it.
        const std::vector<ClusterJob> jobs = {job("a", 0, 1, 8, 8, 100), job("b", 1, 1, 4, 4, 300),
                                              job("c", 2, 1, 4, 4, 50), job("d", 3, 1, 8, 8, 10)};
        const auto r =
            simulate_cluster(jobs, {}, no_curves, ClusterPolicy::baseline, small_cluster(1, 0));
        CHECK(r.jobs[3].first_start_s == Approx(100));  // d: 10 s, the shortest, goes first
        CHECK(r.jobs[2].first_start_s == Approx(110));
        CHECK(r.jobs[1].first_start_s == Approx(110));
        CHECK(r.metrics.avg_queue_s == Approx((0 + 109 + 108 + 97) / 4.0));
    }

    SECTION(
        "loaning: a job runs on a loaned server at the loaned speed, and is preempted by a "
        "reclaim") {
        // One training and one inference server; inference idle until 50 s, then needs its server.
        const std::vector<ClusterJob> jobs = {job("a", 0, 8, 1, 1, 100), job("b", 0, 8, 1, 1, 200)};
        const std::vector<LoadPoint> idle = {{0, 0}};
        const std::vector<LoadPoint> busy_at_50 = {{0, 0}, {50, 1}};
        ClusterOptions o = small_cluster(1, 1);
        o.loaned_speed = 0.5;

        const auto base = simulate_cluster(jobs, idle, no_curves, ClusterPolicy::baseline, o);
        CHECK(base.jobs[1].first_start_s == Approx(100));
        CHECK(base.metrics.loans == 0);

        const auto loaned = simulate_cluster(jobs, idle, no_curves, ClusterPolicy::loan, o);
        CHECK(loaned.jobs[1].first_start_s == Approx(0));
        CHECK(loaned.jobs[1].finish_s == Approx(400));  // 200 s of work at half speed
        CHECK(loaned.metrics.loans == 1);

        const auto reclaimed =
            simulate_cluster(jobs, busy_at_50, no_curves, ClusterPolicy::loan, o);
        // b did 25 s of work by 50 s, waits until a ends at 100, then 175 s on the training server.
        CHECK(reclaimed.jobs[1].preemptions == 1);
        CHECK(reclaimed.metrics.preemptions == 1);
        CHECK(reclaimed.metrics.reclaims == 1);
        CHECK(reclaimed.jobs[1].queue_s == Approx(50));
        CHECK(reclaimed.jobs[1].finish_s == Approx(275));
    }

    SECTION("a reclaim shrinks an elastic job instead of preempting it") {
        // a: 1..2 workers of 8 GPUs; its extra worker sits on the loaned server until 50 s.
        const std::vector<ClusterJob> jobs = {job("a", 0, 8, 1, 2, 400)};
        ClusterOptions o = small_cluster(1, 1);
        o.loaned_speed = 1;
        const auto r = simulate_cluster(jobs, {{0, 0}, {50, 1}}, no_curves, ClusterPolicy::aryl, o);
        CHECK(r.metrics.preemptions == 0);
        CHECK(r.metrics.shrinks == 1);
        CHECK(r.jobs[0].finish_s == Approx(50 + 300));  // 100 s of work in 50 s, then 300 s alone
    }

    SECTION("a job larger than the training pool is left out") {
        const std::vector<ClusterJob> jobs = {job("big", 0, 8, 2, 2, 10),
                                              job("ok", 0, 8, 1, 1, 10)};
        const auto r =
            simulate_cluster(jobs, {}, no_curves, ClusterPolicy::aryl, small_cluster(1, 4));
        CHECK(r.jobs[0].rejected);
        CHECK(r.metrics.rejected == 1);
        CHECK(r.jobs[1].finishes == 1);
    }

    SECTION("bad input is refused") {
        CHECK_THROWS_AS(simulate_cluster({job("x", 0, 1, 1, 1, 10, "nope")}, {}, no_curves,
                                         ClusterPolicy::baseline, small_cluster(1, 0)),
                        std::invalid_argument);
        CHECK_THROWS_AS(simulate_cluster({job("x", 0, 1, 2, 1, 10)}, {}, no_curves,
                                         ClusterPolicy::baseline, small_cluster(1, 0)),
                        std::invalid_argument);
        CHECK_THROWS_AS(
            simulate_cluster({}, {}, no_curves, ClusterPolicy::baseline, small_cluster(0, 0)),
            std::invalid_argument);
    }
}

TEST_CASE("cluster-sim: greedy knapsack runs and keeps the bookkeeping", "[cluster][sim]") {
    ClusterGenOptions gen;
    gen.days = 1;
    gen.jobs_per_day = 300;
    const auto jobs = generate_cluster_jobs(gen);
    const auto load = generate_inference_load(gen);
    ClusterOptions o = small_cluster(5, 5);
    o.greedy_knapsack = true;
    Bookkeeper check{&jobs, ClusterPolicy::aryl};
    const auto r = simulate_cluster(jobs, load, read_scaling_curves(kPhilly, jobs),
                                    ClusterPolicy::aryl, o, std::ref(check));
    for (const auto& outcome : r.jobs) CHECK(outcome.finishes == (outcome.rejected ? 0 : 1));
}

TEST_CASE("cluster trace: CSVs round-trip, errors name file, line and column", "[cluster][trace]") {
    TempDir dir;
    ClusterGenOptions gen;
    gen.seed = 9;
    gen.days = 1;
    const auto jobs = generate_cluster_jobs(gen);
    std::ostringstream csv;
    write_cluster_jobs(csv, jobs);
    const auto back = read_cluster_jobs(dir.write("jobs.csv", csv.str()));
    REQUIRE(back.size() == jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        CHECK(back[i].id == jobs[i].id);
        CHECK(back[i].submit_s == jobs[i].submit_s);
        CHECK(back[i].min_workers == jobs[i].min_workers);
        CHECK(back[i].max_workers == jobs[i].max_workers);
        CHECK(back[i].duration_s == jobs[i].duration_s);
        CHECK(back[i].curve == jobs[i].curve);
    }
    const auto load = generate_inference_load(gen);
    std::ostringstream load_csv;
    write_inference_load(load_csv, load);
    CHECK(read_inference_load(dir.write("load.csv", load_csv.str())).size() == load.size());

    const std::string header =
        "id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n";
    auto message = [&](const std::string& text) {
        try {
            read_cluster_jobs(dir.write("bad.csv", text));
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(message(header + "a,0,1,1,1,10,0,linear\nb,0,1,2,1,10,1,bert\n"),
               Catch::Contains("bad.csv:3: column 5 (max_workers)"));
    CHECK_THAT(message(header + "a,zero,1,1,1,10,0,linear\n"),
               Catch::Contains("bad.csv:2: column 2 (submit_s): 'zero' is not a number"));
    CHECK_THAT(message(header + "a,0,1,1,2,10,0,linear\n"), Catch::Contains("inelastic"));
    CHECK_THAT(message("id,submit_s\n"), Catch::Contains("no column 'gpus_per_worker'"));
    CHECK_THAT(message(header + "a,0,1\n"), Catch::Contains("missing field"));
    CHECK_THROWS_WITH(read_inference_load(dir.write("l.csv", "time_s,load\n0,0.5\n10,1.5\n")),
                      Catch::Contains("l.csv:3: column 2 (load): must be in [0, 1]"));
    CHECK_THROWS_WITH(read_cluster_jobs(dir / "missing.csv"), Catch::Contains("cannot open"));
}

TEST_CASE("cluster trace: the generator is deterministic, heavy-tailed and diurnal",
          "[cluster][trace]") {
    ClusterGenOptions gen;
    gen.seed = 3;
    gen.days = 4;
    std::ostringstream a, b, c;
    write_cluster_jobs(a, generate_cluster_jobs(gen));
    write_cluster_jobs(b, generate_cluster_jobs(gen));
    gen.seed = 4;
    write_cluster_jobs(c, generate_cluster_jobs(gen));
    CHECK(a.str() == b.str());
    CHECK(a.str() != c.str());

    gen.seed = 3;
    const auto jobs = generate_cluster_jobs(gen);
    std::vector<double> durations;
    std::size_t elastic = 0, multi = 0;
    for (const auto& j : jobs) {
        durations.push_back(j.duration_s);
        elastic += j.elastic();
        multi += j.min_workers * j.gpus_per_worker > 1;
        if (j.elastic()) CHECK(j.max_workers == 2 * j.min_workers);
    }
    CHECK(jobs.size() == Approx(4 * 400).epsilon(0.15));
    CHECK(static_cast<double>(elastic) / jobs.size() == Approx(0.5).margin(0.06));
    CHECK(multi > 0);
    // Heavy tail: the mean well above the median, the p99 far above it.
    const double median = nearest_rank(durations, 0.5);
    CHECK(nearest_rank(durations, 0.99) > 20 * median);

    const auto load = generate_inference_load(gen);
    double day = 0, night = 0;
    for (const auto& p : load) {
        const double hour = std::fmod(p.time_s / 3600, 24);
        if (hour >= 12 && hour < 16) day += p.load;
        if (hour >= 0 && hour < 4) night += p.load;
        CHECK(p.load >= 0);
        CHECK(p.load <= 1);
    }
    CHECK(day > 1.5 * night);
}

TEST_CASE("cluster trace: a Philly window and the measured scaling curves", "[cluster][trace]") {
    PhillyWindow w;
    w.cluster = "6214e9";
    w.from = "2017-10-02";
    w.days = 1;
    const auto jobs = read_philly_jobs(kPhilly + "philly-jobs.csv", w);
    REQUIRE(jobs.size() > 100);
    std::size_t elastic = 0;
    for (const auto& j : jobs) {
        CHECK(j.submit_s >= 0);
        CHECK(j.submit_s < 86400);
        CHECK(j.gpus_per_worker == 1);
        elastic += j.elastic();
    }
    CHECK(static_cast<double>(elastic) / jobs.size() == Approx(0.5).margin(0.1));
    // The same seed, the same lot; another seed, another.
    CHECK(read_philly_jobs(kPhilly + "philly-jobs.csv", w)[7].curve == jobs[7].curve);
    w.from = "2017-13-01";
    CHECK_THROWS_WITH(read_philly_jobs(kPhilly + "philly-jobs.csv", w),
                      Catch::Contains("bad date"));
    w.from = "2017-02-31";  // no such day (timegm would make it March 3rd)
    CHECK_THROWS_WITH(read_philly_jobs(kPhilly + "philly-jobs.csv", w),
                      Catch::Contains("bad date"));

    for (const char* model : kCurveModels) {
        const auto curve = read_scaling_curve(kPhilly + "scalability-" + model + ".csv");
        INFO(model);
        REQUIRE(curve.points().size() >= 5);
        CHECK(curve.points().front().first == 6);
        // Sub-linear: 4x the GPUs never gives more than 4x the throughput, and never less than 1x.
        const double s = curve.speedup(6, 24);
        CHECK(s >= 1);
        CHECK(s <= 4 + 1e-9);
    }
    // A job's curve is in its own workers: base demand at the first measured point.
    const auto bert = read_scaling_curve(kPhilly + "scalability-bert.csv");
    const auto mine = job_curve(bert, 2);
    CHECK(mine.speedup(2, 4) == Approx(bert.speedup(6, 12)));
}

TEST_CASE("cluster-gen refuses settings that would loop forever or take gigabytes", "[cluster]") {
    const std::vector<std::function<void(ClusterGenOptions&)>> absurd = {
        [](ClusterGenOptions& o) { o.duration_sigma = 1e300; },
        [](ClusterGenOptions& o) {
            o.median_duration_s = 0.001;
            o.duration_sigma = 0;
        },  // rounds to 0 s
        [](ClusterGenOptions& o) { o.days = 1e9; },
        [](ClusterGenOptions& o) {
            o.days = 3650;
            o.jobs_per_day = 1e6;
        },
        [](ClusterGenOptions& o) { o.load_interval_s = 1e-300; },
        [](ClusterGenOptions& o) { o.max_duration_s = 1e308; },
    };
    for (const auto& change : absurd) {
        ClusterGenOptions o;
        change(o);
        CHECK_THROWS_AS(generate_cluster_jobs(o), std::invalid_argument);
    }
    // The widest allowed tail still ends: out-of-range draws are redrawn a bounded number of times.
    ClusterGenOptions wide;
    wide.days = 1;
    wide.jobs_per_day = 50;
    wide.duration_sigma = 10;
    wide.median_duration_s = 1;
    wide.max_duration_s = 1;
    for (const ClusterJob& j : generate_cluster_jobs(wide)) CHECK(j.duration_s == 1);
}

TEST_CASE("cluster trace: rows beyond any cluster are refused with file:line, quoted short",
          "[cluster][trace]") {
    TempDir dir;
    const std::string header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
    PhillyWindow w;
    w.cluster = "c";
    w.from = "2017-10-01";
    w.days = 30;
    auto error_of = [&](const std::string& row) {
        try {
            read_philly_jobs(
                dir.write("philly.csv", header + "2017-10-02 00:00:00,60,1,60,c\n" + row), w);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(error_of("2017-10-02 00:00:00,1e308,1,0,c\n"),
               Catch::Contains("philly.csv:3") && Catch::Contains("beyond any job"));
    CHECK_THAT(error_of("2017-10-02 00:00:00,60,1000000000,0,c\n"),
               Catch::Contains("philly.csv:3") && Catch::Contains("beyond any cluster"));
    CHECK_THAT(error_of("2017-02-31 00:00:00,60,1,60,c\n"),
               Catch::Contains("philly.csv:3") && Catch::Contains("not a date"));
    const std::string huge =
        error_of("2017-10-02 00:00:00," + std::string(100000, '9') + "x,1,0,c\n");
    CHECK(huge.size() < 300);

    const std::string jobs_header =
        "id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n";
    CHECK_THROWS_WITH(
        read_cluster_jobs(dir.write("jobs.csv", jobs_header + "a,0,1,1,1000000000,60,1,\n")),
        Catch::Contains("jobs.csv:2") && Catch::Contains("at most 100000"));
    CHECK_THROWS_WITH(
        read_cluster_jobs(dir.write("jobs.csv", jobs_header + "a,0,1,1,1,1e308,0,\n")),
        Catch::Contains("jobs.csv:2") && Catch::Contains("(0, 1e9]"));
}
