#include <phasescale/model/error.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/sim/experiment.hpp>
#include <phasescale/sim/report.hpp>

#include <catch2/catch.hpp>

#include <set>

#include "fixtures.hpp"

using namespace phasescale;
using namespace phasescale::sim;
using phasescale::testing::GiB;
using phasescale::testing::two_phase_model;

namespace {

// Alternating phases: CPU 0.5 (phase 0) then 1.5 (phase 1), memory following, with noise.
Container alternating(std::uint64_t seed, std::size_t samples = 120) {
    model::Random random(seed);
    Container c;
    c.id = "c" + std::to_string(seed);
    c.original = {4, 8 * GiB};
    c.features.resize(static_cast<Eigen::Index>(samples), 2);
    for (std::size_t t = 0; t < samples; ++t) {
        const bool busy = (t / 20) % 2 == 1;
        const double cpu = (busy ? 1.5 : 0.5) * (1 + 0.1 * random.normal());
        const double memory = (busy ? 3 : 1) * GiB * (1 + 0.02 * random.normal());
        c.timestamps.push_back(1000 + 15.0 * t);
        c.usage.push_back({cpu, memory});
        c.features(static_cast<Eigen::Index>(t), 0) = cpu;
        c.features(static_cast<Eigen::Index>(t), 1) = memory;
        c.known_phases.push_back(t == 0 ? -1 : busy);
    }
    return c;
}

model::Trace trace_of(const std::vector<Container>& containers) {
    model::Trace trace;
    trace.columns = {"cpu.usage.cores", "mem.working.set", "cpu.num.cores", "mem.limit"};
    for (const Container& c : containers) {
        model::Execution e;
        e.id = c.id;
        e.source = "test";
        e.timestamps = c.timestamps;
        e.values.resize(static_cast<Eigen::Index>(c.usage.size()), 4);
        for (std::size_t t = 0; t < c.usage.size(); ++t) {
            e.values.row(static_cast<Eigen::Index>(t)) << c.usage[t].cpu, c.usage[t].memory,
                c.original.cpu, c.original.memory;
        }
        trace.executions.push_back(std::move(e));
    }
    return trace;
}

}  // namespace

TEST_CASE("replay bookkeeping: integrals, fulfilment, OOM events, resizes", "[sim]") {
    Container c;
    c.timestamps = {0, 10, 30, 40};
    c.usage = {{1, 1 * GiB}, {3, 1 * GiB}, {1, 3 * GiB}, {1, 1 * GiB}};
    c.original = {2, 2 * GiB};
    policy::StaticRecommender fixed(c.original, {});
    const Replay r = replay(c, fixed, true, {});
    // Durations 10, 20, 10 and 10 (the last repeats the one before).
    CHECK(sample_durations(c.timestamps) == std::vector<double>{10, 20, 10, 10});
    CHECK(r.score.cpu.allocated == Approx(2 * 50));
    CHECK(r.score.cpu.used == Approx(1 * 10 + 3 * 20 + 1 * 10 + 1 * 10));
    CHECK(r.score.cpu.shortfall == Approx(1 * 20));
    CHECK(r.score.cpu.fulfilment() == Approx(0.75));
    CHECK(r.score.memory.shortfall == Approx(1 * GiB * 10));
    CHECK(r.score.oom_events == 1);
    CHECK(r.score.oom_kills == 1);
    CHECK(r.oom_kills == std::vector<std::size_t>{2});
    CHECK(r.score.jobs == 1);
    CHECK(r.score.jobs_oom_killed == 1);
    CHECK(r.score.cpu.over_limit == 1);  // 3 cores against a limit of 2: throttled
    CHECK(r.score.seconds == Approx(50));
    CHECK(r.score.resizes == 0);
    REQUIRE(r.allocations.size() == 4);

    // A window of one sample follows usage one sample late: resizes whenever usage changes. On
    // KWOK-like nodes (no cgroups) it sees the 3 cores wanted above the limit of 1.
    policy::WindowOptions w;
    w.samples = 1;
    policy::ActuationOptions uncapped;
    uncapped.cpu_capped_at_limit = false;
    policy::WindowRecommender follow(w);
    const Replay f = replay(c, follow, true, uncapped);
    CHECK(f.allocations[0].request.cpu == 2);  // the original allocation until the first decision
    CHECK(f.allocations[1].request.cpu == 1);
    CHECK(f.allocations[2].request.cpu == 3);
    CHECK(f.allocations[3].request.cpu == 1);
    CHECK(f.score.resizes == 3);
    // As the kubelet runs it, usage stops at the limit: the window sees 1 core and stays there,
    // and the 2 cores more that were wanted are scored as unmet.
    policy::WindowRecommender capped(w);
    const Replay k = replay(c, capped, true, {});
    CHECK(k.allocations[2].request.cpu == 1);
    CHECK(k.allocations[3].request.cpu == 1);
    CHECK(k.score.resizes == 2);  // down to 1 core and 1 GiB, then up to 3 GiB
    CHECK(k.score.cpu.used == Approx(r.score.cpu.used));  // scored on demand
    CHECK(k.score.cpu.shortfall == Approx(2 * 20));
}

