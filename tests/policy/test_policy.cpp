#include <phasescale/model/error.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/phase.hpp>
#include <phasescale/policy/simple.hpp>
#include <phasescale/policy/vpa.hpp>

#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include <array>
#include <chrono>
#include <cmath>

using namespace phasescale;
using namespace phasescale::policy;

namespace {

using phasescale::testing::GiB;
using phasescale::testing::MiB;
using phasescale::testing::summary;
using phasescale::testing::two_phase_model;

ActuationOptions actuation(int delay, double min_change) {
    ActuationOptions o;
    o.delay = delay;
    o.min_change = min_change;
    return o;
}

Sample at(double t, double cpu, double memory, Amount allocated = {1, GiB}) {
    Sample s;
    s.timestamp = t;
    s.usage = {cpu, memory};
    s.allocated = allocated;
    return s;
}

// The sizing rules alone: no wait for a first resize, no bound per step (both tested on their own).
PhaseOptions sizing_only() {
    PhaseOptions o;
    o.first_resize_samples = 0;
    o.max_growth = 0;
    o.cpu_keep = 0;
    o.memory_min_headroom = 0;
    o.memory_spike_factor = 1;
    o.memory_next_step = 0;
    return o;
}

// Sized over a 60 s horizon without margins, from the container's own samples, with no look-ahead
// to the next phases.
PhaseOptions over_horizon() {
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.horizon_s = 60;
    o.adapt_samples = 1;
    o.likely_next = 1.1;
    return o;
}

struct Feed {
    PhaseRecommender& r;
    double t = 0;
    std::vector<double> features = {};
    std::optional<Allocation> operator()(double cpu, double memory, bool oom = false,
                                         Amount allocated = {1, GiB}) {
        Sample s = at(t += 15, cpu, memory, allocated);
        features = {cpu, memory};
        s.features = features.data();
        s.oom_killed = oom;
        r.observe(s);
        return r.recommend(nullptr);
    }
};

// Samples at a CPU limit (the request alike), throttled in a share of their CFS periods; returns
// the CPU recommended after each.
struct ThrottledFeed {
    double t = 0;
    double step = 15;  // seconds between samples
    std::vector<double> features = {};
    double throttled_cores = std::nan("");  // throttled CPU-seconds per second (NaN: unmeasured)
    double operator()(PhaseRecommender& r, double cpu, double limit, double throttled) {
        Sample s = at(t += step, cpu, 0.5 * GiB, {limit, GiB});
        s.limit = {limit, GiB};
        s.cpu_throttled = throttled;
        s.cpu_throttled_cores = throttled_cores;
        features = {cpu, 0.5 * GiB};
        s.features = features.data();
        r.observe(s);
        return r.recommend(nullptr).value_or(Allocation{}).request.cpu;
    }
};

}  // namespace

TEST_CASE("VPA buckets grow by 5% from 0.01 cores and 10 MB", "[policy][vpa]") {
    const ExponentialBuckets& cpu = vpa_cpu_buckets();
    CHECK(cpu.start(0) == 0);
    CHECK(cpu.start(1) == Approx(0.01));
    CHECK(cpu.start(2) == Approx(0.01 + 0.0105));
    CHECK(cpu.start(3) == Approx(0.01 + 0.0105 + 0.011025));
    CHECK(cpu.find(0.005) == 0);
    CHECK(cpu.find(0.015) == 1);
    CHECK(cpu.find(0.021) == 2);
    // 1000 cores is covered: the last bucket starts at or above it.
    CHECK(cpu.start(cpu.count() - 1) >= 1000);
    CHECK(cpu.start(cpu.count() - 2) < 1000);
    CHECK(vpa_memory_buckets().start(1) == Approx(1e7));
}

TEST_CASE("VPA histogram percentiles and decay match hand computation", "[policy][vpa]") {
    const ExponentialBuckets& b = vpa_cpu_buckets();
    DecayingHistogram h(&b, 3600);
    CHECK(h.empty());
    CHECK(h.percentile(0.9) == 0);
    // 1 core at t = 0 (weight 1), 2 cores one half-life later (weight 1 * 2^1 = 2).
    h.add(1.0, 1.0, 0);
    h.add(2.0, 1.0, 3600);
    CHECK(h.total_weight() == Approx(3));
    // Bucket of 1 core: floor(log(1 * 0.05 / 0.01 + 1) / log(1.05)) = floor(36.72) = 36; the
    // percentile is the end of the bucket: 0.01 * (1.05^37 - 1) / 0.05 = 1.0162 cores.
    CHECK(b.find(1.0) == 36);
    CHECK(h.percentile(0.3) == Approx(0.2 * (std::pow(1.05, 37) - 1)));
    // Cumulative weight reaches 0.5 * 3 only in the bucket of 2 cores (weight 2 there).
    CHECK(h.percentile(0.5) == Approx(b.start(b.find(2.0) + 1)));
    // Removing the later sample leaves the first alone.
    h.subtract(2.0, 1.0, 3600);
    CHECK(h.total_weight() == Approx(1));
    CHECK(h.percentile(0.99) == Approx(0.2 * (std::pow(1.05, 37) - 1)));
}

TEST_CASE("VPA histogram renormalises past 2^100 without changing relative weights",
          "[policy][vpa]") {
    const ExponentialBuckets& b = vpa_cpu_buckets();
    DecayingHistogram h(&b, 60);
    h.add(0.5, 1, 60 * 99.5);   // weight 2^99.5
    h.add(3.0, 1, 60 * 100.5);  // past 100 half-lives: the reference moves to 101 half-lives
    // Weights are now 2^-1.5 and 2^-0.5: small again, still 1 : 2.
    CHECK(h.total_weight() == Approx(std::exp2(-1.5) + std::exp2(-0.5)));
    CHECK(h.percentile(0.3) == Approx(b.start(b.find(0.5) + 1)));
    CHECK(h.percentile(0.34) == Approx(b.start(b.find(3.0) + 1)));
}

TEST_CASE(
    "VPA recommender: p90 of CPU (every sample weighs the same), p90 of memory peaks, margin, "
    "minimum",
    "[policy][vpa]") {
    VpaOptions o;
    o.memory_interval_s = 60;
    VpaRecommender vpa(o);
    // No data yet: no recommendation.
    CHECK(!vpa.recommend(nullptr));
    // Tiny usage: the minimum resources (25 millicores, 250 MiB).
    VpaRecommender idle(o);
    idle.observe(at(0, 0.001, 1024));
    CHECK(idle.recommend(nullptr)->request.cpu == Approx(0.025));
    CHECK(idle.recommend(nullptr)->request.memory == Approx(250 * MiB));
    Allocation a;
    // Ten CPU samples at 1 core and one at 4 cores; memory peaks per minute.
    for (int i = 0; i < 10; ++i) vpa.observe(at(i * 10, 1.0, 1 * GiB));
    vpa.observe(at(100, 4.0, 2 * GiB));
    a = *vpa.recommend(nullptr);
    const ExponentialBuckets& cpu = vpa_cpu_buckets();
    // In whole millicores at each step, as upstream's amounts are.
    CHECK(a.request.cpu ==
          Approx(std::trunc(std::trunc(cpu.start(cpu.find(1.0) + 1) * 1000) * 1.15) / 1000));
    CHECK(a.limit.cpu == a.request.cpu);
    // Peaks: 1 GiB in [0, 60), 1 GiB in [60, 120) raised to 2 GiB at t = 100: p90 is 2 GiB's
    // bucket.
    const ExponentialBuckets& mem = vpa_memory_buckets();
    CHECK(a.request.memory == Approx(mem.start(mem.find(2 * GiB) + 1) * 1.15));
}

TEST_CASE("VPA bumps memory after an OOM kill", "[policy][vpa]") {
    VpaOptions o;
    o.margins = {0, 0};
    VpaRecommender vpa(o);
    vpa.observe(at(0, 1, 1 * GiB, {1, 1 * GiB}));
    Sample s = at(10, 1, 1 * GiB, {1, 1 * GiB});
    s.oom_killed = true;
    vpa.observe(s);
    // needed = max(1 GiB + 100 MiB, 1.2 GiB) = 1.2 GiB replaces the interval's peak.
    const ExponentialBuckets& mem = vpa_memory_buckets();
    CHECK(vpa.recommend(nullptr)->request.memory == Approx(mem.start(mem.find(1.2 * GiB) + 1)));
}

TEST_CASE("VPA bounds: p50 and p95 widened by the history's confidence", "[policy][vpa]") {
    VpaRecommender vpa;
    vpa.observe(at(0, 1, 1 * GiB));
    // One sample, no history: the upper bound is upstream's cap, the lower bound the minimum.
    VpaRecommendation r = *vpa.recommendation();
    CHECK(r.upper_bound.cpu == Approx(1e11));
    CHECK(r.lower_bound.cpu == Approx(0.025));
    CHECK(r.lower_bound.memory == Approx(250 * MiB));
    // A day of samples a minute apart: confidence 1, upper x2, lower x(1.001)^-2.
    for (int i = 1; i <= 1440; ++i) vpa.observe(at(i * 60.0, 1, 1 * GiB));
    r = *vpa.recommendation();
    CHECK(r.upper_bound.cpu == Approx(r.target.cpu * 2).epsilon(0.01));
    CHECK(r.lower_bound.cpu == Approx(r.target.cpu / (1.001 * 1.001)).epsilon(0.01));
    CHECK(r.lower_bound.memory <= r.target.memory);
}

TEST_CASE("VPA: pods side by side keep their own memory peaks in one aggregate state",
          "[policy][vpa]") {
    // Two pods' samples interleaved in time: pod 0 peaks at 2 GiB, pod 1 at 4 GiB.
    const double usage[2][3] = {{1 * GiB, 2 * GiB, 1.5 * GiB}, {4 * GiB, 3 * GiB, 1 * GiB}};
    VpaOptions o;
    o.memory_percentile = 0.4;  // the lower of two peaks (of about equal weight)
    VpaRecommender side_by_side(o), one_after_other(o), one_container(o);
    for (int k = 0; k < 3; ++k)
        for (std::size_t pod = 0; pod < 2; ++pod) {
            side_by_side.select_container(pod);
            side_by_side.observe(at(10.0 * k + pod, 1, usage[pod][k]));
            one_container.observe(at(10.0 * k + pod, 1, usage[pod][k]));
        }
    for (std::size_t pod = 0; pod < 2; ++pod) {
        if (pod > 0) one_after_other.start_container();
        for (int k = 0; k < 3; ++k) one_after_other.observe(at(10.0 * k + pod, 1, usage[pod][k]));
    }
    const VpaRecommendation a = *side_by_side.recommendation(),
                            b = *one_after_other.recommendation(),
                            c = *one_container.recommendation();
    // Peaks {2, 4} GiB either way; one container mixing both pods has the single peak 4 GiB.
    const ExponentialBuckets& mem = vpa_memory_buckets();
    CHECK(a.target.memory == Approx(mem.start(mem.find(2 * GiB) + 1) * 1.15));
    CHECK(a.target.memory == b.target.memory);
    CHECK(a.upper_bound.memory == b.upper_bound.memory);
    CHECK(a.target.cpu == b.target.cpu);
    CHECK(c.target.memory == Approx(mem.start(mem.find(4 * GiB) + 1) * 1.15));
}

