// phasescale score-live: a recorded watch of live pods scored against the trace a replay
// exporter served them, by hand-computed numbers.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "run_cli.hpp"

#include <string>
#include <vector>

using Catch::Matchers::Contains;
using phasescale::testing::read_file;
using phasescale::testing::Run;
using phasescale::testing::run_cli;
using phasescale::testing::TempDir;

namespace {

// One execution: a sample every 10 s of trace time, 1 core and 1 GiB throughout.
std::string steady_trace(const TempDir& dir) {
    std::string csv = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    for (int i = 0; i < 60; ++i) csv += std::to_string(1700000000 + 10 * i) + ",job,1,1073741824\n";
    return dir.write("trace.csv", csv);
}

std::string event(double t, const char* type, const char* uid, const char* cpu, const char* memory,
                  const char* status_cpu, const char* status_memory) {
    nlohmann::json j = {{"t", t},
                        {"type", type},
                        {"pod", "trainer-0"},
                        {"uid", uid},
                        {"requests", {{"cpu", cpu}, {"memory", memory}}},
                        {"limits", {{"cpu", cpu}, {"memory", memory}}},
                        {"status_requests", nullptr}};
    if (status_cpu) j["status_requests"] = {{"cpu", status_cpu}, {"memory", status_memory}};
    return j.dump() + "\n";
}

}  // namespace

TEST_CASE("score-live scores the spec in force at each served sample, and counts what changed",
          "[cli]") {
    TempDir dir;
    const std::string trace = steady_trace(dir);
    // Speed 10 from unix 1000: sample k is served from wall second 1000 + k. Resized down at
    // 1010 (the status follows at 1011), deleted at 1020, re-created at 1022 with another UID,
    // resized up at 1040 (the status never follows).
    const std::string pods =
        dir.write("pods.jsonl", event(1000, "ADDED", "a", "2", "2Gi", "2", "2Gi") +
                                    event(1010, "MODIFIED", "a", "500m", "512Mi", "2", "2Gi") +
                                    event(1011, "MODIFIED", "a", "500m", "512Mi", "500m", "512Mi") +
                                    event(1020, "DELETED", "a", "500m", "512Mi", nullptr, nullptr) +
                                    event(1022, "ADDED", "b", "1", "2Gi", nullptr, nullptr) +
                                    event(1040, "MODIFIED", "b", "3", "2Gi", nullptr, nullptr));
    const Run run =
        run_cli(dir, {"score-live", "--trace", trace, "--namespace", "ns", "--speed", "10",
                      "--pod-map", "#0=trainer-0", "--start", "1000", "--pods", pods, "--from",
                      "1000", "--to", "1050", "--json", dir / "out.json"});
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out, Contains("ns ") && Contains("cpu_core_h"));
    const auto report = nlohmann::json::parse(read_file(dir / "out.json"));
    const auto& pod = report.at("pods").at("trainer-0");
    CHECK(pod.at("resizes") == 2);
    CHECK(pod.at("resizes_in_status") == 1);
    CHECK(pod.at("deletions") == 1);
    CHECK(pod.at("recreations") == 0);
    CHECK(pod.at("samples_without_pod") == 2);
    const auto& score = pod.at("score");
    // Core-seconds of trace time: 10 samples of 10 s at 2 cores, 10 at 0.5, 18 at 1, 10 at 3.
    CHECK(score.at("cpu").at("allocated").get<double>() == Approx(200 + 50 + 180 + 300));
    CHECK(score.at("cpu").at("samples") == 48);
    CHECK(score.at("cpu").at("fulfilment").get<double>() == Approx(38.0 / 48));
    // 1 GiB over a 512Mi limit from trace second 100 to 200: killed at 100, then at the restarts
    // after 10, 20 and 40 s of back-off (110, 130, 170).
    CHECK(score.at("memory").at("oom_kills") == 4);
    CHECK(score.at("memory").at("oom_events") == 10);
    CHECK(report.at("total").at("resizes") == 2);
    CHECK(report.at("total").at("score").at("cpu").at("allocated") ==
          score.at("cpu").at("allocated"));
}