TEST_CASE("a replay records the requests the policy last asked for, beside those in force",
          "[sim]") {
    Container c;
    c.timestamps = {0, 10, 20, 30};
    c.usage = {{1, 1 * GiB}, {1, 1 * GiB}, {1, 1 * GiB}, {1, 1 * GiB}};
    c.original = {2, 2 * GiB};
    policy::StaticRecommender smaller({1.5, 1.5 * GiB}, {});
    // The cut goes through one sample after it is asked for (the delay of 1).
    const Replay through = replay(c, smaller, true, {});
    REQUIRE(through.asked.size() == c.usage.size());
    CHECK(through.asked[0].cpu == 2);  // the requests it started with, before it asks
    CHECK(through.asked[0].memory == 2 * GiB);
    for (std::size_t t = 1; t < c.usage.size(); ++t) {
        CHECK(through.asked[t].memory == 1.5 * GiB);
        CHECK(through.allocations[t].request.memory == 1.5 * GiB);
    }
    // A cut of 25% where minChange asks for 50% is asked for at every sample, never in force.
    policy::ActuationOptions strict;
    strict.min_change = 0.5;
    const Replay held = replay(c, smaller, true, strict);
    REQUIRE(held.asked.size() == c.usage.size());
    for (std::size_t t = 1; t < c.usage.size(); ++t) {
        CHECK(held.asked[t].cpu == 1.5);
        CHECK(held.asked[t].memory == 1.5 * GiB);
        CHECK(held.allocations[t].request.memory == 2 * GiB);
    }
}

TEST_CASE("a replayed policy observes CPU usage capped at the limit, and the throttling", "[sim]") {
    struct Recording : policy::Recommender {
        std::vector<policy::Sample> seen;
        std::vector<std::vector<double>> features;  // copied: a sample's may not outlive it
        void observe(const policy::Sample& s) override {
            seen.push_back(s);
            features.emplace_back(s.features, s.features + 2);
        }
        std::optional<policy::Allocation> recommend(const policy::Sample*) override {
            return std::nullopt;
        }
    };
    Container c;
    c.timestamps = {0, 10, 20};
    c.usage = {{1, 1 * GiB}, {3, 1 * GiB}, {2, 1 * GiB}};
    c.original = {2, 2 * GiB};
    c.features.resize(3, 2);
    c.features << 1, 0.5, 3, 0.5, 2, 0.5;  // the model's features: CPU, and another
    c.cpu_feature = 0;
    Recording capped;
    replay(c, capped, true, {});
    REQUIRE(capped.seen.size() == 3);
    CHECK(capped.seen[0].usage.cpu == 1);
    CHECK(capped.seen[0].cpu_throttled == 0);
    CHECK(capped.seen[0].cpu_throttled_cores == 0);  // measured, none
    CHECK(capped.seen[1].usage.cpu == 2);            // 3 wanted, 2 allowed
    CHECK(capped.seen[1].cpu_throttled == 1);
    CHECK(capped.seen[1].cpu_throttled_cores == 1);  // the core it wanted beyond the limit
    CHECK(capped.seen[2].usage.cpu == 2);            // at the limit, not above it
    CHECK(capped.seen[2].cpu_throttled == 0);
    CHECK(capped.seen[1].usage.memory == 1 * GiB);
    CHECK(capped.features[1] == std::vector<double>{2, 0.5});  // the CPU feature capped too
    CHECK(capped.features[2] == std::vector<double>{2, 0.5});
    policy::ActuationOptions kwok;
    kwok.cpu_capped_at_limit = false;
    Recording uncapped;
    replay(c, uncapped, true, kwok);
    CHECK(uncapped.seen[1].usage.cpu == 3);
    CHECK(uncapped.seen[1].cpu_throttled == 0);
    CHECK(uncapped.features[1] == std::vector<double>{3, 0.5});
}