TEST_CASE("VPA updater: a young pod within its bounds is never updated", "[policy][vpa]") {
    VpaUpdater vpa;
    // Requests 2 cores / 4 GiB, usage 1 core / 1 GiB for 2 hours: the target is far below, but
    // the upper bound of a short history is far above.
    for (int i = 0; i < 720; ++i) {
        vpa.observe(at(i * 10.0, 1, 1 * GiB, {2, 4 * GiB}));
        CHECK(!vpa.recommend(nullptr));
    }
    CHECK(vpa.recommender().recommendation()->target.memory < 2 * GiB);
}

TEST_CASE("VPA updater: below the lower bound, updated on its next loop", "[policy][vpa]") {
    VpaUpdater vpa;
    std::vector<double> updated;
    for (int i = 0; i < 30; ++i) {
        const Amount request = updated.empty() ? Amount{0.1, 100 * MiB} : Amount{1.2, 1.2 * GiB};
        vpa.observe(at(i * 10.0, 1, 1 * GiB, request));
        if (const auto a = vpa.recommend(nullptr)) {
            updated.push_back(i * 10.0);
            CHECK(a->request.cpu > 1);
            CHECK(a->request.memory > 1 * GiB);
        }
    }
    // The first loop is 60 s after the pod started; then the request is within the bounds.
    CHECK(updated == std::vector<double>{60});
}

TEST_CASE("VPA updater: a quick OOM is answered on the next loop", "[policy][vpa]") {
    VpaUpdater vpa;
    vpa.observe(at(0, 1, 1 * GiB, {2, 4 * GiB}));
    CHECK(!vpa.recommend(nullptr));
    Sample killed = at(30, 1, 5 * GiB, {2, 4 * GiB});
    killed.oom_killed = true;  // 30 s after the start: a quick OOM
    vpa.observe(killed);
    CHECK(!vpa.recommend(nullptr));  // not yet the loop
    vpa.observe(at(60, 1, 1 * GiB, {2, 4 * GiB}));
    const auto a = vpa.recommend(nullptr);
    REQUIRE(a);
    CHECK(a->request.memory > 4 * GiB);  // the bumped peak: at least 4 GiB x 1.2
}

TEST_CASE("VPA updater: after 12 h, a 10% difference from the target is enough", "[policy][vpa]") {
    VpaUpdaterOptions u;
    u.pod_lifetime_threshold_s = 600;  // 10 min instead of 12 h, for a short test
    VpaUpdater vpa({}, u);
    std::vector<double> updated;
    Amount request{2, 4 * GiB};
    for (int i = 0; i < 120; ++i) {
        vpa.observe(at(i * 10.0, 1, 1 * GiB, request));
        if (const auto a = vpa.recommend(nullptr)) {
            updated.push_back(i * 10.0);
            request = a->request;
        }
    }
    // Not before the pod is 10 min old; then once, to the target, which stays within 10%.
    REQUIRE(updated.size() == 1);
    CHECK(updated[0] == 600);
    CHECK(request.memory < 2 * GiB);
}

TEST_CASE("window: a quantile of the last W samples times (1 + margin)", "[policy]") {
    WindowOptions o;
    o.samples = 3;
    o.margins = {0.1, 0.2};
    WindowRecommender w(o);
    for (double cpu : {5.0, 1.0, 2.0, 3.0}) w.observe(at(0, cpu, cpu * GiB));
    // The 5 left the window: max(1, 2, 3) = 3.
    CHECK(w.recommend(nullptr)->request.cpu == Approx(3.3));
    CHECK(w.recommend(nullptr)->request.memory == Approx(3.6 * GiB));
    o.quantile = 0.5;
    WindowRecommender median(o);
    for (double cpu : {1.0, 2.0, 3.0}) median.observe(at(0, cpu, GiB));
    CHECK(median.recommend(nullptr)->request.cpu == Approx(2.2));
}

TEST_CASE("static and perfect", "[policy]") {
    StaticRecommender s({4, 8 * GiB}, {0.5, -0.5});
    CHECK(s.recommend(nullptr)->request.cpu == 6);
    CHECK(s.recommend(nullptr)->limit.memory == 4 * GiB);
    PerfectRecommender p({0.1, 0});
    const Sample next = at(0, 2, 3 * GiB);
    CHECK(p.recommend(&next)->request.cpu == Approx(2.2));
    CHECK(p.recommend(&next)->request.memory == 3 * GiB);
    CHECK_THROWS_AS(p.recommend(nullptr), model::InputError);
}

TEST_CASE("phase: the stable phase's quantiles, debounce, usage floor, unknown phases",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0.1, 0};
    o.debounce = 2;
    o.headroom = {0, 0.1};
    o.recent_samples = 5;
    o.adapt_samples = 3;  // the model's statistics for a phase's first two samples
    PhaseRecommender r(m, o);
    Feed feed{r};
    // First sample: no history yet, no phase: no recommendation (the allocation in force stays).
    CHECK(!feed(0.5, 0.5 * GiB));
    CHECK(!r.phase());
    // Phase 0 from the second sample: CPU p95 0.6 * 1.1, memory p99 1 GiB.
    Allocation a = *feed(0.5, 0.5 * GiB);
    REQUIRE(r.phase() == 0);
    CHECK(a.request.cpu == Approx(0.66));
    CHECK(a.request.memory == Approx(1 * GiB));
    // One sample of phase 1 is not enough to switch (debounce 2), but the allocation never goes
    // below the latest usage plus the 10% margin.
    a = *feed(1.5, 0.5 * GiB);
    CHECK(r.phase() == 0);
    CHECK(a.request.cpu == Approx(1.65));
    a = *feed(1.5, 3 * GiB);
    CHECK(r.phase() == 1);
    CHECK(a.request.cpu == Approx(2.2));
    CHECK(a.request.memory == Approx(4 * GiB));
    // About 1 core: too far from both centroids: in no known phase, counted.
    CHECK(r.unknown_phase_samples() == 0);
    a = *feed(1.0, 3 * GiB);
    CHECK(r.unknown_phase_samples() == 1);
    CHECK(a.request.cpu == Approx(1.65));  // p95 of the last 5 CPU samples (1.5) * 1.1
    CHECK(r.phase() == 1);                 // the stable phase is kept
}

TEST_CASE("phase: in no known phase, its own quantiles over its recent samples are the estimate",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.cpu_quantile = 0.5;
    o.memory_quantile = 1;
    o.recent_samples = 4;
    PhaseRecommender r(m, o);
    Feed feed{r};
    // About 1 core is far from both centroids: every sample is in no known phase.
    CHECK(!feed(1.0, 3 * GiB, false, {4, 8 * GiB}));  // no history yet
    feed(1.0, 3 * GiB);
    feed(1.1, 2 * GiB);
    feed(1.05, 1 * GiB);
    feed(1.0, 1 * GiB);
    const Allocation a = *feed(0.9, 1 * GiB);
    CHECK(r.unknown_phase_samples() == 5);
    CHECK(!r.phase());
    // The last 4 samples: CPU median 1.025, memory maximum 2 GiB (the 3 GiB are older).
    CHECK(a.request.cpu == Approx(1.025));
    CHECK(a.request.memory == Approx(2 * GiB));
}

TEST_CASE("phase: a visit of fewer samples than a first resize takes its recent samples' quantiles",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.cpu_quantile = 1;
    o.first_resize_samples = 3;
    PhaseRecommender r(m, o);
    Feed feed{r};
    for (int i = 0; i < 3; ++i) feed(1.5, 3 * GiB);
    REQUIRE(r.phase() == 1);
    // Phase 0 from its second sample (debounce 2): two samples of its own are too few for a
    // quantile, so the recent samples' maximum (1.5 cores) holds; at the third, its own (0.5).
    feed(0.5, 0.5 * GiB);
    const Allocation second = *feed(0.5, 0.5 * GiB);
    REQUIRE(r.phase() == 0);
    CHECK(second.request.cpu == Approx(1.5));
    CHECK(feed(0.5, 0.5 * GiB)->request.cpu == Approx(0.5));
}

TEST_CASE("phase: before the first phase, nothing is recommended (the allocation stays)",
          "[policy][phase]") {
    model::PhaseModel m = two_phase_model();
    // Two training executions began in phase 1: its 4 GiB came from other executions' sizes.
    m.statistics->sequences = {{{1, 0}, 2}, {{0, 1}, 1}};
    PhaseRecommender r(m, PhaseOptions{});
    Feed feed{r};
    CHECK(!feed(0.5, 0.5 * GiB));
    CHECK(!r.phase());
}

TEST_CASE("phase: an OOM kill raises memory for the rest of the visit", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.memory_step = 0;  // the bump alone
    PhaseRecommender r(m, o);
    Feed feed{r};
    feed(0.5, 0.5 * GiB);
    feed(0.5, 0.5 * GiB);
    const Allocation a = *feed(0.5, 0.9 * GiB, true, {1, 1 * GiB});
    CHECK(a.request.memory == Approx(1.2 * GiB));  // max(1 GiB + 100 MiB, 1.2 GiB)
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(1.2 * GiB));
}

TEST_CASE("phase: each OOM kill adds the memory step to the container's margin for good",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.memory_step = 0.25;
    o.adapt_samples = 3;
    PhaseRecommender r(m, o);
    Feed feed{r};
    feed(0.5, 0.5 * GiB);
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(1 * GiB));  // phase 0's p99
    feed(0.5, 0.5 * GiB, true, {1, 0.4 * GiB});                      // a kill at 0.4 GiB
    feed(1.5, 3 * GiB);
    feed(1.5, 3 * GiB);  // phase 1: the bump is gone, the margin stays
    REQUIRE(r.phase() == 1);
    // Three samples of its own there (adapt_samples): their p99, 3 GiB, times 1.25.
    CHECK(feed(1.5, 3 * GiB)->request.memory == Approx(3 * GiB * 1.25));
}

