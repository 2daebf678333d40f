// phasescale as a user runs it: --version, phase names (train, inspect, name-phases),
// train --container, and whole timestamps written in full by predict.
#include <phasescale/version.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "run_cli.hpp"

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using phasescale::testing::read_file;
using phasescale::testing::Run;
using phasescale::testing::run_cli;
using phasescale::testing::TempDir;

namespace {

// Two containers of one pod, named as export-trace names them: `main` works in two phases,
// `sidecar` idles. Samples every 15 s from 1700000000 (`1.7e+09` as the shortest double).
std::string two_container_trace(const TempDir& dir) {
    std::string csv = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    for (int i = 0; i < 40; ++i) {
        const double cpu = (i / 10) % 2 == 0 ? 0.5 + 0.01 * i : 3.0 + 0.02 * i;
        csv += std::to_string(1700000000 + 15 * i) + ",ml/job-0/main," + std::to_string(cpu) + "," +
               std::to_string(1e9 + 1e7 * i) + "\n";
    }
    for (int i = 0; i < 40; ++i)
        csv += std::to_string(1700000000 + 15 * i) + ",ml/job-0/sidecar," +
               std::to_string(0.01 + 0.001 * (i % 3)) + "," + std::to_string(5e7 + 1e5 * i) + "\n";
    return dir.write("trace.csv", csv);
}

nlohmann::json model_at(const std::string& path) {
    return nlohmann::json::parse(read_file(path));
}

}  // namespace

TEST_CASE("phasescale --version prints the version and the revision", "[cli]") {
    TempDir dir;
    const Run version = run_cli(dir, {"--version"});
    CHECK(version.code == 0);
    CHECK(version.out == std::string("phasescale ") + phasescale::kVersion + " (revision " +
                             phasescale::kRevision + ")\n");
}

TEST_CASE("train names the phases, inspect shows them, name-phases renames them", "[cli]") {
    TempDir dir;
    const std::string trace = two_container_trace(dir), model = dir / "m.json";
    Run train = run_cli(dir, {"train", "--trace", trace, "--epochs", "3", "--phases", "2", "--out",
                              model, "--seed", "3"});
    INFO(train.err);
    REQUIRE(train.code == 0);
    const auto names = model_at(model).at("phase_names").get<std::vector<std::string>>();
    REQUIRE(names.size() == 2);
    CHECK(names[0] != names[1]);
    const Run inspect = run_cli(dir, {"inspect", model});
    CHECK(inspect.code == 0);
    for (const auto& name : names) CHECK_THAT(inspect.out, Contains(name));

    // Listing changes nothing; --set writes the model with the new name.
    const Run list = run_cli(dir, {"name-phases", model});
    CHECK(list.code == 0);
    CHECK_THAT(list.out, Contains(names[0]) && Contains(names[1]));
    const Run renamed =
        run_cli(dir, {"name-phases", model, "--set", "1=data-load", "--out", dir / "renamed.json"});
    INFO(renamed.err);
    REQUIRE(renamed.code == 0);
    CHECK(model_at(dir / "renamed.json")["phase_names"] == nlohmann::json{names[0], "data-load"});
    CHECK(model_at(model)["phase_names"] == nlohmann::json(names));  // --out: the model stays
    // In place, then --derive names them afresh.
    REQUIRE(run_cli(dir, {"name-phases", model, "--set", "0=eval"}).code == 0);
    CHECK(model_at(model)["phase_names"][0] == "eval");
    REQUIRE(run_cli(dir, {"name-phases", model, "--derive"}).code == 0);
    CHECK(model_at(model)["phase_names"] == nlohmann::json(names));

    // Names that are no label values, clashes and phases the model lacks: exit code 2, no file.
    const auto refused = [&](const std::vector<std::string>& sets, const std::string& says) {
        std::vector<std::string> args = {"name-phases", model, "--out", dir / "bad.json"};
        for (const auto& s : sets) args.insert(args.end(), {"--set", s});
        const Run r = run_cli(dir, args);
        INFO(r.err);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(says));
        CHECK_FALSE(std::filesystem::exists(dir / "bad.json"));
    };
    refused({"0=Data_Load"}, "may hold only lowercase letters, digits and '-'");
    refused({"0=unknown"}, "means no phase");
    refused({"0=a", "1=a"}, "phases 0 and 1 would both be named \"a\"");
    refused({"2=a"}, "'2' is not a phase of this model (0 to 1)");
    refused({"x"}, "write PHASE=NAME");
    const Run builtin = run_cli(dir, {"name-phases", "default", "--set", "0=a"});
    CHECK(builtin.code == 2);
    CHECK_THAT(builtin.err, Contains("give --out FILE"));
}

TEST_CASE("the default model's phases have names, and inspect default shows them", "[cli]") {
    TempDir dir;
    const Run inspect = run_cli(dir, {"inspect", "default"});
    CHECK(inspect.code == 0);
    CHECK_THAT(inspect.out, Contains("cpu-low-mem-low") && Contains("cpu-high-mem-high"));
}

TEST_CASE("train --container keeps only those containers' series", "[cli]") {
    TempDir dir;
    const std::string trace = two_container_trace(dir);
    const auto executions = [&](const std::vector<std::string>& containers) {
        std::vector<std::string> args = {"train",    "--trace", trace,   "--epochs",    "2",
                                         "--phases", "2",       "--out", dir / "m.json"};
        for (const auto& c : containers) args.insert(args.end(), {"--container", c});
        const Run r = run_cli(dir, args);
        INFO(r.err);
        REQUIRE(r.code == 0);
        return model_at(dir / "m.json")["training"]["executions"].get<int>();
    };
    CHECK(executions({}) == 2);
    CHECK(executions({"main"}) == 1);
    CHECK(executions({"main", "sidecar"}) == 2);

    const Run none = run_cli(
        dir, {"train", "--trace", trace, "--container", "trainer", "--out", dir / "none.json"});
    CHECK(none.code == 1);
    CHECK_THAT(none.err, Contains("--container trainer: no execution of the trace is in that "
                                  "container; its containers: main, sidecar") &&
                             Contains("NAMESPACE/POD/CONTAINER"));
    CHECK_FALSE(std::filesystem::exists(dir / "none.json"));
    CHECK_THAT(run_cli(dir, {"train", "--help"}).out, Contains("--container"));
}

TEST_CASE("predict writes whole timestamps in full, fractional ones exactly", "[cli]") {
    TempDir dir;
    const std::string trace = dir.write("t.csv",
                                        "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
                                        "1700000000,a,0.5,1000000000\n"
                                        "1700000000.5,a,0.6,1000000000\n"
                                        "1700000015,a,0.7,1100000000\n");
    const Run predict =
        run_cli(dir, {"predict", "--model", "default", "--trace", trace, "--out", dir / "p.csv"});
    INFO(predict.err);
    REQUIRE(predict.code == 0);
    const std::string out = read_file(dir / "p.csv");
    CHECK_THAT(out, Contains("\na,1700000000,0,") && Contains("\na,1700000000.5,1,") &&
                        Contains("\na,1700000015,2,"));
    CHECK(out.find("e+") == std::string::npos);
}