TEST_CASE("replay at the operator's tick: one observation per tick, every sample scored", "[sim]") {
    struct Recording : policy::Recommender {
        std::vector<policy::Sample> seen;
        std::vector<double> cpu_feature;  // copied: a sample's features may not outlive it
        void observe(const policy::Sample& s) override {
            seen.push_back(s);
            cpu_feature.push_back(s.features[0]);
        }
        std::optional<policy::Allocation> recommend(const policy::Sample*) override {
            return policy::Allocation{{2, 1.5 * GiB}, {2, 1.5 * GiB}};
        }
    };
    Container c;
    c.original = {2, 2 * GiB};
    for (int t = 0; t <= 40; t += 5) {
        c.timestamps.push_back(t);
        // 3 cores wanted at 10 s (above the limit of 2), 3 GiB between two ticks at 20 s.
        c.usage.push_back({t == 10 ? 3.0 : 1.0, (t == 20 ? 3 : 1) * GiB});
    }
    c.features.resize(static_cast<Eigen::Index>(c.usage.size()), 1);
    for (std::size_t t = 0; t < c.usage.size(); ++t)
        c.features(static_cast<Eigen::Index>(t), 0) = c.usage[t].cpu;
    c.cpu_feature = 0;
    policy::ActuationOptions every_15s;
    every_15s.tick_s = 15;
    every_15s.min_change = 0;
    Recording policy;
    const Replay r = replay(c, policy, true, every_15s);

    // Observed at 0, 15 and 30 s: CPU usage (capped at the limit) and throttling averaged over
    // the samples since the tick before, memory at the tick, the kill at 20 s seen at 30 s.
    REQUIRE(policy.seen.size() == 3);
    CHECK(policy.seen[0].timestamp == 0);
    CHECK(policy.seen[1].timestamp == 15);
    CHECK(policy.seen[2].timestamp == 30);
    CHECK(policy.seen[1].usage.cpu == Approx((1 + 2 + 1) / 3.0));
    CHECK(policy.seen[1].cpu_throttled == Approx(1 / 3.0));
    CHECK(policy.seen[1].cpu_throttled_cores == Approx(1 / 3.0));  // 1 core for a third of it
    CHECK(policy.cpu_feature[1] == Approx((1 + 2 + 1) / 3.0));     // the model's CPU feature alike
    CHECK_FALSE(policy.seen[1].oom_killed);
    CHECK(policy.seen[2].oom_killed);
    CHECK(policy.seen[2].usage.memory == 1 * GiB);
    CHECK(policy.seen[2].cpu_throttled == 0);

    // Every sample is scored: the spike the policy never saw is a kill at 20 s.
    CHECK(r.oom_kills == std::vector<std::size_t>{4});
    CHECK(r.score.memory.samples == c.usage.size());
    // Decided at the first tick, in force from the next sample on (the delay of 1).
    CHECK(r.allocations[0].request.memory == 2 * GiB);
    CHECK(r.allocations[1].request.memory == 1.5 * GiB);
    CHECK(r.score.resizes == 1);

    // Without a tick, every sample is observed.
    Recording every_sample;
    replay(c, every_sample, true, {});
    CHECK(every_sample.seen.size() == c.usage.size());
}