TEST_CASE("score-live refuses a pod the watch never saw, naming it", "[cli]") {
    TempDir dir;
    const std::string trace = steady_trace(dir);
    const std::string pods =
        dir.write("pods.jsonl", event(1000, "ADDED", "a", "2", "2Gi", "2", "2Gi"));
    const Run run = run_cli(dir, {"score-live", "--trace", trace, "--namespace", "ns", "--speed",
                                  "10", "--start", "1000", "--pods", pods, "--to", "1050"});
    CHECK(run.code == 2);
    CHECK_THAT(run.err, Contains("pod job") && Contains("never saw"));
}

namespace {

// A record of the VPA's status at `t` with these upper bounds (JSON line).
std::string bounds_record(double t, const std::string& upper_cpu, const std::string& upper_memory) {
    return nlohmann::json{{"t", t},
                          {"target", {{"cpu", "500m"}, {"memory", "512Mi"}}},
                          {"lowerBound", {{"cpu", "25m"}, {"memory", "250Mi"}}},
                          {"upperBound", {{"cpu", upper_cpu}, {"memory", upper_memory}}},
                          {"uncappedTarget", {{"cpu", "500m"}, {"memory", "512Mi"}}}}
               .dump() +
           "\n";
}

// score-live over `pods` and the VPA's records `vpa` (JSON lines) of the steady trace, with a
// served trace of 1 core and 1 GiB: trainer-0's outside_vpa_bounds.
nlohmann::json outside_vpa_bounds(TempDir& dir, const std::string& pods, const std::string& vpa) {
    const std::string trace = steady_trace(dir);
    std::string input = "pod.id,timestamp,cpu.usage.cores,mem.working.set,container\n";
    for (int i = 0; i < 5; ++i)
        input += "aggregate," + std::to_string(1000 + 5 * i) + ",1,1073741824,0\n";
    const std::string served = dir.write("served.csv", input);
    const Run run = run_cli(
        dir,
        {"score-live", "--trace",       trace,     "--namespace", "ns",     "--speed",     "10",
         "--pod-map",  "#0=trainer-0",  "--start", "1000",        "--pods", pods,          "--from",
         "1000",       "--to",          "1050",    "--vpa",       vpa,      "--vpa-input", served,
         "--json",     dir / "out.json"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    const auto report = nlohmann::json::parse(read_file(dir / "out.json"));
    return report.at("pods").at("trainer-0").at("outside_vpa_bounds");
}

}  // namespace

TEST_CASE("score-live counts a pod outside the VPA's bounds the updater acted on", "[cli]") {
    TempDir dir;
    // The pod's 2 cores are resized to 500m at 1010.5.
    const std::string pods =
        dir.write("pods.jsonl", event(1000, "ADDED", "a", "2", "2Gi", "2", "2Gi") +
                                    event(1010.5, "MODIFIED", "a", "500m", "512Mi", "2", "2Gi"));
    SECTION("bounds recorded at 1010.3, between two points of the 1 s grid") {
        const auto outside = outside_vpa_bounds(
            dir, pods, dir.write("vpa.jsonl", bounds_record(1010.3, "1", "1Gi")));
        CHECK(outside.at("seconds") == 0);  // no grid point between the record and the resize
        CHECK(outside.at("at_records") == 1);
    }
    SECTION("bounds the recorder's watch delivered after the resize") {
        // Wide bounds recorded at 1004, narrow ones at 1010.7: the recommender wrote them after
        // 1004, the updater acted on them at 1010.5.
        const auto outside =
            outside_vpa_bounds(dir, pods,
                               dir.write("vpa.jsonl", bounds_record(1004, "4", "4Gi") +
                                                          bounds_record(1010.7, "1", "4Gi")));
        CHECK(outside.at("seconds") == 0);  // inside every bounds recorded before the resize
        CHECK(outside.at("at_records") == 1);
    }
}