TEST_CASE("phase: the CPU margin adapts online toward the target fulfilment", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.cpu_target = 0.9;
    o.cpu_step = 0.1;
    o.adapt_samples = 0;
    PhaseRecommender r(m, o);
    Feed feed{r};
    feed(0.5, 0.5 * GiB);
    const double base =
        feed(0.5, 0.5 * GiB)->request.cpu;  // phase 0's p95, 0.6: none recommended before
    CHECK(base == Approx(0.6));
    // Usage above what it recommended: a miss raises the margin by step * target. The allocation
    // in force (here far above) does not matter: a cooldown may hold it. The latest usage, times
    // (1 + margin), is the floor.
    const double after_miss = feed(0.62, 0.5 * GiB, false, {8, GiB})->request.cpu;
    CHECK(after_miss == Approx(0.62 * (1 + 0.1 * 0.9)));
    // Each sample within it lowers the margin by step * (1 - target).
    const double after_hit = feed(0.5, 0.5 * GiB, false, {0.1, GiB})->request.cpu;
    CHECK(after_hit == Approx(0.6 * (1 + 0.1 * 0.9 - 0.1 * 0.1)));
}

TEST_CASE("phase: no path allocates below the latest usage plus headroom or an OOM bump",
          "[policy][phase]") {
    // The calibration once drove margins to -0.95, and the estimate for unknown phases then
    // allocated 5% of usage. Every path now passes the same floors, whatever the margins.
    const model::PhaseModel m = two_phase_model();
    std::uint64_t state = 7;
    auto uniform = [&] {  // a small LCG: deterministic, no dependence on the library's engines
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    for (const double margin : {-0.95, -0.5, 0.0, 0.5}) {
        PhaseOptions o = sizing_only();
        o.margins = {margin, margin};
        o.headroom = {0.2, 0.1};
        PhaseRecommender r(m, o);
        Feed feed{r};
        for (int i = 0; i < 400; ++i) {
            // Phase 0, phase 1 and far from both (unknown: the recent samples' path) in turn.
            const double cpu = 0.1 + 3 * uniform(), memory = (0.1 + 6 * uniform()) * GiB;
            const bool oom = uniform() < 0.05;
            const std::optional<Allocation> a = feed(cpu, memory, oom, {1, 2 * GiB});
            if (!a) continue;
            CHECK(a->request.cpu >= cpu * 1.2 - 1e-9);
            CHECK(a->request.memory >= memory * 1.1 - 1);
            if (oom) CHECK(a->request.memory >= 2 * GiB * 1.2 - 1);
        }
        CHECK(r.unknown_phase_samples() > 0);
    }
}

TEST_CASE("phase: growing memory is provisioned over the horizon, never further than seen",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = over_horizon();
    o.trend_samples = 3;
    PhaseRecommender r(m, o);
    Feed feed{r};  // samples 15 s apart
    feed(0.5, 0.40 * GiB);
    feed(0.5, 0.45 * GiB);
    // Over the last 30 s memory grew 0.1 GiB: another 0.1 GiB over 30 s of the 60 s horizon.
    CHECK(feed(0.5, 0.50 * GiB)->request.memory == Approx(0.60 * GiB));
    PhaseOptions flat = o;
    flat.horizon_s = 0;
    PhaseRecommender without(m, flat);
    Feed f2{without};
    f2(0.5, 0.40 * GiB);
    f2(0.5, 0.45 * GiB);
    CHECK(f2(0.5, 0.50 * GiB)->request.memory == Approx(0.50 * GiB));
}

TEST_CASE("phase: a young container's CPU comes down to its start-up and goes up with training",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseRecommender r(m, over_horizon());
    Feed feed{r};  // samples 15 s apart (the first at 15 s), 2 cores in force
    const Amount start{2, 4 * GiB};
    // A start-up at 0.5 cores, seen for less than the 60 s horizon: no hold at the 2 in force.
    feed(0.5, 1 * GiB, false, start);
    CHECK(feed(0.5, 1 * GiB, false, start)->request.cpu == Approx(0.5));
    // Training at 3 cores: given at once.
    CHECK(feed(3, 1 * GiB, false, {0.5, 4 * GiB})->request.cpu >= 3);
}

TEST_CASE("phase: memory climbing back after a dip is not projected as growth", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = over_horizon();
    o.trend_samples = 3;
    o.memory_keep = 0;
    PhaseRecommender r(m, o);
    Feed feed{r};  // samples 15 s apart
    for (int i = 0; i < 4; ++i) feed(0.5, 0.50 * GiB);
    feed(0.5, 0.30 * GiB);  // a dip (a worker restarting), then back to where it was
    feed(0.5, 0.45 * GiB);
    const std::optional<Allocation> back = feed(0.5, 0.50 * GiB);
    // No new growth: the container's own p99 in the phase (0.5 GiB), nothing projected above it.
    CHECK(back->request.memory == Approx(0.50 * GiB));
    // Growth past the earlier peak counts again: 0.55 - max(0.45, 0.5) over 30 s, doubled by the
    // 60 s horizon but never further than the 30 s it was seen for.
    CHECK(feed(0.5, 0.55 * GiB)->request.memory == Approx(0.60 * GiB));
}

TEST_CASE("phase: memory looks ahead to the likely next phase before the visit may end",
          "[policy][phase]") {
    // Phase 0 (model memory p99 1 GiB, median visit 3 samples) is followed by phase 1 (4 GiB).
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.horizon_s = 15;  // one sample
    o.adapt_samples = 100;
    PhaseRecommender r(m, o);
    Feed feed{r};
    feed(0.5, 0.5 * GiB);
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(1 * GiB));  // visit of 1 sample, + 1 < 3
    // Two samples in: the visit may end within the horizon. Never in phase 1 yet: nothing more
    // (the model's 4 GiB there, or its 4x step from phase 0, come from other executions).
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(1 * GiB));
    feed(1.5, 3 * GiB);
    feed(1.5, 3 * GiB);
    REQUIRE(r.phase() == 1);
    feed(0.5, 0.5 * GiB);
    feed(0.5, 0.5 * GiB);
    REQUIRE(r.phase() == 0);
    // Back in phase 0 and near its end again: what it used in phase 1, 3 GiB.
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(3 * GiB));
}

TEST_CASE("phase: once a container has shown its working set, the look-ahead forgets its start-up",
          "[policy][phase]") {
    // As above: phase 0 (model memory p99 1 GiB, median visit 3 samples) is followed by phase 1.
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.horizon_s = 15;  // one sample; the working set shows after 15 s at work at a level
    o.adapt_samples = 100;
    PhaseRecommender r(m, o);
    Feed feed{r};
    // Two samples in phase 1 at these memories, then phase 0 at a flat 0.5 GiB until phase 1's
    // memory has left its last 4 samples: the memory recommended then, with the visit near its
    // end and phase 1 likely next.
    const auto phase_1_then_0 = [&](double first, double second) {
        feed(1.5, first);
        feed(1.5, second);
        REQUIRE(r.phase() == 1);
        for (int i = 0; i < 4; ++i) feed(0.5, 0.5 * GiB);
        REQUIRE(r.phase() == 0);
        return feed(0.5, 0.5 * GiB)->request.memory;
    };
    // Its start-up in phase 1 (memory climbing to 3 GiB, a copy of the data: not yet a level),
    // then at work in phase 0, its working set: what the start-up used in phase 1 is no job at
    // work's, phase 0's 1 GiB only.
    CHECK(phase_1_then_0(2 * GiB, 3 * GiB) == Approx(1 * GiB));
    // Phase 1 at work, then phase 0 again: what it used in phase 1 since counts (2.5 GiB).
    CHECK(phase_1_then_0(2.5 * GiB, 2.5 * GiB) == Approx(2.5 * GiB));
}

TEST_CASE("phase: memory is provisioned for the rise the phase's training samples saw",
          "[policy][phase]") {
    model::PhaseModel m = two_phase_model();
    // In phase 0's training samples memory rose within a minute by up to 1.6x (p95), 2x (p99).
    m.statistics->phases[0].rise = {summary(1, 1, 1, 1), summary(1.1, 1.6, 2, 2.5)};
    PhaseOptions o = over_horizon();
    o.memory_keep = 0;
    const auto memory_after = [&](PhaseOptions options) {
        PhaseRecommender r(m, options);
        Feed feed{r};
        std::optional<Allocation> a;
        for (int i = 0; i < 4; ++i) a = feed(0.5, 0.5 * GiB);
        REQUIRE(r.phase() == 0);
        return a->request.memory;
    };
    CHECK(memory_after(o) == Approx(0.8 * GiB));  // the latest 0.5 GiB x 1.6 (margin 0)
    o.rise_quantile = 0.99;
    CHECK(memory_after(o) == Approx(1 * GiB));
    o.rise_quantile = 0;  // off: the container's own p99 in the phase
    CHECK(memory_after(o) == Approx(0.5 * GiB));
    o.rise_quantile = 0.95;
    o.margins = {0, 0.1};  // the margin applies to the rise as to any estimate
    CHECK(memory_after(o) == Approx(0.88 * GiB));
    m.statistics->phases[0].rise[1] = summary(1, 1.05, 1.05, 1.05);
    CHECK(memory_after(o) == Approx(0.5775 * GiB));
    // A model written before rises were kept provisions none; the ablation without the model
    // neither.
    m.statistics->phases[0].rise.clear();
    CHECK(memory_after(o) == Approx(0.55 * GiB));
    m.statistics->phases[0].rise = {summary(1, 1, 1, 1), summary(1.1, 1.6, 2, 2.5)};
    o.no_model = true;
    CHECK(memory_after(o) == Approx(0.55 * GiB));
    o.rise_quantile = 0.97;  // not kept in the statistics
    CHECK_THROWS_WITH(PhaseRecommender(m, o), Catch::Contains("quantile"));

    // The latest sample is in phase 1, which rises 3x, before the debounce makes it the stable
    // phase: its rise counts already.
    model::PhaseModel rising = two_phase_model();
    rising.statistics->phases[1].rise = {summary(1, 1, 1, 1), summary(1, 3, 3, 3)};
    PhaseOptions p = over_horizon();
    p.memory_keep = 0;
    PhaseRecommender r(rising, p);
    Feed feed{r};
    for (int i = 0; i < 4; ++i) feed(0.5, 0.5 * GiB);
    const std::optional<Allocation> a = feed(1.5, 0.5 * GiB);
    REQUIRE(r.phase() == 0);
    CHECK(a->request.memory == Approx(1.5 * GiB));
}