TEST_CASE("replay at a tick: CPU averaged over the rate window, throttling under the new limit",
          "[sim]") {
    // Asks for the 2 cores the container starts with, then from the tick at 20 s for `cpu`.
    struct Recording : policy::Recommender {
        double cpu = 2.5;
        std::vector<policy::Sample> seen;
        void observe(const policy::Sample& s) override { seen.push_back(s); }
        std::optional<policy::Allocation> recommend(const policy::Sample*) override {
            const double asked = seen.back().timestamp >= 20 ? cpu : 2;
            return policy::Allocation{{asked, 1 * GiB}, {asked, 1 * GiB}};
        }
    };
    // `wanted` cores throughout, every 5 s.
    const auto wanting = [](double wanted) {
        Container c;
        c.original = {2, 1 * GiB};
        for (int t = 0; t <= 60; t += 5) {
            c.timestamps.push_back(t);
            c.usage.push_back({wanted, 0.5 * GiB});
        }
        return c;
    };
    policy::ActuationOptions operator_like;
    operator_like.tick_s = 10;
    operator_like.rate_window_s = 20;
    operator_like.min_change = 0;

    // 2.2 cores: the raise to 2.5, in force from 25 s, suffices.
    Recording enough;
    replay(wanting(2.2), enough, true, operator_like);
    REQUIRE(enough.seen.size() == 7);  // at 0, 10, ..., 60 s
    CHECK(enough.seen[2].cpu_throttled == 1);
    // At 30 s the window holds 15 to 30 s: 2 cores (throttled), then 2.2 under 2.5.
    CHECK(enough.seen[3].usage.cpu == Approx((2 + 2 + 2.2 + 2.2) / 4));
    // Half the window throttled, but under the old limit: not counted again.
    CHECK(enough.seen[3].cpu_throttled == 0);

    // 3 cores: at 30 s its rate holds the old limit's samples too, and its share is not counted
    // (its usage, 2.25 cores, short of 95% of 2.5); at 40 s the rate is the new limit's alone,
    // used up: its share counts, though the operator would find its scrapes anywhere within
    // max(4 x 20, 10) s.
    Recording short_of_it;
    replay(wanting(3), short_of_it, true, operator_like);
    REQUIRE(short_of_it.seen.size() == 7);
    CHECK(short_of_it.seen[3].usage.cpu == Approx((2 + 2 + 2.5 + 2.5) / 4));
    CHECK(short_of_it.seen[3].cpu_throttled == 0);
    CHECK(short_of_it.seen[4].usage.cpu == Approx(2.5));
    CHECK(short_of_it.seen[4].cpu_throttled == 1);

    // A cut: what was throttled under the higher limit is throttled under the lower one too.
    Recording cut;
    cut.cpu = 1.5;
    replay(wanting(3), cut, true, operator_like);
    REQUIRE(cut.seen.size() == 7);
    CHECK(cut.seen[3].cpu_throttled == 1);
    CHECK(cut.seen[3].usage.cpu == Approx((2 + 2 + 1.5 + 1.5) / 4));

    // A window shorter than the tick (the operator's irate() over the latest scrape, where a tick
    // spans several) sees only the tick's end: 0.1 x t cores wanted, 10 asked from 20 s.
    Container rising = wanting(0);
    for (std::size_t i = 0; i < rising.usage.size(); ++i)
        rising.usage[i].cpu = 0.1 * rising.timestamps[i];
    Recording raised;
    raised.cpu = 10;
    policy::ActuationOptions one_scrape = operator_like;
    one_scrape.rate_window_s = 5;
    replay(rising, raised, true, one_scrape);
    REQUIRE(raised.seen.size() == 7);
    CHECK(raised.seen[1].usage.cpu == Approx(1));      // the sample at 10 s alone
    CHECK(raised.seen[4].usage.cpu == Approx(4));      // at 40 s, not (3.5 + 4) / 2
    CHECK(raised.seen[2].cpu_throttled == Approx(0));  // 2 cores at 20 s, under the limit of 2
}

