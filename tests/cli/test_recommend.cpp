// `phasescale recommend`'s data model: the aggregation (histories replayed through the operator's
// tracker, pods grouped by workload) and the four renderings. No server: the command's reading
// from Prometheus is tested in tests/prom/prom_prometheus_test.cpp.

#include "recommend_report.hpp"

#include <phasescale/control/decision.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/model/pretrained.hpp>

#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <sstream>

using namespace phasescale;
using namespace phasescale::cli;
using Catch::Matchers::Contains;

namespace {

constexpr double kGi = 1024.0 * 1024 * 1024, kMi = 1024.0 * 1024;

std::shared_ptr<const model::PhaseModel> default_model() {
    static const auto m =
        std::make_shared<const model::PhaseModel>(model::resolve_model(model::kDefaultModelName));
    return m;
}

// A training container: start-up, then epochs of heavy training and light evaluation, sampled
// every 15 s; `scale` sizes it.
ContainerHistory history(const std::string& pod, double scale, std::size_t samples,
                         double start = 1.7e9) {
    ContainerHistory h;
    h.ns = "ml";
    h.pod = pod;
    h.container = "main";
    h.workload = "Job/train";
    h.current = {"main", {2.0, 8 * kGi}, {4.0, 8 * kGi}};
    for (std::size_t i = 0; i < samples; ++i) {
        const bool train = (i / 20) % 3 != 2;
        const double cpu = scale * (i < 8 ? 0.2 : train ? 1.6 : 0.4);
        const double memory = scale * (i < 8 ? 1 * kGi : train ? 5 * kGi : 3 * kGi);
        h.timestamps.push_back(start + 15.0 * static_cast<double>(i));
        h.usage.push_back({cpu, memory});
        h.features.push_back({cpu, memory});  // the default model's features
    }
    return h;
}

// The oracle: the operator's tracker and target_for, step by step, as the reconciler runs them,
// each target in force at the next sample (phasescale sizing the container through the window);
// the target at each phase's latest sample.
std::map<std::string, control::ContainerResources> direct(const ContainerHistory& h,
                                                          const control::AutoscalerSpec& spec) {
    control::ContainerTracker tracker(default_model(), spec);
    std::map<std::string, control::ContainerResources> last;
    control::ContainerResources sized = h.current;
    for (std::size_t i = 0; i < h.timestamps.size(); ++i) {
        control::TrackerInput in;
        in.timestamp = h.timestamps[i];
        in.features = h.features[i];
        in.usage = h.usage[i];
        in.allocated = {*sized.requests.cpu, *sized.requests.memory};
        in.limits = {*sized.limits.cpu, *sized.limits.memory};
        const control::TrackerStep step = tracker.step(in);
        if (!step.recommendation) continue;
        sized = control::target_for(sized, *step.recommendation, spec.policy_for(h.container),
                                    spec.min_change)
                    .wanted;
        last[control::phase_name(*default_model(), step.phase)] = sized;
    }
    return last;
}

// Runs the built phasescale with `arguments` (shell words, no quoting needed); stdout and stderr.
int run_phasescale(const std::string& arguments, std::string& output) {
    std::FILE* pipe =
        ::popen((std::string(PHASESCALE_CLI) + " " + arguments + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    output.clear();
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        output.append(buffer, n);
    const int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Report sample_report() {
    Report r;
    r.prometheus = "http://prometheus:9090";
    r.ns = "ml";
    r.window = "7d";
    r.model = "default";
    r.start = 1.7e9;
    r.end = 1.7e9 + 3600;
    ContainerReport c;
    c.ns = "ml";
    c.workload = "Job/train, \"big\"";
    c.container = "main";
    c.pods = {"train-0", "train-1"};
    c.samples = 200;
    c.current = {{0.5, 2 * kGi}, {1.0, std::nullopt}};
    PhaseRecommendation p0{"phase-0", 0, 150, 0.75, {{0.25, 800 * kMi}, {0.5, std::nullopt}}};
    PhaseRecommendation p1{"phase-1", 1, 50, 0.25, {{1.5, 1.5 * kGi}, {3.0, std::nullopt}}};
    c.phases = {p0, p1};
    c.overall = {{1.5, 1.5 * kGi}, {3.0, std::nullopt}};
    c.current_phase = "phase-1";
    c.risk.oom_kills = 2;
    c.risk.cpu_periods = 1000;
    c.risk.cpu_throttled_periods = 250;
    r.containers.push_back(c);
    return r;
}

}  // namespace

TEST_CASE("recommend: human quantities as kubectl writes them", "[recommend]") {
    CHECK(human_cpu(0.25) == "250m");
    CHECK(human_cpu(0.0001) == "1m");
    CHECK(human_cpu(1.5) == "1.5");
    CHECK(human_cpu(2) == "2");
    CHECK(human_cpu(std::nullopt) == "-");
    CHECK(human_memory(1.5 * kGi) == "1.5Gi");
    CHECK(human_memory(800 * kMi) == "800Mi");
    CHECK(human_memory(512 * 1024) == "512Ki");
    CHECK(human_memory(100) == "100");
    CHECK(human_memory(std::nullopt) == "-");
}

TEST_CASE("recommend: a container's phases get what the operator's tracker and bounds give",
          "[recommend]") {
    const ContainerHistory h = history("train-0", 1, 240);
    const control::AutoscalerSpec spec;
    const auto reports = recommend_containers({h}, default_model(), spec);
    REQUIRE(reports.size() == 1);
    const ContainerReport& r = reports[0];
    CHECK(r.samples == 240);
    CHECK(r.note.empty());
    const auto expected = direct(h, spec);
    REQUIRE(expected.size() >= 2);  // heavy and light epochs are different phases
    std::size_t with_recommendation = 0;
    double shares = 0;
    control::ResourceValues largest;
    for (const PhaseRecommendation& p : r.phases) {
        INFO(p.phase);
        shares += p.share;
        const auto it = expected.find(p.phase);
        if (it == expected.end()) {
            CHECK(!p.recommended.requests.cpu);
            continue;
        }
        ++with_recommendation;
        CHECK(p.recommended.requests == it->second.requests);
        CHECK(p.recommended.limits == it->second.limits);
        largest.cpu = std::max(largest.cpu.value_or(0), *p.recommended.requests.cpu);
        largest.memory = std::max(largest.memory.value_or(0), *p.recommended.requests.memory);
    }
    CHECK(with_recommendation == expected.size());
    CHECK(shares == Approx(1));
    CHECK(r.overall.requests == largest);
    CHECK(r.current.requests == h.current.requests);
    CHECK(r.current_phase != "");
}

TEST_CASE("recommend: the pods of one workload make one row: largest per phase, risks added",
          "[recommend]") {
    ContainerHistory small = history("train-0", 0.5, 200);
    ContainerHistory large = history("train-1", 1, 200, 1.7e9 + 100);
    large.current.requests.cpu = 3.0;
    small.risk = {1, 1000, 100};
    large.risk = {2, 3000, 900};
    ContainerHistory other = history("solo", 1, 200);
    other.workload = "Pod/solo";
    const control::AutoscalerSpec spec;
    const auto both = recommend_containers({small, large, other}, default_model(), spec);
    REQUIRE(both.size() == 2);
    const ContainerReport& job = both[0];
    CHECK(job.workload == "Job/train");
    CHECK(both[1].workload == "Pod/solo");
    CHECK(job.pods == std::vector<std::string>{"train-0", "train-1"});
    CHECK(job.samples == 400);
    CHECK(job.current.requests.cpu == 3.0);  // train-1 was seen last
    CHECK(job.risk.oom_kills == 3);
    CHECK(*job.risk.cpu_throttled_share() == Approx(0.25));

    const ContainerReport a = recommend_containers({small}, default_model(), spec)[0];
    const ContainerReport b = recommend_containers({large}, default_model(), spec)[0];
    for (const PhaseRecommendation& p : job.phases) {
        INFO(p.phase);
        std::size_t samples = 0;
        control::ResourceValues want;
        for (const ContainerReport* one : {&a, &b})
            for (const PhaseRecommendation& q : one->phases)
                if (q.phase == p.phase) {
                    samples += q.samples;
                    if (q.recommended.requests.cpu)
                        want.cpu = std::max(want.cpu.value_or(0), *q.recommended.requests.cpu);
                    if (q.recommended.requests.memory)
                        want.memory =
                            std::max(want.memory.value_or(0), *q.recommended.requests.memory);
                }
        CHECK(p.samples == samples);
        CHECK(p.recommended.requests == want);
    }
}

TEST_CASE("recommend: no recommendation says why", "[recommend]") {
    const control::AutoscalerSpec defaults;
    const auto few = recommend_containers({history("p", 1, 2)}, default_model(), defaults);
    CHECK_THAT(few[0].note, Contains("too few samples"));
    CHECK(!few[0].overall.requests.cpu);

    control::AutoscalerSpec off;
    control::ContainerPolicy policy;
    policy.container_name = "main";
    policy.enabled = false;
    off.container_policies.push_back(policy);
    const auto skipped = recommend_containers({history("p", 1, 100)}, default_model(), off);
    CHECK_THAT(skipped[0].note, Contains("mode is Off"));
    CHECK(skipped[0].phases.empty());
}

TEST_CASE("recommend: the table aligns current -> recommended, one row per phase", "[recommend]") {
    const std::string table = render_table(sample_report());
    CHECK_THAT(table, Contains("Namespace ml, window 7d, model default: 1 containers"));
    std::istringstream lines(table);
    std::string line, header, overall, phase0, phase1;
    std::getline(lines, line);
    std::getline(lines, line);
    std::getline(lines, header);
    std::getline(lines, overall);
    std::getline(lines, phase0);
    std::getline(lines, phase1);
    CHECK_THAT(header, Contains("CPU REQUEST"));
    CHECK_THAT(overall, Contains("500m -> 1.5"));
    CHECK_THAT(overall, Contains("2Gi -> 1.5Gi"));
    CHECK_THAT(overall, Contains("overall (now phase-1)"));
    CHECK_THAT(overall, Contains("25%"));
    CHECK_THAT(overall, !Contains("- -> -"));  // no memory limit now nor recommended: "-"
    CHECK_THAT(phase0, Contains("phase-0"));
    CHECK_THAT(phase0, Contains("800Mi"));
    CHECK_THAT(phase1, Contains("1.5Gi"));
    // Columns line up: each header starts where its values do.
    const std::size_t column = header.find("CPU REQUEST");
    CHECK(overall.substr(column, 4) == "500m");
    CHECK(phase0.substr(column, 4) == "250m");
    CHECK(header.find("MEMORY REQUEST") == overall.find("2Gi -> 1.5Gi"));
}

TEST_CASE("recommend: json, yaml and csv carry the same numbers", "[recommend]") {
    const Report report = sample_report();
    const nlohmann::json j = nlohmann::json::parse(render_json(report));
    const nlohmann::json& c = j["containers"][0];
    CHECK(c["workload"] == "Job/train, \"big\"");
    CHECK(c["current"]["requests"]["cpu"] == 0.5);
    CHECK(c["current"]["limits"]["memory"].is_null());
    CHECK(c["recommended"]["requests"]["memory"] == 1.5 * kGi);
    CHECK(c["phases"][0]["requests"]["cpu"] == 0.25);
    CHECK(c["phases"][1]["share"] == 0.25);
    CHECK(c["risk"]["oom_kills"] == 2);
    CHECK(c["risk"]["cpu_throttled_share"] == 0.25);

    // The YAML is the JSON's tree: parsed back, every value matches.
    const YAML::Node y = YAML::Load(render_yaml(report));
    const YAML::Node yc = y["containers"][0];
    CHECK(y["namespace"].as<std::string>() == "ml");
    CHECK(yc["workload"].as<std::string>() == "Job/train, \"big\"");
    CHECK(yc["pods"][1].as<std::string>() == "train-1");
    CHECK(yc["current"]["requests"]["cpu"].as<double>() == 0.5);
    CHECK(yc["current"]["limits"]["memory"].IsNull());
    CHECK(yc["phases"][1]["requests"]["memory"].as<double>() == 1.5 * kGi);
    CHECK(yc["risk"]["cpu_throttled_share"].as<double>() == 0.25);
    CHECK(yc["note"].as<std::string>() == "");

    const std::string csv = render_csv(report);
    std::istringstream lines(csv);
    std::string header, overall, phase0, phase1, extra;
    std::getline(lines, header);
    std::getline(lines, overall);
    std::getline(lines, phase0);
    std::getline(lines, phase1);
    CHECK(!std::getline(lines, extra));
    CHECK_THAT(header, Contains("namespace,workload,container,pods,phase,samples,share"));
    CHECK(overall ==
          "ml,\"Job/train, \"\"big\"\"\",main,2,overall,200,1,0.5,1,2147483648,,1.5,3,"
          "1610612736,,2,0.25");
    CHECK(phase0 ==
          "ml,\"Job/train, \"\"big\"\"\",main,2,phase-0,150,0.75,0.5,1,2147483648,,0.25,0.5,"
          "838860800,,2,0.25");
    CHECK_THAT(phase1, Contains(",phase-1,50,0.25,"));
    CHECK_THROWS_WITH(render(report, "xml"), Contains("use table, json, yaml or csv"));
}

TEST_CASE("recommend --help explains, a bad command line exits with code 2", "[recommend]") {
    std::string out;
    REQUIRE(run_phasescale("recommend --help", out) == 0);
    for (const char* mention :
         {"--prometheus", "--namespace", "--selector", "--window", "--model", "--autoscaler",
          "--output", "table,json,yaml,csv", "--bearer-token-file", "--ca-file", "--history-out",
          "kube-state-metrics", "docs/recommend.md"}) {
        INFO(mention << " in:\n" << out);
        CHECK_THAT(out, Contains(mention));
    }
    REQUIRE(run_phasescale("--help", out) == 0);
    CHECK_THAT(out, Contains("recommend"));
    CHECK(run_phasescale("recommend --namespace ml", out) == 2);
    CHECK_THAT(out, Contains("--prometheus is required"));
    CHECK(run_phasescale("recommend --prometheus http://127.0.0.1:1 --namespace ml -o xml", out) ==
          2);
    CHECK_THAT(out, Contains("--output"));
}