TEST_CASE("phase: once a container has shown its working set, its phase's rise is a settled job's",
          "[policy][phase]") {
    // Phase 0 rose 1.6x at its p95 (start-ups among its samples), but samples of jobs that had
    // shown their working set 1.2x at their p99.
    model::PhaseModel m = two_phase_model();
    m.statistics->phases[0].rise = {summary(1, 1, 1, 1), summary(1.1, 1.6, 2, 2.5)};
    m.statistics->phases[0].settled_rise = {summary(1, 1, 1, 1), summary(1, 1.1, 1.2, 1.3)};
    m.statistics->phases[0].settled_rise[1].count = 100;
    PhaseOptions o = over_horizon();  // a horizon of 60 s, at 15 s a sample
    o.memory_keep = 0;
    const auto memory_after = [&](const model::PhaseModel& model, int samples) {
        PhaseRecommender r(model, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (int i = 0; i < samples; ++i) a = feed(0.5, 0.5 * GiB);
        REQUIRE(r.phase() == 0);
        return a->request.memory;
    };
    // At work at a level for 45 s: not yet its working set, the phase's rise (0.5 GiB x 1.6).
    CHECK(memory_after(m, 4) == Approx(0.8 * GiB));
    // For 60 s: its working set; the settled rise's p99 (1.2x) where below the rise.
    CHECK(memory_after(m, 5) == Approx(0.6 * GiB));
    CHECK(memory_after(m, 12) == Approx(0.6 * GiB));
    // Never above the rise: the settled rise only lowers what start-ups raised.
    model::PhaseModel higher = m;
    higher.statistics->phases[0].settled_rise[1].p99 = 1.8;
    CHECK(memory_after(higher, 5) == Approx(0.8 * GiB));
    // A p99 of fewer than 100 settled samples says too little; a model written before settled
    // rises were kept has none: the rise throughout.
    model::PhaseModel few = m;
    few.statistics->phases[0].settled_rise[1].count = 99;
    CHECK(memory_after(few, 5) == Approx(0.8 * GiB));
    model::PhaseModel older = m;
    older.statistics->phases[0].settled_rise.clear();
    CHECK(memory_after(older, 5) == Approx(0.8 * GiB));
}

TEST_CASE("phase-no-model: one phase, the container's own recent usage", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.no_model = true;
    o.margins = {0, 0};
    PhaseRecommender r(m, o);
    Feed feed{r};
    CHECK(feed(0.5, 0.5 * GiB)->request.cpu ==
          Approx(0.5));  // its own first sample, not phase 0's 0.6
    feed(2.0, 3 * GiB);  // phase 1's usage, still the one phase
    CHECK(r.phase() == 0);
    CHECK(r.unknown_phase_samples() == 0);
}

TEST_CASE("krr: CPU p95 of the history, memory its maximum plus 15%", "[policy]") {
    KrrRecommender k(KrrOptions{});
    CHECK(!k.recommend(nullptr));
    for (int i = 1; i <= 100; ++i) k.observe(at(i, i / 100.0, (i == 50 ? 4 : 1) * GiB));
    const Allocation a = *k.recommend(nullptr);
    CHECK(a.request.cpu == Approx(model::quantile(
                               [] {
                                   std::vector<double> v;
                                   for (int i = 1; i <= 100; ++i) v.push_back(i / 100.0);
                                   return v;
                               }(),
                               0.95)));
    CHECK(a.request.memory == Approx(4 * GiB * 1.15));
    CHECK(a.limit.memory == a.request.memory);
}

TEST_CASE("phase: proactive mode provisions for the likely next phase after a typical visit",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.proactive = true;
    o.headroom = {0.2, 0.1};
    PhaseRecommender r(m, o);
    Feed feed{r};
    feed(0.5, 0.5 * GiB);
    // Phase 0's median visit is 3 samples; its likely successor is phase 1.
    for (int i = 0; i < 3; ++i) CHECK(feed(0.5, 0.5 * GiB)->request.cpu == Approx(0.6));
    CHECK(feed(0.5, 0.5 * GiB)->request.cpu == Approx(2.0));
    CHECK(feed(0.5, 0.5 * GiB)->request.memory == Approx(4 * GiB));
}

TEST_CASE("oracle: the phase of the coming sample, without debounce", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.oracle = true;
    PhaseRecommender r(m, o);
    Sample next = at(0, 0.5, 0.5 * GiB);
    next.known_phase = 1;
    CHECK(r.recommend(&next)->request.cpu == Approx(2.0));
    next.known_phase = 0;
    CHECK(r.recommend(&next)->request.cpu == Approx(0.6));
}

TEST_CASE("phase policy rejects a model without statistics and unknown quantiles",
          "[policy][phase]") {
    model::PhaseModel m = two_phase_model();
    PhaseOptions o;
    o.cpu_quantile = 0.8;
    CHECK_THROWS_WITH(PhaseRecommender(m, o), Catch::Contains("0.8"));
    m.statistics.reset();
    CHECK_THROWS_WITH(PhaseRecommender(m, PhaseOptions{}), Catch::Contains("no phase statistics"));
}

TEST_CASE("actuator: delay, minimum change and resize count", "[policy]") {
    const Allocation start = guaranteed({1, GiB});
    Actuator act(start, actuation(2, 0.05));
    CHECK(act.advance(0).request.cpu == 1);
    act.decide(guaranteed({2, GiB}));  // after sample 0: in force at sample 2
    CHECK(act.advance(1).request.cpu == 1);
    act.decide(guaranteed({2.05, GiB}));  // 2.5% above 2: not worth a resize
    CHECK(act.advance(2).request.cpu == 2);
    act.decide(guaranteed({2, 2 * GiB}));
    CHECK(act.advance(3).request.cpu == 2);
    act.decide(guaranteed({2, 2 * GiB}));
    CHECK(act.advance(4).request.memory == 2 * GiB);
    CHECK(act.resizes() == 2);
}

TEST_CASE("actuator: no resize within the cooldown of the last one, in trace time", "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    Actuator act(guaranteed({3, GiB}), o);
    act.advance(0);
    act.decide(guaranteed({2, GiB}));
    CHECK(act.advance(15).request.cpu == 2);  // the first resize, a cut, at t = 15
    for (double t : {30.0, 45.0, 60.0}) {
        act.decide(guaranteed({1, GiB}));
        CHECK(act.advance(t).request.cpu == 2);  // within 60 s of it
    }
    act.decide(guaranteed({1, GiB}));
    CHECK(act.advance(75).request.cpu == 1);
    CHECK(act.resizes() == 2);
}

TEST_CASE(
    "actuator: a resize that only raises CPU holds CPU cuts alone for a cooldown, one that "
    "moves memory the pod's",
    "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    Actuator act(guaranteed({2, 2 * GiB}), o);
    act.advance(0);
    act.decide(guaranteed({1, GiB}));
    CHECK(act.advance(15).request.cpu == 1);  // a cut: the cooldown runs to t = 75
    // After it, more CPU goes ahead and holds CPU cuts alone (to t = 140): a cut of memory that
    // follows goes ahead at once, a cut of CPU with it does not.
    act.decide(guaranteed({2, GiB}));
    CHECK(act.advance(80).request.cpu == 2);
    act.decide(guaranteed({1, 0.5 * GiB}));
    CHECK(act.advance(85).request.memory == 0.5 * GiB);
    CHECK(act.in_force().request.cpu == 2);
    CHECK(act.in_force().limit.cpu == 2);
    // That cut of memory started the pod's cooldown (to t = 145); after both, CPU comes down.
    act.decide(guaranteed({1, 0.5 * GiB}));
    CHECK(act.advance(150).request.cpu == 1);
    // More memory starts the pod's cooldown too (to t = 275): the memory was raised for what the
    // cooldown may bring, and a cut right after it waits; so does more CPU with a little more
    // memory (within minChange; to t = 340).
    act.decide(guaranteed({2, 0.6 * GiB}));
    CHECK(act.advance(215).request.memory == 0.6 * GiB);
    act.decide(guaranteed({2, 0.5 * GiB}));
    CHECK(act.advance(220).request.memory == 0.6 * GiB);
    act.decide(guaranteed({3, 0.61 * GiB}));
    CHECK(act.advance(280).request.cpu == 3);
    act.decide(guaranteed({3, 0.5 * GiB}));
    CHECK(act.advance(285).request.memory == 0.61 * GiB);
    CHECK(act.resizes() == 6);

    CHECK(only_raises_cpu({1, GiB}, {2, GiB}));
    CHECK_FALSE(only_raises_cpu({1, GiB}, {2, 1.01 * GiB}));
    CHECK_FALSE(only_raises_cpu({1, GiB}, {2, 0.99 * GiB}));
    CHECK_FALSE(only_raises_cpu({1, GiB}, {0.5, GiB}));
    CHECK(restarts(false, false) == Restarts::Cooldown);
    CHECK(restarts(false, true) == Restarts::CpuCuts);
    CHECK(restarts(true, false) == Restarts::Nothing);  // let through within the cooldown
    Cooldowns c;
    c.record(Restarts::CpuCuts, 100);
    CHECK(c.holds_cpu_cuts(130, 60));
    CHECK_FALSE(c.holds_cpu_cuts(160, 60));
    c.record(Restarts::Cooldown, 140);
    CHECK_FALSE(c.holds_cpu_cuts(150, 60));  // the pod's cooldown holds back every cut then
    c.record(Restarts::Nothing, 300);
    CHECK(c.start == 140);
    const Allocation held = no_cpu_cut(guaranteed({2, GiB}), guaranteed({1, 0.5 * GiB}));
    CHECK(held.request.cpu == 2);
    CHECK(held.limit.cpu == 2);
    CHECK(held.request.memory == 0.5 * GiB);
}

TEST_CASE("actuator: after an OOM kill, more memory skips the cooldown", "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    Actuator act(guaranteed({1, GiB}), o);
    act.advance(0);
    act.decide(guaranteed({1, 2 * GiB}));
    CHECK(act.advance(15).request.memory == 2 * GiB);
    Sample killed = at(15, 0.5, 2.5 * GiB, {1, 2 * GiB});  // CPU well within its margin
    killed.oom_killed = true;
    act.decide(guaranteed({2, 2 * GiB}), killed);  // killed, but wants only more CPU: waits
    CHECK(act.advance(30).request.cpu == 1);
    // The kill is remembered until a resize: a little more memory (within minChange, which alone
    // would skip the cooldown) goes ahead, and the CPU with it.
    act.decide(guaranteed({2, 2.08 * GiB}));
    CHECK(act.advance(45).request.memory == 2.08 * GiB);
    CHECK(act.in_force().request.cpu == 2);
    act.decide(guaranteed({3, 2.16 * GiB}));  // no kill since that resize: the cooldown holds
    CHECK(act.advance(60).request.cpu == 2);
    CHECK(act.resizes() == 2);
}

TEST_CASE("actuator: more memory than the minimum change skips the cooldown", "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    o.safety_margins = {0.1, 0.1};
    Actuator act(guaranteed({3, GiB}), o);
    act.advance(0);
    act.decide(guaranteed({2, GiB}));
    CHECK(act.advance(15).request.cpu == 2);  // the first resize, a cut: it starts the cooldown
    // Nothing at risk: more CPU waits; more memory does not, and cuts no CPU on the way.
    act.decide(guaranteed({3, GiB}), at(15, 1, 0.5 * GiB, {2, GiB}));
    CHECK(act.advance(30).request.cpu == 2);
    act.decide(guaranteed({1, 1.5 * GiB}), at(30, 1, 0.5 * GiB, {2, GiB}));
    CHECK(act.advance(45).request.memory == 1.5 * GiB);
    CHECK(act.in_force().request.cpu == 2);
    CHECK(act.in_force().limit.cpu == 2);
    // Less memory waits for the cooldown, which still runs from the first resize: a raise let
    // through within it does not restart it.
    act.decide(guaranteed({2, GiB}), at(45, 1, 0.5 * GiB, {2, 1.5 * GiB}));
    CHECK(act.advance(70).request.memory == 1.5 * GiB);
    act.decide(guaranteed({2, GiB}), at(70, 1, 0.5 * GiB, {2, 1.5 * GiB}));
    CHECK(act.advance(75).request.memory == GiB);
    CHECK(act.resizes() == 3);
    // That cut, outside the cooldown, starts the next one.
    act.decide(guaranteed({2, 0.75 * GiB}), at(75, 1, 0.5 * GiB, {2, GiB}));
    CHECK(act.advance(130).request.memory == GiB);
    act.decide(guaranteed({2, 0.75 * GiB}), at(130, 1, 0.5 * GiB, {2, GiB}));
    CHECK(act.advance(135).request.memory == 0.75 * GiB);
    CHECK(act.resizes() == 4);

    CHECK(grows_memory({1, 2 * GiB}, {1, 2.2 * GiB}, 0.05));
    CHECK_FALSE(grows_memory({1, 2 * GiB}, {1, 2.09 * GiB}, 0.05));  // by 4.5%
    CHECK_FALSE(grows_memory({1, 2 * GiB}, {1, GiB}, 0.05));
    CHECK(grows_memory({1, 0}, {1, GiB}, 0.05));  // from none
}

TEST_CASE("a request changed when it moved by more than minChange of it or from nothing",
          "[policy]") {
    CHECK(changed(1, 1.06, 0.05));
    CHECK(changed(1, 0.94, 0.05));
    CHECK_FALSE(changed(1, 1.04, 0.05));
    CHECK_FALSE(changed(1, 0.96, 0.05));
    CHECK(changed(0, 0.001, 0.05));
    CHECK_FALSE(changed(0, 0, 0.05));
    CHECK(changed(2, 2.1, 0));  // minChange 0: any move
}

TEST_CASE("actuator: memory usage within its safety margin of the limit skips the cooldown",
          "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    o.safety_margins = {0.1, 0.1};
    Actuator act(guaranteed({1, GiB}), o);
    act.advance(0);
    act.decide(guaranteed({1, 2 * GiB}));
    CHECK(act.advance(15).request.memory == 2 * GiB);
    // A little more memory (4%, within minChange, which alone would skip the cooldown) and more
    // CPU (whose usage, 0.5 of 1 core, is not at risk). 1.8 GiB of 2: 1.8 x 1.1 = 1.98 < 2, the
    // margin holds: the cooldown too.
    const Allocation a_little_more = guaranteed({1.5, 2.08 * GiB});
    act.decide(a_little_more, at(15, 0.5, 1.8 * GiB, {1, 2 * GiB}));
    CHECK(act.advance(30).request.memory == 2 * GiB);
    // 1.85 GiB: 1.85 x 1.1 > 2, the margin is used up: more memory now.
    act.decide(a_little_more, at(30, 0.5, 1.85 * GiB, {1, 2 * GiB}));
    CHECK(act.advance(45).request.memory == 2.08 * GiB);
    CHECK(act.resizes() == 2);
    // A CPU cut with a little more memory (4%), memory at risk: the cut waits for the cooldown, and
    // the 4% left is within minChange: no resize (the operator's decide_pod alike).
    Actuator cut(guaranteed({1, GiB}), o);
    cut.advance(0);
    cut.decide(guaranteed({1, 2 * GiB}));
    CHECK(cut.advance(15).request.memory == 2 * GiB);
    cut.decide(guaranteed({0.5, 2.08 * GiB}), at(15, 0.5, 1.85 * GiB, {1, 2 * GiB}));
    const Allocation held = cut.advance(30);
    CHECK(held.request.cpu == 1);
    CHECK(held.request.memory == 2 * GiB);
    CHECK(cut.resizes() == 1);

    // A ramp faster than the margin: 1.3, then 1.5 GiB of 2 (0.2 more would be 1.7): the cooldown
    // holds; 1.8 (0.3 more would be 2.1, over the line the margin has not reached yet): now.
    Actuator ramp(guaranteed({1, GiB}), o);
    ramp.advance(0);
    ramp.decide(guaranteed({1, 2 * GiB}));  // a resize, which starts the cooldown
    CHECK(ramp.advance(15).request.memory == 2 * GiB);
    ramp.decide(a_little_more, at(15, 0.5, 1.3 * GiB, {1, 2 * GiB}));
    CHECK(ramp.advance(30).request.memory == 2 * GiB);
    ramp.decide(a_little_more, at(30, 0.5, 1.5 * GiB, {1, 2 * GiB}));
    CHECK(ramp.advance(45).request.memory == 2 * GiB);
    ramp.decide(a_little_more, at(45, 0.5, 1.8 * GiB, {1, 2 * GiB}));
    CHECK(ramp.advance(50).request.memory == 2.08 * GiB);

    // The OOM line is the limit, the request where there is none.
    const auto memory_at_risk = [](const Sample& s, double margin, double before = 0) {
        return at_risk(s, {0, margin}, before).memory;
    };
    CHECK(memory_at_risk(at(0, 1, 1.85 * GiB, {1, 2 * GiB}), 0.1));
    Sample burstable = at(0, 1, 1.85 * GiB, {1, 2 * GiB});
    burstable.limit = {2, 4 * GiB};
    CHECK_FALSE(memory_at_risk(burstable, 0.1));
    CHECK_FALSE(memory_at_risk(at(0, 1, 1.85 * GiB, {1, 2 * GiB}), 0.05));  // a smaller margin
    CHECK(memory_at_risk(at(0, 1, 2 * GiB, {1, 2 * GiB}), 0));
    // A ramp: 1.7 GiB of 2 is within no 10% margin (1.87), but grew by 0.4 GiB since the sample
    // before, and 0.4 more reaches the line; by 0.2, it does not; falling memory is no ramp.
    CHECK(memory_at_risk(at(0, 1, 1.7 * GiB, {1, 2 * GiB}), 0.1, 1.3 * GiB));
    CHECK_FALSE(memory_at_risk(at(0, 1, 1.7 * GiB, {1, 2 * GiB}), 0.1, 1.5 * GiB));
    CHECK_FALSE(memory_at_risk(at(0, 1, 1.7 * GiB, {1, 2 * GiB}), 0.1, 1.9 * GiB));
}

TEST_CASE(
    "actuator: CPU usage within its safety margin of the request skips the cooldown for a "
    "raise beyond the margin",
    "[policy]") {
    ActuationOptions o = actuation(1, 0.05);
    o.cooldown_s = 60;
    o.safety_margins = {0.1, 0.1};
    Actuator act(guaranteed({3, 2 * GiB}), o);
    act.advance(0);
    act.decide(guaranteed({2, 2 * GiB}));
    CHECK(act.advance(15).request.cpu == 2);  // a cut: it starts the cooldown
    // 1.8 cores of 2: 1.8 x 1.1 < 2, the margin holds: the cooldown too.
    act.decide(guaranteed({3, 2 * GiB}), at(15, 1.8, GiB, {2, 2 * GiB}));
    CHECK(act.advance(30).request.cpu == 2);
    // 1.9 cores: the margin is used up. A raise within it (2.2 = 2 x 1.1) still waits.
    act.decide(guaranteed({2.2, 2 * GiB}), at(30, 1.9, GiB, {2, 2 * GiB}));
    CHECK(act.advance(45).request.cpu == 2);
    // Beyond it: now, and cutting nothing (the memory a cut would take stays).
    act.decide(guaranteed({3, GiB}));
    CHECK(act.advance(50).request.cpu == 3);
    CHECK(act.in_force().request.memory == 2 * GiB);
    CHECK(act.in_force().limit.memory == 2 * GiB);
    CHECK(act.resizes() == 2);
    // Within its margin again (2 x 1.1 < 3): the next raise waits for the cooldown.
    act.decide(guaranteed({4, 2 * GiB}), at(50, 2, GiB, {3, 2 * GiB}));
    CHECK(act.advance(60).request.cpu == 3);

    // The CPU line is the limit where one is set above the request.
    const auto cpu_at_risk = [](const Sample& s) { return at_risk(s, {0.1, 0.1}, 0).cpu; };
    CHECK(cpu_at_risk(at(0, 1.9, GiB, {2, 2 * GiB})));
    Sample burstable = at(0, 1.9, GiB, {2, 2 * GiB});
    burstable.limit = {4, 2 * GiB};
    CHECK_FALSE(cpu_at_risk(burstable));
    CHECK_FALSE(cpu_at_risk(at(0, 1.8, GiB, {2, 2 * GiB})));
    // Throttled at its limit in some of its periods: at risk, whatever its average usage.
    burstable.usage.cpu = 1;
    burstable.cpu_throttled = 0.2;
    CHECK(cpu_at_risk(burstable));
    // What a resize raises: memory, any more; CPU, more than its margin.
    const PerResource r = raises({2, 2 * GiB}, {2.2, 2.1 * GiB}, {0.1, 0.1});
    CHECK_FALSE(r.cpu);
    CHECK(r.memory);
    CHECK(raises({2, 2 * GiB}, {2.3, GiB}, {0.1, 0.1}).cpu);
}

TEST_CASE("throttling: the limits of the ticks judge a share under the limit in force",
          "[policy]") {
    // Ticks every 15 s, rates found within 60 s; 1 core, asked up to 1.5 at 45 s, applied by 60 s.
    CpuLimitHistory h;
    for (double t : {0.0, 15.0, 30.0, 45.0}) h.observe(t, t < 45 ? 1 : 1.5, 1, 60);
    // The share's scrapes may lie before the raise: it counts only where they used 95% of 1.5
    // cores, which 1 core never allowed.
    CHECK(h.judge(0.4, 1) == 0);
    CHECK(h.judge(0.4, 1.425) == 0.4);
    h.observe(60, 1.5, 1.5, 60);  // applied: the raise seen again
    CHECK(h.judge(0.4, 1.4) == 0);
    // Once the window begins at the tick that saw the latest raise, the share counts as it is.
    for (double t = 75; t <= 105; t += 15) h.observe(t, 1.5, 1.5, 60);
    CHECK(h.judge(0.4, 1.4) == 0);
    h.observe(120, 1.5, 1.5, 60);
    CHECK(h.judge(0.4, 1) == 0.4);
    // After a cut at once: what was throttled under 1.5 cores is under 1 too.
    h.observe(135, 1, 1, 60);
    CHECK(h.judge(0.4, 0.5) == 0.4);
    // An operator that restarted knows no limit before its first tick: as if raised then.
    h.unknown_before(150);
    h.observe(150, 1, 1, 60);
    CHECK(h.judge(0.4, 0.9) == 0);
    CHECK(h.judge(0.4, 1) == 0.4);
    for (double t = 165; t <= 210; t += 15) h.observe(t, 1, 1, 60);
    CHECK(h.judge(0.4, 0.5) == 0.4);
}

TEST_CASE("throttling: a share is judged over the window its scrapes may lie in", "[policy]") {
    // max(4 scrapes, a tick), in seconds or a std::chrono duration.
    CHECK(rate_window(15.0, 15.0) == 60);
    CHECK(rate_window(15.0, 1.0) == 15);
    CHECK(rate_window(std::chrono::milliseconds(2000), std::chrono::milliseconds(1000)) ==
          std::chrono::milliseconds(4000));
    // Ticks and scrapes every second; 1 core, raised to 1.65 and seen applied at 4 s. At 5 s the
    // latest two scrapes may both lie before the raise (a late scrape): throttled in every period
    // at 1 core, using it all. Judged over one interval the share counted (and grew the limit
    // again); over the window it does not, for 1 core used no more than 1.65 allowed.
    const double window = rate_window(1.0, 1.0);
    CpuLimitHistory h;
    for (double t = 0; t <= 4; ++t) h.observe(t, t < 4 ? 1 : 1.65, t < 4 ? 1 : 1.65, window);
    h.observe(5, 1.65, 1.65, window);
    CHECK(h.judge(1, 1) == 0);
    // Using all of the new limit, it was throttled under it too.
    CHECK(h.judge(1, 1.65) == 1);
    // Once the window begins at the tick that saw the raise, its scrapes lie after it.
    for (double t = 6; t <= 8; ++t) h.observe(t, 1.65, 1.65, window);
    CHECK(h.judge(1, 1) == 1);
}

TEST_CASE("actuator: bounds and controlled values, limits keep the pod's QoS", "[policy]") {
    ActuationOptions o = actuation(1, 0.0);
    o.bounds.min_cpu = 0.5;
    o.bounds.max_memory = 4 * GiB;
    // Burstable: the memory limit is twice the request, and keeps that ratio.
    const Allocation burstable{{1, GiB}, {2, 2 * GiB}};
    Actuator act(burstable, o);
    act.advance(0);
    act.decide(guaranteed({0.1, 8 * GiB}));
    const Allocation a = act.advance(1);
    CHECK(a.request.cpu == 0.5);         // minAllowed
    CHECK(a.limit.cpu == 1.0);           // ratio 2
    CHECK(a.request.memory == 4 * GiB);  // maxAllowed
    CHECK(a.limit.memory == 8 * GiB);
    // RequestsOnly: limits stay, a request never above its limit; uncontrolled CPU stays.
    ActuationOptions r = actuation(1, 0.0);
    r.bounds.requests_and_limits = false;
    r.bounds.control_cpu = false;
    Actuator only(burstable, r);
    only.advance(0);
    only.decide(guaranteed({3, 3 * GiB}));
    const Allocation b = only.advance(1);
    CHECK(b.request.cpu == 1);
    CHECK(b.request.memory == 2 * GiB);
    CHECK(b.limit.memory == 2 * GiB);
}

TEST_CASE("ring: keeps the last capacity values, oldest first", "[policy]") {
    policy::Ring<int> ring(3);
    CHECK(ring.empty());
    for (int i = 1; i <= 2; ++i) ring.push(i);
    CHECK(ring.values() == std::vector<int>{1, 2});
    for (int i = 3; i <= 7; ++i) ring.push(i);
    CHECK(ring.size() == 3);
    CHECK(ring.values() == std::vector<int>{5, 6, 7});
    CHECK(ring.latest(2) == std::vector<int>{6, 7});
    CHECK(ring.latest(5) == std::vector<int>{5, 6, 7});
    CHECK(ring.latest(0).empty());
    policy::Ring<int> none(0);
    none.push(1);
    CHECK(none.empty());
}

TEST_CASE("phase: a container is first resized only after samples of its own", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;
    o.first_resize_samples = 5;
    PhaseRecommender r(m, o);
    Feed feed{r};
    // Within what it has: one that starts below what it uses does not wait (the last test).
    for (int i = 1; i < 5; ++i)
        CHECK_FALSE(feed(2.2, 3 * GiB, false, {4, 8 * GiB}));  // phase 1 known from sample 2 on
    CHECK(feed(2.2, 3 * GiB, false, {4, 8 * GiB}));
    PhaseOptions invalid;
    invalid.max_growth = 0.5;
    CHECK_THROWS_AS(PhaseRecommender(m, invalid), model::InputError);
}

TEST_CASE("phase: one step never grows a request past max_growth nor below the share kept",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;
    o.first_resize_samples = 0;
    o.margins = {0, 0};
    o.max_growth = 2;
    o.cpu_keep = 0.5;
    o.busy_cpu = 0;  // the memory bound always holds (the next test releases it)
    o.memory_min_headroom = 0;
    PhaseRecommender r(m, o);
    Feed feed{r};
    // Phase 1 wants 2.2 cores and 4 GiB, and usage is 3 cores: from 1 core and 1 GiB in force,
    // twice that at most.
    feed(3, 3 * GiB);
    std::optional<Allocation> up = feed(3, 3 * GiB);
    REQUIRE(up);
    CHECK(up->request.cpu == Approx(2));
    // Memory never below what the container already uses (3 GiB, past the 1 GiB in force: a kill
    // for sure), bound or not.
    CHECK(up->request.memory == Approx(3 * GiB));
    // Down: never below half of what is in force (4 cores, 8 GiB).
    const Amount large{4, 8 * GiB};
    feed(0.1, 0.1 * GiB, false, large);
    std::optional<Allocation> down = feed(0.1, 0.1 * GiB, false, large);
    REQUIRE(down);
    CHECK(down->request.cpu == Approx(2));
    CHECK(down->request.memory == Approx(4 * GiB));
    // Unbounded, the same container jumps at once.
    o.max_growth = 0;
    o.cpu_keep = o.memory_keep = 0;
    PhaseRecommender free(m, o);
    Feed f2{free};
    f2(3, 3 * GiB);
    CHECK(f2(3, 3 * GiB)->request.cpu == Approx(3));
}

TEST_CASE("phase: memory comes down at once once the container has shown its working set",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    // The memory recommended after these samples, from 8 GiB in force.
    const auto after = [&](double cpu, std::vector<double> memory, double busy_cpu = 0.1,
                           double horizon_s = 0) {
        PhaseOptions o;
        o.busy_cpu = busy_cpu;
        o.horizon_s = horizon_s;
        o.memory_min_headroom = 0;
        PhaseRecommender r(m, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (double gib : memory) a = feed(cpu, gib * GiB, false, {4, 8 * GiB});
        REQUIRE(a);
        return a->request.memory / GiB;
    };
    // At work (0.5 cores) at its memory level: down to it at once (its p99, no margin here).
    CHECK(after(0.5, {0.5, 0.5, 0.45, 0.5}) == Approx(0.5));
    // Idle before its start, or its memory still growing at every sample: half of 8 GiB at most.
    CHECK(after(0.05, {0.5, 0.5, 0.45, 0.5}) == Approx(4));
    CHECK(after(0.5, {0.35, 0.4, 0.45, 0.5}) == Approx(4));
    // Steps of 0.1% are noise, not a ramp: it has shown its working set.
    CHECK(after(0.5, {0.4, 0.5, 0.5005, 0.501}) == Approx(0.501));
    // Without the release, the bound holds too.
    CHECK(after(0.5, {0.5, 0.5, 0.45, 0.5}, 0) == Approx(4));
    // Not before it has run for a horizon (samples 15 s apart): an allocation holds that long, and
    // a job busy at a flat level for its first seconds may be importing, not training yet. Till
    // then it is ready for a step of memory_next_step (4) times its level, if that is below half.
    CHECK(after(0.5, {0.5, 0.5, 0.45, 0.5}, 0.1, 60) == Approx(2));         // 45 s
    CHECK(after(0.5, {0.5, 0.5, 0.5, 0.45, 0.5}, 0.1, 60) == Approx(0.5));  // 60 s
    CHECK(after(0.5, {1.5, 1.5, 1.45, 1.5}, 0.1, 60) == Approx(4));         // 6 GiB: half
}

TEST_CASE(
    "phase: memory still ramping is not cut below memory_next_step times its latest usage, nor "
    "below its growth over those samples times it",
    "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    // The memory recommended after these samples, at work, from `in_force` GiB.
    const auto after = [&](std::vector<double> memory, double in_force, double step = 4) {
        PhaseOptions o;
        o.memory_next_step = step;
        o.memory_keep = 0;  // only the ramp holds memory up
        o.memory_min_headroom = 0;
        PhaseRecommender r(m, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (double gib : memory) a = feed(0.5, gib * GiB, false, {4, in_force * GiB});
        REQUIRE(a);
        return a->request.memory / GiB;
    };
    // Growing at every one of its last four samples: four times 1.3 GiB, not the ramp's level.
    CHECK(after({1.0, 1.1, 1.2, 1.3}, 8) == Approx(5.2));
    // Never above what is in force: the ramp holds a request, it does not raise one.
    CHECK(after({1.0, 1.1, 1.2, 1.3}, 4) == Approx(4));
    // A steeper ramp, 8x over those samples, may go on as steeply: eight times its latest usage.
    CHECK(after({0.02, 0.05, 0.08, 0.16}, 2) == Approx(1.28));
    CHECK(after({0.02, 0.05, 0.08, 0.16}, 1) == Approx(1));
    // Levelled off (or noise of 0.1%): cut to its level as before.
    const double levelled = after({1.0, 1.1, 1.3, 1.3}, 8);
    CHECK(levelled < 2);
    CHECK(levelled >= 1.3);
    CHECK(after({1.0, 1.3, 1.3005, 1.301}, 8) < 2);
    // Off at 0; never negative.
    CHECK(after({1.0, 1.1, 1.2, 1.3}, 8, 0) < 2);
    PhaseOptions negative;
    negative.memory_next_step = -1;
    CHECK_THROWS_AS(PhaseRecommender(m, negative), model::InputError);
}

TEST_CASE(
    "phase: memory that steps up at its latest reading is not cut until a reading that does not",
    "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    const Amount in_force{2, 4 * GiB};
    // The requests recommended after each reading (cores, GiB of memory), from `in_force`.
    const auto after = [&](std::vector<std::pair<double, double>> readings, double step = 4) {
        PhaseOptions o;
        o.memory_next_step = step;
        PhaseRecommender r(m, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (const auto& [cpu, gib] : readings) a = feed(cpu, gib * GiB, false, in_force);
        REQUIRE(a);
        return std::pair{a->request.cpu, a->request.memory / GiB};
    };
    // Idle at 0.22 GiB (waiting for its peers), then 0.99 at a reading: the step may come again
    // before the next resize, so nothing is cut at this reading, CPU neither (a cut of CPU alone
    // would start the cooldown and hold memory for it).
    const std::vector<std::pair<double, double>> waited = {{0.01, 0.22}, {0.01, 0.22}, {0.01, 0.22},
                                                           {0.01, 0.22}, {0.01, 0.22}, {1.3, 0.99}};
    CHECK(after(waited) == std::pair{2.0, 4.0});
    // The next reading that does not step lets the cut through.
    std::vector<std::pair<double, double>> settled = waited;
    settled.push_back({1.3, 0.99});
    CHECK(after(settled).second < 4);
    CHECK(after(settled).first < 2);
    // Before the step, idle, memory came down by half (memory_keep); without memory_next_step
    // the step does not hold it either.
    CHECK(after({waited.begin(), waited.end() - 1}).second == Approx(2));
    CHECK(after(waited, 0).second < 4);
    // Climbing back after a dip is no step, nor is growth within memory_noise.
    CHECK(after({{0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 0.5}, {0.5, 1}}).second < 4);
    CHECK(after({{0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 1}, {0.5, 1.005}}).second < 4);
}

TEST_CASE("phase: memory is never cut to the very usage, whatever the margin", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    // The memory recommended to a container at work at a flat level, from 8 GiB in force.
    const auto flat_at = [&](double gib, double margin, double min_headroom) {
        PhaseOptions o;
        o.margins = {0.1, margin};
        o.memory_min_headroom = min_headroom;
        PhaseRecommender r(m, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (int i = 0; i < 6; ++i) a = feed(0.5, gib * GiB, false, {4, 8 * GiB});
        REQUIRE(a);
        return a->request.memory / GiB;
    };
    // At a margin of 0 the next 64 MiB of the allocator's growth would kill it: 64 MiB stay.
    CHECK(flat_at(0.5, 0, 64 * MiB) == Approx(0.5 + 1.0 / 16));
    // Where the margin gives more, the margin holds.
    CHECK(flat_at(2, 0.1, 64 * MiB) == Approx(2.2));
    // 0: no such floor.
    CHECK(flat_at(0.5, 0, 0) == Approx(0.5));
    // By default 384 MiB stay, more than the 10% margin of a small container: a curriculum flat
    // at 418 MiB whose next stage rose 311 MiB in one sample, and a GAN flat at 682 MiB whose
    // evaluation rose 340 MiB, are not killed; at 256 MiB the curriculum was (the last check).
    const double headroom = PhaseOptions{}.memory_min_headroom;
    const double curriculum = flat_at(418 * MiB / GiB, 0.1, headroom);
    CHECK(curriculum == Approx((418 + 384) * MiB / GiB));
    CHECK(curriculum > (418 + 311) * MiB / GiB);
    CHECK(flat_at(682 * MiB / GiB, 0.1, headroom) > (682 + 340) * MiB / GiB);
    CHECK_FALSE(flat_at(418 * MiB / GiB, 0.1, 256 * MiB) > (418 + 311) * MiB / GiB);
}

TEST_CASE("phase: memory is never cut below what its last samples used", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0, 0};
    o.memory_quantile = 0.5;  // the estimate: the median of its samples, below its peaks
    o.memory_keep = 0;
    PhaseRecommender r(m, o);
    Feed feed{r};
    const auto memory_after = [&](double gib) {
        const std::optional<Allocation> a = feed(0.5, gib * GiB, false, {4, 8 * GiB});
        REQUIRE(a);
        return a->request.memory / GiB;
    };
    // A job swinging between 1.4 and 1.8 GiB, read between its peaks: the peak of its last
    // trend_samples (4) samples holds, not the latest reading.
    for (const double gib : {1.4, 1.4, 1.8, 1.4, 1.4}) feed(0.5, gib * GiB, false, {4, 8 * GiB});
    CHECK(memory_after(1.4) == Approx(1.8));
    // A peak older than that no longer holds.
    CHECK(memory_after(1.4) == Approx(1.4));
}

TEST_CASE("phase: memory that spiked and came back down is provisioned for a higher spike",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    // The memory recommended after these samples (in phase 0, whose own usage is the estimate),
    // from 8 GiB in force, without margins.
    const auto after = [&](std::vector<double> memory, double factor) {
        PhaseOptions o = sizing_only();
        o.margins = {0, 0};
        o.memory_quantile = 1;
        o.memory_spike_factor = factor;
        PhaseRecommender r(m, o);
        Feed feed{r};
        std::optional<Allocation> a;
        for (double gib : memory) a = feed(0.5, gib * GiB, false, {4, 8 * GiB});
        REQUIRE(a);
        return a->request.memory / GiB;
    };
    // Flat at 0.6 GiB with one evaluation at 1 GiB: the median plus twice the spike's height.
    const std::vector<double> spiked = {0.6, 0.6, 0.6, 1.0, 0.6, 0.6, 0.6};
    CHECK(after(spiked, 2) == Approx(0.6 + 2 * 0.4));
    // Off (1): the peak seen.
    CHECK(after(spiked, 1) == Approx(1.0));
    // While at its peak, or climbing to it, its usage is no spike that came back down.
    CHECK(after({0.6, 0.6, 0.6, 0.8, 1.0}, 2) == Approx(1.0));
    // Flat: nothing spiked.
    CHECK(after({0.6, 0.6, 0.6, 0.6}, 2) == Approx(0.6));
}

TEST_CASE("phase: after an OOM kill memory grows past the step bound", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;
    o.first_resize_samples = 0;
    o.margins = {0, 0};
    PhaseRecommender r(m, o);
    Sample s = at(15, 0.5, 0.9 * GiB, {1, 1 * GiB});
    std::vector<double> features = {0.5, 0.9 * GiB};
    s.features = features.data();
    s.limit = {1, 4 * GiB};  // killed at a 4 GiB limit: the bump is 4.8 GiB, past twice 1 GiB
    r.observe(s);
    s.timestamp = 30;
    s.oom_killed = true;
    r.observe(s);
    const std::optional<Allocation> a = r.recommend(nullptr);
    REQUIRE(a);
    CHECK(a->request.memory == Approx(4.8 * GiB));
    CHECK(a->request.cpu <= 2);
}

TEST_CASE("phase: a step held back by the bound is no miss for the CPU margin", "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;
    o.first_resize_samples = 0;
    o.margins = {0.1, 0};
    o.cpu_target = 0.95;
    o.max_growth = 2;
    PhaseRecommender r(m, o);
    Feed feed{r};
    // 3 cores in use, 1 in force: every recommendation is held at 2 cores, below the usage.
    for (int i = 0; i < 20; ++i)
        CHECK(feed(3, 3 * GiB).value_or(Allocation{}).request.cpu <= 2 + 1e-9);
    // Once 4 cores are in force, the estimate's own margin shows: no more than the 10% given
    // (20 counted misses would have added about 0.05 * 0.95 * 20 = 0.95 to it).
    const std::optional<Allocation> a = feed(3, 3 * GiB, false, {4, 8 * GiB});
    REQUIRE(a);
    CHECK(a->request.cpu <= 3 * 1.1 + 1e-9);
}

TEST_CASE("phase: samples throttled at the CPU limit ask for throttle_growth times the limit",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.cpu_target = 0.95;  // throttled in more than 5% of its periods: usage is below demand
    o.adapt_samples = 0;  // the model's statistics: phase 0's CPU p95 is 0.6
    o.throttle_growth = 1.5;
    ThrottledFeed feed;
    feed.step = 2;  // a recorder's samples
    auto observe = [&](PhaseRecommender& r, double cpu, double throttled) {
        return feed(r, cpu, 1, throttled);
    };
    PhaseRecommender r(m, o);
    observe(r, 0.5, 0);
    CHECK(observe(r, 0.5, 0) == Approx(0.6));  // phase 0's p95
    // At its limit of 1, throttled: one 2 s sample is within the target, two in a row (4 s, more
    // than throttled_seconds' 3) ask for 1.5 x the limit.
    CHECK(observe(r, 1, 0.5) < 1.5);
    CHECK(observe(r, 1, 0.5) == Approx(1.5));
    CHECK(observe(r, 1, 0.04) < 1.5);  // throttled within the target's 5%: no growth
    CHECK(observe(r, 1, 0.5) < 1.5);   // and the run begins again
    CHECK(observe(r, 1, 0.5) == Approx(1.5));
    CHECK(observe(r, 1, 0.5) == Approx(1.5));
    CHECK(observe(r, 0.5, 0) < 1.5);  // not throttled any more: usage is demand again

    // One sample that covers a 15 s tick, throttled, is throttling for 15 s: the growth at once.
    feed.step = 15;
    PhaseRecommender ticked(m, o);
    observe(ticked, 0.5, 0);
    observe(ticked, 0.5, 0);
    CHECK(observe(ticked, 1, 0.5) == Approx(1.5));
    // throttled_seconds 0: the growth comes at the first throttled sample, however short.
    feed.step = 2;
    o.throttled_seconds = 0;
    PhaseRecommender at_first(m, o);
    observe(at_first, 0.5, 0);
    observe(at_first, 0.5, 0);
    CHECK(observe(at_first, 1, 0.5) == Approx(1.5));
    o.throttled_seconds = -1;
    CHECK_THROWS_AS(PhaseRecommender(m, o), model::InputError);
    o.throttled_seconds = 3;

    // A throttled sample is a miss for the online CPU margin, whatever the usage shows.
    o.throttle_growth = 0;
    PhaseRecommender missed(m, o), met(m, o);
    for (PhaseRecommender* x : {&missed, &met}) {
        observe(*x, 0.5, 0);
        observe(*x, 0.5, 0);
    }
    observe(missed, 0.55, 1);
    observe(met, 0.55, 0);
    CHECK(observe(missed, 0.5, 0) > observe(met, 0.5, 0));
}

TEST_CASE("phase: throttled in most periods, with its throttled seconds, CPU goes to its demand",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.cpu_target = 0.95;
    o.adapt_samples = 0;
    o.cpu_step = 0;  // the margin stays 0.1
    o.margins = {0.1, 0};
    ThrottledFeed feed;
    auto observe = [&](PhaseRecommender& r, double cpu, double limit, double throttled,
                       double cores) {
        feed.throttled_cores = cores;
        return feed(r, cpu, limit, throttled);
    };
    PhaseRecommender r(m, o);
    observe(r, 0.5, 1, 0, 0);
    observe(r, 0.5, 1, 0, 0);
    // Wanting 3 cores under a limit of 1 in every period: 2 cores' worth throttled. Its demand
    // plus the margin, not 1.5x the limit.
    CHECK(observe(r, 1, 1, 1, 2) == Approx(3 * 1.1));
    // In 60% of its periods, for 0.6 s/s under a limit of 2: 3 cores in them, 1.6 in the rest
    // (2 x 0.6 + 1.6 x 0.4 = 1.84 used).
    CHECK(observe(r, 1.84, 2, 0.6, 0.6) == Approx(3 * 1.1));
    // A window that began under a lower limit (raised from 1 to 2 within it) counts more
    // throttled seconds than the new limit leaves: all it used and missed bounds its demand.
    CHECK(observe(r, 1.5, 2, 0.8, 1.5) == Approx((1.5 + 1.5) / 0.8 * 1.1));
    // Throttled in fewer than half its periods, bursts: the mean excess does not say how far
    // its bursts went, and it grows by throttle_growth.
    CHECK(observe(r, 1.8, 2, 0.3, 0.3) == Approx(2 * o.throttle_growth));
    // Throttled seconds not measured (a Prometheus without them): the growth.
    CHECK(observe(r, 2, 2, 1, std::nan("")) == Approx(2 * o.throttle_growth));
}

TEST_CASE("phase: throttled below a demand it showed, CPU goes back to that demand",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0.1, 0};
    o.adapt_samples = 0;  // the model's statistics: phase 0's CPU p95 is 0.6
    o.throttle_growth = 1.5;
    ThrottledFeed observe;
    PhaseRecommender r(m, o);
    // 0.8 cores in use, unthrottled at 1 core; then cut to 0.7 and throttled there twice: its
    // demand of 0.8 is known, so 0.8 x 1.1 (1.5 x 0.7 = 1.05 without it).
    observe(r, 0.8, 1, 0);
    observe(r, 0.8, 1, 0);
    observe(r, 0.7, 0.7, 1);
    CHECK(observe(r, 0.7, 0.7, 1) == Approx(0.88));
    // Throttled at 0.9, above anything it used unthrottled: its demand is unknown, so the growth.
    observe(r, 0.9, 0.9, 1);
    CHECK(observe(r, 0.9, 0.9, 1) == Approx(1.35));

    // Never more than the growth: 3 cores used unthrottled earlier, throttled at 0.7 now.
    PhaseRecommender busier(m, o);
    observe(busier, 3, 4, 0);
    observe(busier, 0.7, 0.7, 1);
    CHECK(observe(busier, 0.7, 0.7, 1) == Approx(1.05));

    // Throttled in fewer than half its periods, it bursts above the limit between samples, and
    // the 0.8 it showed is an average: the growth (1.05, not 0.88).
    PhaseRecommender bursty(m, o);
    observe(bursty, 0.8, 1, 0);
    observe(bursty, 0.8, 1, 0);
    observe(bursty, 0.7, 0.7, 0.3);
    CHECK(observe(bursty, 0.7, 0.7, 0.3) == Approx(1.05));

    // Cut to its demand plus its margin (0.85, between 0.8 and 0.88) and throttled there: it wants
    // more than it ever showed, so the growth (1.275, below 1.1 x the 2 cores it was cut from),
    // not its old demand's 0.88 (which grows 3.5%, less than a resize's minimum change).
    PhaseRecommender wants_more(m, o);
    observe(wants_more, 0.8, 2, 0);
    observe(wants_more, 0.8, 2, 0);
    observe(wants_more, 0.85, 0.85, 1);
    CHECK(observe(wants_more, 0.85, 0.85, 1) == Approx(1.275));

    // Usage within its margin of the limit (0.95 x 1.1 >= 1) may be short of what it wants: no
    // demand known, so throttled at 0.9 it grows, up to 1.1 x the 1 core it was cut from (1.1;
    // 0.95 x 1.1 = 1.045 if it counted).
    PhaseRecommender pinned(m, o);
    observe(pinned, 0.95, 1, 0);
    observe(pinned, 0.9, 0.9, 1);
    CHECK(observe(pinned, 0.9, 0.9, 1) == Approx(1.1));
}

TEST_CASE("phase: throttled right after a cut, CPU grows at most 10% past where it was cut from",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.margins = {0.1, 0};
    o.adapt_samples = 0;
    o.throttle_growth = 1.5;
    // The CPU recommended after observing (usage, limit, throttled share) samples in turn.
    auto after = [&](std::initializer_list<std::array<double, 3>> samples) {
        PhaseRecommender r(m, o);
        ThrottledFeed observe;
        double cpu = 0;
        for (const auto& [usage, limit, share] : samples) cpu = observe(r, usage, limit, share);
        return cpu;
    };
    // Unthrottled at 2 cores (using 1.5), cut to 1.9 and throttled there in all its periods: its
    // demand was below 2 a sample ago, so 2.2, not 1.5 x 1.9 = 2.85.
    CHECK(after({{1.5, 2, 0}, {1.9, 1.9, 1}, {1.9, 1.9, 1}}) == Approx(2.2));
    // Raised since (to 2.2) and throttled again: the cut is forgotten, the growth (3.3).
    CHECK(after({{1.5, 2, 0}, {1.9, 1.9, 1}, {1.9, 1.9, 1}, {2.2, 2.2, 1}, {2.2, 2.2, 1}}) ==
          Approx(3.3));
    // Cut while throttled: nothing said its demand was below the request it was cut from.
    CHECK(after({{2, 2, 1}, {1.9, 1.9, 1}, {1.9, 1.9, 1}}) == Approx(2.85));
    // Throttled in fewer than half its periods, it bursts above the old request too: the growth.
    CHECK(after({{1.5, 2, 0}, {1.9, 1.9, 0.3}, {1.9, 1.9, 0.3}}) == Approx(2.85));
}

TEST_CASE("phase: on its starting request, a flat demand right at it grows 10%, not 1.5x",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o = sizing_only();
    o.first_resize_samples = 4;  // the first three samples run on the starting request
    o.adapt_samples = 0;
    o.throttle_growth = 1.5;
    auto first_tick = [&](double usage, double share) {
        PhaseRecommender r(m, o);
        ThrottledFeed observe;  // a 15 s tick
        return observe(r, usage, 2, share);
    };
    // One sample of seven throttled, the other six at 1.95 cores of the 2 it started with
    // (averaged with the throttled one at 2: 1.957): 2.2.
    CHECK(first_tick((6 * 1.95 + 2) / 7, 1.0 / 7) == Approx(2.2));
    // The other six at 1.5, well below the limit: it bursts above it, so the growth.
    CHECK(first_tick((6 * 1.5 + 2) / 7, 1.0 / 7) == Approx(3));
    // Throttled in most periods: a demand above the limit, so the growth too.
    CHECK(first_tick(2, 0.6) == Approx(3));

    // On a request the policy sized (after its first resize), the growth whatever the rest.
    o.first_resize_samples = 0;
    PhaseRecommender sized(m, o);
    ThrottledFeed observe;
    observe(sized, 1.95, 2, 0);
    CHECK(observe(sized, (6 * 1.95 + 2) / 7, 2, 1.0 / 7) == Approx(3));
}

TEST_CASE("phase: a container that starts below what it uses is resized before its first phase",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;  // the first resize waits for 4 samples of its own
    o.margins = {0.1, 0.1};
    o.cpu_target = 0.95;
    std::vector<double> features;
    auto first = [&](double cpu, double throttled, double memory) {
        PhaseRecommender r(m, o);
        Sample s = at(15, cpu, memory, {0.5, GiB});
        s.limit = {0.5, GiB};
        s.cpu_throttled = throttled;
        features = {cpu, memory};
        s.features = features.data();
        r.observe(s);
        return r.recommend(nullptr);
    };
    // Comfortable: it waits for samples of its own.
    CHECK_FALSE(first(0.3, 0, 0.3 * GiB));
    // Throttled at its 0.5 cores: 1.5x that now (on the request it started with, one throttled
    // sample is enough), and the memory it has kept (no cut on one sample).
    const std::optional<Allocation> throttled = first(0.5, 1, 0.3 * GiB);
    REQUIRE(throttled);
    CHECK(throttled->request.cpu == Approx(0.75));
    CHECK(throttled->request.memory == GiB);
    // Memory within its margin of the limit (0.95 x 1.1 >= 1 GiB): more memory now (the default
    // 384 MiB above its usage, more than the margin there), CPU kept.
    const std::optional<Allocation> memory = first(0.3, 0, 0.95 * GiB);
    REQUIRE(memory);
    CHECK(memory->request.memory == Approx(0.95 * GiB + 384 * MiB));
    CHECK(memory->request.cpu == 0.5);
}

TEST_CASE("phase: memory its own readings project past the request is raised at once",
          "[policy][phase]") {
    const model::PhaseModel m = two_phase_model();
    PhaseOptions o;  // the first resize waits for 4 samples of its own
    o.margins = {0.1, 0.1};
    o.horizon_s = 60;
    const Amount start{2, 4 * GiB};
    // Loading data: 1, 2, then 2.8 GiB of the 4 it started with. Not at risk at any reading (2.8 x
    // 1.1 and 2.8 + its last step are below 4 GiB), but its growth, 1.8 GiB over 30 s, carried over
    // the 60 s horizon as far as it was seen (30 s) reaches 4.6 GiB: 5.06 with the margin, before
    // its first resize.
    PhaseRecommender loading(m, o);
    Feed feed{loading};
    CHECK_FALSE(feed(1, 1 * GiB, false, start));
    CHECK_FALSE(feed(1, 2 * GiB, false, start));
    const std::optional<Allocation> raised = feed(1, 2.8 * GiB, false, start);
    REQUIRE(raised);
    CHECK(raised->request.memory == Approx(4.6 * 1.1 * GiB));
    CHECK(raised->limit.memory == raised->request.memory);
    CHECK(raised->request.cpu == 2);  // CPU waits for its first resize
    // Projected within the request, nothing: a container that is not growing keeps its start.
    PhaseRecommender flat(m, o);
    Feed feed_flat{flat};
    for (int i = 0; i < 3; ++i) CHECK_FALSE(feed_flat(1, 2 * GiB, false, start));
}