TEST_CASE("a Scorer fed allocations made elsewhere scores them as replay scores a policy's",
          "[sim]") {
    const Container c = alternating(7);
    policy::WindowOptions w;
    w.samples = 4;
    policy::WindowRecommender window(w);
    const Replay live = replay(c, window, true, {});
    REQUIRE(live.score.resizes > 0);
    // The first allocation is where the container started, as replay's is the original.
    Scorer scorer(live.allocations.front());
    const std::vector<double> durations = sample_durations(c.timestamps);
    std::vector<std::size_t> kills;
    for (std::size_t t = 0; t < c.usage.size(); ++t)
        if (scorer.add(c.timestamps[t], c.usage[t], live.allocations[t], durations[t]))
            kills.push_back(t);
    const Score& s = scorer.score();
    CHECK(s.cpu.allocated == Approx(live.score.cpu.allocated));
    CHECK(s.memory.shortfall == Approx(live.score.memory.shortfall));
    CHECK(s.cpu.fulfilled == live.score.cpu.fulfilled);
    CHECK(s.oom_kills == live.score.oom_kills);
    CHECK(kills == live.oom_kills);
    CHECK(s.resizes == live.score.resizes);
}

TEST_CASE("replay: crossing the memory limit is an OOM kill, and so is each restart while over it",
          "[sim]") {
    Container c;
    c.timestamps = {0, 5, 10, 15, 20, 25};
    c.usage = {{1, 1 * GiB}, {1, 3 * GiB}, {1, 3 * GiB}, {1, 1 * GiB}, {1, 3 * GiB}, {1, 1 * GiB}};
    c.original = {2, 2 * GiB};
    policy::StaticRecommender fixed(c.original, {});
    const Replay r = replay(c, fixed, true, {});
    // Over at 5-10 (restart due at 15: none) and at 20.
    CHECK(r.score.oom_events == 3);
    CHECK(r.score.oom_kills == 2);
    CHECK(r.oom_kills == std::vector<std::size_t>{1, 4});
    CHECK(r.score.oom_kills_per_job() == 2);
    CHECK(r.score.jobs_oom_killed_share() == 1);

    // Over the limit for good from t = 0: killed at 0 and at the restarts after 10, 20, 40, 80,
    // 160, 300 and 300 s of back-off: 0, 10, 30, 70, 150, 310, 610, 910.
    Container starved;
    for (int t = 0; t <= 1000; t += 5) {
        starved.timestamps.push_back(t);
        starved.usage.push_back({1, 3 * GiB});
    }
    starved.original = {2, 2 * GiB};
    const Replay loop = replay(starved, fixed, true, {});
    std::vector<double> at;
    for (std::size_t i : loop.oom_kills) at.push_back(starved.timestamps[i]);
    CHECK(at == std::vector<double>{0, 10, 30, 70, 150, 310, 610, 910});
    CHECK(loop.score.jobs_oom_killed == 1);
}

TEST_CASE("causality: a later sample never changes an earlier allocation", "[sim]") {
    const model::PhaseModel m = two_phase_model();
    PolicySettings settings;
    settings.vpa.memory_interval_s = 300;
    settings.vpa.cpu_half_life_s = settings.vpa.memory_half_life_s = 600;
    PolicyFactory factory(m, settings);
    const Container warm = alternating(9);
    for (const std::string& name : kPolicies) {
        INFO(name);
        for (std::size_t k : {5u, 33u, 70u}) {
            const Container a = alternating(1);
            Container b = a;
            for (std::size_t t = k; t < b.usage.size(); ++t) {  // change sample k and all after it
                b.usage[t] = {b.usage[t].cpu * 3, b.usage[t].memory * 2};
                b.features(static_cast<Eigen::Index>(t), 0) *= 3;
                b.known_phases[t] = 1 - std::max(b.known_phases[t], 0);
            }
            const Replay ra = replay(a, *factory.make(name, a, {&warm}, {0.1, 0.1}),
                                     is_causal(name), settings.actuation);
            const Replay rb = replay(b, *factory.make(name, b, {&warm}, {0.1, 0.1}),
                                     is_causal(name), settings.actuation);
            // Causal policies: allocations up to and including sample k; the bounds: before k.
            const std::size_t same = is_causal(name) ? k + 1 : k;
            for (std::size_t t = 0; t < same; ++t) {
                CHECK(ra.allocations[t].request.cpu == rb.allocations[t].request.cpu);
                CHECK(ra.allocations[t].request.memory == rb.allocations[t].request.memory);
            }
            // And the change is seen afterwards (so the check above can fail).
            bool differs = false;
            for (std::size_t t = same; t < ra.allocations.size(); ++t)
                differs |= ra.allocations[t].request.cpu != rb.allocations[t].request.cpu ||
                           ra.allocations[t].request.memory != rb.allocations[t].request.memory;
            // static never resizes; vpa-updater leaves a young pod within its wide bounds.
            if (name != "static" && name != "vpa-updater") CHECK(differs);
        }
    }
}

TEST_CASE("calibration finds the smallest margin that reaches the target", "[sim]") {
    const model::PhaseModel m = two_phase_model();
    PolicySettings settings;
    PolicyFactory factory(m, settings);
    Container c;
    c.timestamps = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90};
    for (int i = 0; i < 10; ++i) c.usage.push_back({1.0 + 0.1 * i, (1.0 + 0.1 * i) * GiB});
    c.original = {4, 4 * GiB};
    auto none = [](const Container&) { return std::vector<const Container*>{}; };
    // Static at 4 cores covers a peak of 1.9 from a margin of 1.9 / 4 - 1 = -0.525; memory is
    // calibrated to no OOM kill: the same margin.
    const Calibration s =
        calibrate("static", {{&factory, {&c}}}, none, {0.95, 0}, settings.actuation);
    CHECK(s.margins.cpu == Approx(-0.525).margin(2e-4));
    CHECK(s.margins.cpu >= 1.9 / 4 - 1);
    CHECK(s.cpu_fulfilment >= 0.95);
    CHECK(s.margins.memory == Approx(-0.525).margin(2e-4));
    CHECK(s.oom_kills == 0);
    // At 80%, the static allocation may miss the two largest samples: 1.7 / 4 - 1.
    CHECK(calibrate("static", {{&factory, {&c}}}, none, {0.8, 0}, settings.actuation).margins.cpu ==
          Approx(1.7 / 4 - 1).margin(2e-4));
    // Memory peaks of 1.5, 1.8 and 1.9 GiB apart: a budget of one kill gives up the highest, two
    // the highest two.
    Container peaks = c;
    const std::vector<double> memory = {1, 1, 1.5, 1, 1, 1.8, 1, 1, 1.9, 1};
    for (std::size_t i = 0; i < memory.size(); ++i) peaks.usage[i] = {1, memory[i] * GiB};
    const Calibration one =
        calibrate("static", {{&factory, {&peaks}}}, none, {0.95, 1}, settings.actuation);
    CHECK(one.margins.memory == Approx(1.8 / 4 - 1).margin(2e-4));
    CHECK(one.oom_kills == 1);
    CHECK(calibrate("static", {{&factory, {&peaks}}}, none, {0.95, 2}, settings.actuation)
              .margins.memory == Approx(1.5 / 4 - 1).margin(2e-4));
    // Perfect needs no margin at all.
    const Calibration p =
        calibrate("perfect", {{&factory, {&c}}}, none, {0.95, 0}, settings.actuation);
    CHECK(p.margins.cpu == Approx(0).margin(2e-4));
    CHECK(p.margins.memory == Approx(0).margin(2e-4));
    // A floor on the margins (the operator's policy accepts none below 0).
    CHECK(calibrate("static", {{&factory, {&c}}}, none, {0.95, 0}, settings.actuation, 0.0)
              .margins.cpu == 0);
}

TEST_CASE("executions are split whole and seeded", "[sim]") {
    const std::vector<Fold> none = split_executions(5, 0, 0, 1);
    REQUIRE(none.size() == 1);
    CHECK(none[0].training.empty());
    CHECK(none[0].held_out.size() == 5);

    const std::vector<Fold> fraction = split_executions(10, 0.7, 0, 3);
    REQUIRE(fraction.size() == 1);
    CHECK(fraction[0].training.size() == 7);
    CHECK(fraction[0].held_out.size() == 3);
    CHECK(split_executions(10, 0.7, 0, 3)[0].held_out == fraction[0].held_out);

    const std::vector<Fold> folds = split_executions(10, 0, 3, 1);
    REQUIRE(folds.size() == 3);
    std::multiset<std::size_t> held;
    for (const Fold& f : folds) {
        held.insert(f.held_out.begin(), f.held_out.end());
        CHECK(f.training.size() + f.held_out.size() == 10);
    }
    CHECK(held.size() == 10);
    CHECK(std::set<std::size_t>(held.begin(), held.end()).size() == 10);
    CHECK_THROWS_AS(split_executions(1, 0.5, 0, 1), model::InputError);
    CHECK_THROWS_AS(split_executions(4, 0.5, 2, 1), model::InputError);
}

TEST_CASE("an experiment scores only held-out executions and reports every policy", "[sim]") {
    std::vector<Container> cs;
    for (std::uint64_t s = 1; s <= 6; ++s) cs.push_back(alternating(s));
    const model::Trace trace = trace_of(cs);
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    std::vector<std::vector<std::size_t>> training_seen;
    ExperimentOptions o;
    o.folds = 3;
    o.settings.vpa.memory_interval_s = 300;
    const Report r = run_experiment(
        trace,
        [&](const std::vector<std::size_t>& training) {
            training_seen.push_back(training);
            return model;
        },
        o);
    REQUIRE(training_seen.size() == 3);
    REQUIRE(r.containers.size() == 6);
    for (const ContainerResult& c : r.containers) {
        const std::vector<std::size_t>& training = training_seen[static_cast<std::size_t>(c.fold)];
        const std::size_t index = static_cast<std::size_t>(std::stoi(c.container.id.substr(1)) - 1);
        CHECK(std::find(training.begin(), training.end(), index) == training.end());
        CHECK(c.replays.size() == kPolicies.size());
    }
    for (const std::string& name : kPolicies) {
        INFO(name);
        const PolicyResult& p = r.results.at(name);
        CHECK(p.margins.size() == 3);
        CHECK(p.score.cpu.samples == 6 * 120);
        CHECK(p.tradeoff.size() == o.tradeoff_margins.size());
    }
    // The totals are the sum over containers.
    double allocated = 0;
    for (const ContainerResult& c : r.containers)
        allocated += c.replays.at("phase").score.cpu.allocated;
    CHECK(r.results.at("phase").score.cpu.allocated == Approx(allocated));
    // On this trace knowing the phases pays: phase allocates less CPU than vpa and window.
    CHECK(r.reduction("phase", "vpa", "cpu") > 0);
    CHECK(r.reduction("perfect", "phase", "cpu") > 0);

    const nlohmann::json j = report_json(r);
    CHECK(j["policies"]["phase"]["cpu"]["allocated"].get<double>() == Approx(allocated));
    CHECK(j["policies"]["phase"]["memory"].contains("oom_events"));
    CHECK(j["containers"].size() == 6);
    CHECK(j["settings"]["inner_folds"] == 5);
    const ContainerResult& first = r.containers.front();
    CHECK(j["containers"][0]["policies"]["phase"]["reduction"]["vpa"]["cpu"].get<double>() ==
          Approx(1 - first.replays.at("phase").score.cpu.allocated /
                         first.replays.at("vpa").score.cpu.allocated));
}

TEST_CASE("at equal risk the other policies are held to the risk the operator's policy reached",
          "[sim]") {
    std::vector<Container> cs;
    for (std::uint64_t s = 1; s <= 6; ++s) cs.push_back(alternating(s));
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    ExperimentOptions o;
    o.folds = 3;
    o.target_fulfilment = 0.6;
    o.policies = {"phase", "vpa", "vpa-updater", "window"};
    o.tradeoff_margins = {};
    const Report r = run_experiment(
        trace_of(cs), [&](const std::vector<std::size_t>&) { return model; }, o);
    const PolicyResult &phase = r.results.at("phase"), &vpa = r.results.at("vpa"),
                       &window = r.results.at("window");
    REQUIRE(phase.targets.size() == 3);
    REQUIRE(vpa.targets.size() == 3);
    CHECK(r.results.at("vpa-updater").targets.empty());  // never calibrated
    bool held_tighter = false;
    for (std::size_t f = 0; f < 3; ++f) {
        INFO("fold " << f);
        // phase is asked for the target itself; with margins >= 0 it may reach less risk, and
        // then the others are held to that.
        CHECK(phase.targets[f].cpu_fulfilment == 0.6);
        CHECK(vpa.targets[f].cpu_fulfilment >= 0.6);
        CHECK(vpa.targets[f].oom_kills <= phase.targets[f].oom_kills);
        CHECK(window.targets[f].cpu_fulfilment == vpa.targets[f].cpu_fulfilment);
        CHECK(window.targets[f].oom_kills == vpa.targets[f].oom_kills);
        held_tighter = held_tighter || vpa.targets[f].cpu_fulfilment > 0.6;
    }
    // On these alternating phases phase at a margin of 0 meets more than 60% of CPU demand.
    CHECK(held_tighter);
    const nlohmann::json j = report_json(r);
    CHECK(j["policies"]["vpa"]["calibration_targets_per_fold"][0]["cpu_fulfilment"] ==
          vpa.targets[0].cpu_fulfilment);
    CHECK(j["policies"]["vpa-updater"]["calibration_targets_per_fold"].empty());
}

TEST_CASE("at equal risk the operator's policy is calibrated on executions its model never saw",
          "[sim]") {
    std::vector<Container> cs;
    for (std::uint64_t s = 1; s <= 6; ++s) cs.push_back(alternating(s));
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    ExperimentOptions o;
    o.folds = 3;
    o.target_fulfilment = 0.6;
    o.policies = {"phase", "vpa"};
    o.tradeoff_margins = {};
    std::vector<std::vector<std::size_t>> asked;  // the training set of every model asked for
    const auto run = [&] {
        asked.clear();
        run_experiment(
            trace_of(cs),
            [&](const std::vector<std::size_t>& training) {
                asked.push_back(training);
                return model;
            },
            o);
    };
    run();
    // Per fold: its model (4 training executions), then one per inner fold (4, one held out each).
    REQUIRE(asked.size() == 3 * 5);
    for (std::size_t f = 0; f < 3; ++f) {
        INFO("fold " << f);
        const std::vector<std::size_t>& training = asked[f * 5];
        REQUIRE(training.size() == 4);
        std::multiset<std::size_t> left_out;
        for (std::size_t i = 1; i <= 4; ++i) {
            const std::vector<std::size_t>& inner = asked[f * 5 + i];
            CHECK(inner.size() == 3);
            for (std::size_t e : training)
                if (std::find(inner.begin(), inner.end(), e) == inner.end()) left_out.insert(e);
        }
        // Every training execution is left out of exactly one inner model.
        CHECK(left_out == std::multiset<std::size_t>(training.begin(), training.end()));
    }
    o.inner_folds = 0;  // calibrated on the fold's own model, which trained on them
    run();
    CHECK(asked.size() == 3);
    // Two executions, two folds: a single training execution, nothing to hold out; said so.
    o.inner_folds = 5;
    o.folds = 2;
    const std::vector<Container> two(cs.begin(), cs.begin() + 2);
    const Report pair = run_experiment(
        trace_of(two), [&](const std::vector<std::size_t>&) { return model; }, o);
    REQUIRE(pair.notes.size() == 2);
    CHECK_THAT(pair.notes[0], Catch::Contains("single training execution"));
    o.folds = 3;
    o.inner_folds = 5;
    o.target_fulfilment = 0;  // no calibration, no inner model
    run();
    CHECK(asked.size() == 3);
}
