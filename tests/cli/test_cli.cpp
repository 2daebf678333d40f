// End-to-end tests of the phasescale binary: they run it as a user would, with outputs in a
// temporary directory. Tests run from the project root, so ../shared/data is reachable.

#include <phasescale/model/model.hpp>
#include <phasescale/model/train.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "run_cli.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using phasescale::testing::read_file;
using phasescale::testing::Run;
using phasescale::testing::run_cli;
using phasescale::testing::TempDir;

namespace {

const std::string kData = "../shared/data/ai4dl/";
const std::string kPretrained = kData + "ai4dl-pretrained.model.json";

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> split(const std::string& line, char separator) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, separator)) fields.push_back(field);
    if (!line.empty() && line.back() == separator) fields.emplace_back();
    return fields;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Every phase exactly, every activation within 1e-5, the same empty cells, row by row.
void check_parity(const std::string& trace, const std::string& golden) {
    TempDir dir;
    Run run = run_cli(
        dir, {"predict", "--model", kPretrained, "--trace", trace, "--out", dir / "phases.csv"});
    INFO(run.err);
    REQUIRE(run.code == 0);

    std::vector<std::string> expected = lines_of(read_file(golden));
    std::vector<std::string> actual = lines_of(read_file(dir / "phases.csv"));
    REQUIRE(expected.size() > 1);
    REQUIRE(actual.size() == expected.size());
    REQUIRE(actual[0] == expected[0]);

    std::size_t mismatches = 0;
    std::size_t phased = 0;
    std::string first_mismatch;
    for (std::size_t r = 1; r < expected.size(); ++r) {
        std::vector<std::string> want = split(expected[r], ',');
        std::vector<std::string> got = split(actual[r], ',');
        bool same = want.size() == got.size();
        for (std::size_t c = 0; same && c < want.size(); ++c) {
            if (c < 4 || want[c].empty() || got[c].empty()) {
                same = want[c] == got[c];  // id, timestamp, index, phase; empty cells stay empty
            } else {
                same = std::abs(std::stod(want[c]) - std::stod(got[c])) <= 1e-5;
            }
        }
        if (want.size() > 3 && !want[3].empty()) ++phased;
        if (!same && mismatches++ == 0) {
            first_mismatch = "line " + std::to_string(r + 1) + "\n  golden: " + expected[r] +
                             "\n  actual: " + actual[r];
        }
    }
    INFO(first_mismatch);
    CHECK(mismatches == 0);
    CHECK(phased > 0);
}

}  // namespace

TEST_CASE("predict with the AI4DL model reproduces the golden phases of sample.csv", "[cli]") {
    check_parity(kData + "sample.csv", kData + "sample.golden.csv");
}

TEST_CASE("predict with the AI4DL model reproduces the golden phases of sample-vr.csv", "[cli]") {
    check_parity(kData + "sample-vr.csv", kData + "sample-vr.golden.csv");
}

TEST_CASE("predict --out - writes the CSV to stdout", "[cli]") {
    TempDir dir;
    Run to_file = run_cli(dir, {"predict", "--model", kPretrained, "--trace", kData + "sample.csv",
                                "--out", dir / "phases.csv"});
    REQUIRE(to_file.code == 0);
    Run to_stdout = run_cli(
        dir, {"predict", "--model", kPretrained, "--trace", kData + "sample.csv", "--out", "-"});
    REQUIRE(to_stdout.code == 0);
    CHECK(to_stdout.out == read_file(dir / "phases.csv"));
}

TEST_CASE("predict --true-phases reports AMI and changes per hour against the logged phases",
          "[cli]") {
    const std::string torch = "../shared/data/torch/";
    TempDir dir;
    Run plain = run_cli(
        dir, {"predict", "--model", "default", "--trace", torch + "dev01-mlp.csv", "--timeline"});
    Run run = run_cli(dir, {"predict", "--model", "default", "--trace", torch + "dev01-mlp.csv",
                            "--timeline", "--true-phases", torch + "extra/dev01-mlp.phases.csv"});
    INFO(run.err);
    REQUIRE(plain.code == 0);
    REQUIRE(run.code == 0);
    // The timeline first, as without the option, then the agreement table.
    REQUIRE(run.out.rfind(plain.out, 0) == 0);
    std::vector<std::string> table = lines_of(run.out.substr(plain.out.size()));
    INFO(run.out);
    REQUIRE(table.size() == 4);
    for (const char* field :
         {"execution", "samples", "compared", "AMI raw", "inferred changes/h", "true changes/h"}) {
        CHECK(table[1].find(field) != std::string::npos);
    }
    for (std::size_t row = 2; row < 4; ++row) {
        std::istringstream in(table[row]);
        std::string id;
        std::size_t samples = 0, compared = 0;
        double ami = 0, inferred_per_hour = -1, true_per_hour = -1;
        in >> id >> samples >> compared >> ami >> inferred_per_hour >> true_per_hour;
        REQUIRE_FALSE(in.fail());
        CHECK(id == (row == 2 ? "dev01-mlp" : "overall"));
        CHECK(samples == 42);
        CHECK(compared > 0);
        CHECK(compared < samples);  // the first samples have no inferred phase yet
        CHECK(ami >= -1);
        CHECK(ami <= 1);
        CHECK(inferred_per_hour >= 0);
        CHECK(true_per_hour > 0);  // 12 epochs of train and val in 84 s
    }
}

TEST_CASE("predict --true-phases with a file for no execution is a usage error", "[cli]") {
    const std::string torch = "../shared/data/torch/";
    TempDir dir;
    Run other =
        run_cli(dir, {"predict", "--model", "default", "--trace", torch + "dev01-mlp.csv", "--out",
                      dir / "phases.csv", "--true-phases", torch + "extra/dev02-cnn.phases.csv"});
    CHECK(other.code == 2);
    CHECK(other.err.rfind("phasescale: error: ", 0) == 0);
    CHECK(other.err.find("dev02-cnn.phases.csv") != std::string::npos);
    CHECK(other.err.find("no execution \"dev02-cnn\"") != std::string::npos);
    CHECK(other.err.find("dev01-mlp") != std::string::npos);  // what the trace does have
    CHECK_FALSE(fs::exists(dir / "phases.csv"));

    // A name that says no execution at all, and two files for one execution.
    const std::string renamed = dir / "phases.csv.txt";
    fs::copy_file(torch + "extra/dev01-mlp.phases.csv", renamed);
    Run unnamed = run_cli(dir, {"predict", "--model", "default", "--trace", torch + "dev01-mlp.csv",
                                "--true-phases", renamed});
    CHECK(unnamed.code == 2);
    CHECK(unnamed.err.find("<execution id>.phases.csv") != std::string::npos);
    const std::string twice = torch + "extra/dev01-mlp.phases.csv";
    Run duplicate = run_cli(dir, {"predict", "--model", "default", "--trace",
                                  torch + "dev01-mlp.csv", "--true-phases", twice + "," + twice});
    CHECK(duplicate.code == 2);
    CHECK(duplicate.err.find("more than one file") != std::string::npos);
    // The table goes to stdout, so stdout cannot also hold the CSV.
    CHECK(run_cli(dir, {"predict", "--model", "default", "--trace", torch + "dev01-mlp.csv",
                        "--out", "-", "--true-phases", twice})
              .code == 2);
}

TEST_CASE("a model trained with few epochs loads, predicts every row and inspects", "[cli]") {
    TempDir dir;
    const std::string model_path = dir / "model.json";
    Run train = run_cli(dir, {"train", "--trace", kData + "sample.csv", "--epochs", "3", "--phases",
                              "3", "--restarts", "2", "--out", model_path});
    INFO(train.err);
    REQUIRE(train.code == 0);
    const std::string summary =
        "trained " + model_path + ": 2 features, 10 hidden, history 3, 3 phases";
    CHECK(train.out.rfind(summary, 0) == 0);
    CHECK(train.out.find("final reconstruction error") != std::string::npos);
    CHECK(train.err.empty());  // not a terminal: no progress bar

    phasescale::model::PhaseModel model = phasescale::model::load_model(model_path);
    CHECK(model.phases() == 3);
    CHECK(model.features == phasescale::model::kDefaultFeatures);
    REQUIRE(model.training.has_value());
    CHECK(model.training->reconstruction_error_per_epoch.size() == 3);
    CHECK(model.statistics.has_value());

    Run predict = run_cli(dir, {"predict", "--model", model_path, "--trace", kData + "sample.csv",
                                "--out", dir / "phases.csv", "--timeline"});
    INFO(predict.err);
    REQUIRE(predict.code == 0);
    std::vector<std::string> rows = lines_of(read_file(dir / "phases.csv"));
    std::vector<std::string> trace_rows = lines_of(read_file(kData + "sample.csv"));
    CHECK(rows.size() == trace_rows.size());
    CHECK(rows.at(0) == "pod.id,timestamp,index,phase,h0,h1,h2,h3,h4,h5,h6,h7,h8,h9");
    CHECK(rows.at(1) == "exec1,1565962220,0,,,,,,,,,,,");

    // The timeline: a legend, then one line per execution, one character per sample.
    std::vector<std::string> timeline = lines_of(predict.out);
    REQUIRE(timeline.size() == 5);
    for (int e = 1; e <= 4; ++e) {
        CHECK(timeline[e].rfind("exec" + std::to_string(e), 0) == 0);
        CHECK(timeline[e].find("...") != std::string::npos);  // history not yet full
    }

    Run inspect = run_cli(dir, {"inspect", model_path});
    INFO(inspect.err);
    REQUIRE(inspect.code == 0);
    for (const char* text :
         {"phasescale-model", "final reconstruction error", "phases:", "cpu.usage.cores",
          "mem.working.set", "MiB", "transition probabilities", "most common phase sequences"}) {
        INFO(text);
        CHECK(inspect.out.find(text) != std::string::npos);
    }
}

TEST_CASE("inspect says that the AI4DL model has no statistics", "[cli]") {
    TempDir dir;
    Run inspect = run_cli(dir, {"inspect", kPretrained});
    INFO(inspect.err);
    REQUIRE(inspect.code == 0);
    CHECK(inspect.out.find("ai4dl-reference-v1") != std::string::npos);
    CHECK(inspect.out.find("no phase statistics") != std::string::npos);
    CHECK(inspect.out.find("5 centroids") != std::string::npos);
}

TEST_CASE("--help of the program and of every command explains the options", "[cli]") {
    TempDir dir;
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
        {{"--help"}, {"train", "predict", "inspect"}},
        {{"train", "--help"},
         {"--trace", "--out", "--id-column", "--features", "--usage-columns", "--hidden",
          "--history", "--phases", "--epochs", "--learning-rate", "--batch", "--cd-steps",
          "--momentum", "--weight-decay", "--patience", "--restarts", "--seed", "pod.id",
          "cpu.usage.cores"}},
        {{"predict", "--help"},
         {"--model", "--trace", "--id-column", "--out", "--timeline", "--true-phases"}},
        {{"inspect", "--help"}, {"MODEL.json"}},
    };
    for (const auto& [arguments, mentions] : cases) {
        Run help = run_cli(dir, arguments);
        INFO(arguments.front() << " --help:\n" << help.out);
        CHECK(help.code == 0);
        for (const auto& mention : mentions) {
            INFO(mention);
            CHECK(help.out.find(mention) != std::string::npos);
        }
    }
}

TEST_CASE("a bad trace fails with exit code 1, names the file and leaves no output", "[cli]") {
    TempDir dir;
    const std::string bad = dir / "bad.csv";
    write_file(bad,
               "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
               "1,a,0.5,100\n"
               "2,a,lots,100\n");

    Run train = run_cli(dir, {"train", "--trace", bad, "--out", dir / "model.json"});
    CHECK(train.code == 1);
    CHECK(train.err.rfind("phasescale: error: ", 0) == 0);
    CHECK(train.err.find("bad.csv") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "model.json"));

    Run predict = run_cli(
        dir, {"predict", "--model", kPretrained, "--trace", bad, "--out", dir / "phases.csv"});
    CHECK(predict.code == 1);
    CHECK(predict.err.rfind("phasescale: error: ", 0) == 0);
    CHECK(predict.err.find("bad.csv") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "phases.csv"));

    // Nothing else left behind either: no temporary files.
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
        left.push_back(entry.path().filename().string());
    }
    std::sort(left.begin(), left.end());
    CHECK(left == std::vector<std::string>{"bad.csv", "stderr", "stdout"});
}

TEST_CASE("a missing model fails with exit code 1 and names the file", "[cli]") {
    TempDir dir;
    Run predict = run_cli(dir, {"predict", "--model", dir / "absent.model.json", "--trace",
                                kData + "sample.csv", "--out", dir / "phases.csv"});
    CHECK(predict.code == 1);
    CHECK(predict.err.rfind("phasescale: error: ", 0) == 0);
    CHECK(predict.err.find("absent.model.json") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "phases.csv"));

    Run inspect = run_cli(dir, {"inspect", dir / "absent.model.json"});
    CHECK(inspect.code == 1);
    CHECK(inspect.err.find("absent.model.json") != std::string::npos);
}

TEST_CASE("a bad command line exits with code 2", "[cli]") {
    TempDir dir;
    CHECK(run_cli(dir, {}).code == 2);
    CHECK(run_cli(dir, {"frobnicate"}).code == 2);
    CHECK(run_cli(dir, {"train", "--trace", kData + "sample.csv"}).code == 2);  // no --out
    CHECK(run_cli(dir, {"train", "--trace", kData + "sample.csv", "--hidden", "0", "--out",
                        dir / "model.json"})
              .code == 2);
    CHECK(run_cli(dir, {"predict", "--model", kPretrained, "--trace", kData + "sample.csv"}).code ==
          2);  // neither --out nor --timeline
    CHECK_FALSE(fs::exists(dir / "model.json"));
}

TEST_CASE("simulate names each container once when two trace files share an id", "[cli]") {
    TempDir dir;
    // Two recordings of a pod named "p,1" (a comma: its CSV field is quoted), a minute each.
    const auto recording = [&](const std::string& name, double memory_gib) {
        std::string text = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
        for (int i = 0; i < 30; ++i)
            text += std::to_string(1000 + 2 * i) + ",\"p,1\"," + std::to_string(0.5 + 0.01 * i) +
                    "," + std::to_string(static_cast<long long>(memory_gib * (1 << 30))) + "\n";
        return dir.write(name, text);
    };
    const std::string one = recording("one.csv", 1), two = recording("two.csv", 2);
    Run run = run_cli(dir, {"simulate", "--trace", one + "," + two, "--json", dir / "r.json",
                            "--allocations", dir / "allocations.csv"});
    REQUIRE(run.code == 0);
    const nlohmann::json report = nlohmann::json::parse(read_file(dir / "r.json"));
    REQUIRE(report["containers"].size() == 2);
    CHECK(report["containers"][0]["id"] == "p,1 (one.csv)");
    CHECK(report["containers"][1]["id"] == "p,1 (two.csv)");
    const std::vector<std::string> rows = lines_of(read_file(dir / "allocations.csv"));
    REQUIRE(rows.size() > 1);
    CHECK(rows[0].ends_with(",usage_memory,source,cpu_asked,memory_asked"));
    CHECK(rows[1].find(",\"p,1 (one.csv)\",0,") != std::string::npos);
    CHECK(rows[1].find("," + one + ",") != std::string::npos);
}

TEST_CASE("simulate takes a trace without allocation columns, static from flags or skipped",
          "[cli]") {
    TempDir dir;
    const std::string trace = "../shared/data/torch/dev01-mlp.csv";
    Run plain = run_cli(dir, {"simulate", "--trace", trace, "--json", dir / "plain.json"});
    REQUIRE(plain.code == 0);
    const nlohmann::json report = nlohmann::json::parse(read_file(dir / "plain.json"));
    CHECK_FALSE(report["policies"].contains("static"));
    CHECK(report["policies"].contains("krr"));
    CHECK(report["notes"].size() == 1);
    CHECK(plain.out.find("note: ") != std::string::npos);

    Run fixed =
        run_cli(dir, {"simulate", "--trace", trace, "--static-cpu", "2", "--static-memory", "4Gi",
                      "--json", dir / "fixed.json", "--allocations", dir / "allocations.csv"});
    REQUIRE(fixed.code == 0);
    const nlohmann::json with_static = nlohmann::json::parse(read_file(dir / "fixed.json"));
    REQUIRE(with_static["policies"].contains("static"));
    // 2 cores for the 84 s the run lasts.
    CHECK(with_static["policies"]["static"]["cpu"]["allocated"].get<double>() ==
          Approx(2 * 84.0).epsilon(0.03));
    // One row per sample and policy, after the header.
    const std::size_t samples = with_static["containers"][0]["samples"].get<std::size_t>();
    CHECK(lines_of(read_file(dir / "allocations.csv")).size() ==
          1 + samples * with_static["policies"].size());

    Run half = run_cli(
        dir, {"simulate", "--trace", trace, "--static-cpu", "2", "--json", dir / "half.json"});
    CHECK(half.code == 2);
    CHECK(half.err.find("--static-memory") != std::string::npos);
    Run bad = run_cli(dir, {"simulate", "--trace", trace, "--static-cpu", "2", "--static-memory",
                            "lots", "--json", dir / "bad.json"});
    CHECK(bad.code == 2);
    CHECK_FALSE(fs::exists(dir / "bad.json"));
}

TEST_CASE("simulate --autoscaler replays a PhaseAutoscaler's settings, the CRD's defaults without",
          "[cli]") {
    TempDir dir;
    const std::string trace = "../shared/data/torch/dev03-gru.csv";
    auto simulate = [&](const std::vector<std::string>& more, const std::string& out) {
        std::vector<std::string> args = {"simulate", "--trace",      trace,    "--policy",
                                         "phase",    "--static-cpu", "2",      "--static-memory",
                                         "4Gi",      "--json",       dir / out};
        args.insert(args.end(), more.begin(), more.end());
        return run_cli(dir, args);
    };
    REQUIRE(simulate({}, "defaults.json").code == 0);
    const nlohmann::json defaults = nlohmann::json::parse(read_file(dir / "defaults.json"));
    CHECK(defaults["settings"]["cooldown_seconds"] == 60);
    CHECK(defaults["settings"]["min_change"] == 0.05);
    CHECK(defaults["settings"]["memory_min_headroom"] == 384 * 1024 * 1024);

    const std::string yaml = dir.write("pas.yaml", R"(apiVersion: phasescale.io/v1alpha1
kind: PhaseAutoscaler
metadata: {name: trainers, namespace: ml}
spec:
  selector: {matchLabels: {app: trainer}}
  mode: InPlace
  cooldownSeconds: 0
  minChange: 0
  resources: {memory: {minHeadroom: 0}}
  containerPolicies:
    - {containerName: "*", maxAllowed: {cpu: 1500m}}
)");
    REQUIRE(simulate({"--autoscaler", yaml}, "pas.json").code == 0);
    const nlohmann::json pas = nlohmann::json::parse(read_file(dir / "pas.json"));
    CHECK(pas["settings"]["cooldown_seconds"] == 0);
    CHECK(pas["settings"]["memory_min_headroom"] == 0);
    // A flag wins over the autoscaler's setting, and says what it takes.
    REQUIRE(simulate({"--autoscaler", yaml, "--mem-min-headroom", "128Mi"}, "flag.json").code == 0);
    CHECK(nlohmann::json::parse(read_file(dir / "flag.json"))["settings"]["memory_min_headroom"] ==
          128 * 1024 * 1024);
    const Run lots = simulate({"--mem-min-headroom", "lots"}, "lots.json");
    CHECK(lots.code == 2);
    CHECK_THAT(lots.err, Catch::Contains("--mem-min-headroom: not a memory quantity: 'lots'"));
    // No cooldown and no minimum change: more resizes than at the defaults.
    CHECK(pas["policies"]["phase"]["resizes"].get<int>() >
          defaults["policies"]["phase"]["resizes"].get<int>());
    // maxAllowed 1500m: the run uses about 2 cores, so CPU fulfilment collapses under the bound.
    CHECK(pas["policies"]["phase"]["cpu"]["fulfilment"].get<double>() < 0.5);

    const std::string wrong = dir.write(
        "wrong.yaml", "kind: PhaseAutoscaler\nspec:\n  selector: {}\n  mode: Sometimes\n");
    Run bad = simulate({"--autoscaler", wrong}, "wrong.json");
    CHECK(bad.code == 1);
    CHECK(bad.err.find("mode") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "wrong.json"));
    const std::string other = dir.write("other.yaml", "kind: Deployment\n");
    CHECK(simulate({"--autoscaler", other}, "other.json")
              .err.find("no document of kind PhaseAutoscaler") != std::string::npos);
}

TEST_CASE("simulate --tick observes a trace as the operator does, once per tick", "[cli]") {
    TempDir dir;
    const std::string trace = "../shared/data/torch/dev06-lstm.csv";  // a sample every 2 s
    auto simulate = [&](const std::vector<std::string>& more, const std::string& out) {
        std::vector<std::string> args = {"simulate", "--trace",      trace,    "--policy",
                                         "window",   "--static-cpu", "2",      "--static-memory",
                                         "4Gi",      "--json",       dir / out};
        args.insert(args.end(), more.begin(), more.end());
        return run_cli(dir, args);
    };
    REQUIRE(simulate({"--cooldown", "0"}, "every.json").code == 0);
    const nlohmann::json every = nlohmann::json::parse(read_file(dir / "every.json"));
    CHECK(every["settings"]["tick_seconds"] == 0);
    REQUIRE(simulate({"--cooldown", "0", "--tick", "30s"}, "tick.json").code == 0);
    const nlohmann::json tick = nlohmann::json::parse(read_file(dir / "tick.json"));
    CHECK(tick["settings"]["tick_seconds"] == 30);
    // A tick: the scrape interval the operator's rates cover, where Prometheus scrapes once a tick.
    CHECK(tick["settings"]["rate_window_seconds"] == 30);
    // Without a cooldown, a decision per tick at most: the run's 326 s hold 11 ticks.
    const int resizes = tick["policies"]["window"]["resizes"].get<int>();
    CHECK(resizes > 0);
    CHECK(resizes <= 11);
    CHECK(every["policies"]["window"]["resizes"].get<int>() > resizes);
    // Every sample is scored all the same.
    CHECK(tick["policies"]["window"]["memory"]["samples"] ==
          every["policies"]["window"]["memory"]["samples"]);

    REQUIRE(simulate({"--tick", "30s", "--rate-window", "1m"}, "window.json").code == 0);
    CHECK(nlohmann::json::parse(
              read_file(dir / "window.json"))["settings"]["rate_window_seconds"] == 60);
    REQUIRE(simulate({"--tick", "30s", "--rate-window", "10s"}, "short.json").code == 0);
    CHECK(nlohmann::json::parse(read_file(dir / "short.json"))["settings"]["rate_window_seconds"] ==
          10);  // a scrape interval shorter than the tick
    const Run alone = simulate({"--rate-window", "1m"}, "alone.json");
    CHECK(alone.code == 2);
    CHECK_THAT(alone.err, Catch::Contains("--rate-window needs --tick"));
    const Run soon = simulate({"--tick", "soon"}, "soon.json");
    CHECK(soon.code == 2);
    CHECK_THAT(soon.err, Catch::Contains("--tick: 'soon' is not a duration"));
    CHECK_FALSE(fs::exists(dir / "soon.json"));
}

TEST_CASE("extreme numbers are refused at once with a plain message, never run", "[cli]") {
    TempDir dir;
    const std::vector<std::vector<std::string>> absurd = {
        {"train", "--trace", kData + "sample.csv", "--hidden", "1000000000", "--out",
         dir / "m.json"},
        {"generate", "--jobs", "1e8", "--out", dir / "g.csv"},
        {"generate", "--jobs", "1", "--start-time", "1e300", "--out", dir / "g.csv"},
        {"cluster-gen", "--duration-sigma", "1e300", "--jobs-out", dir / "j.csv", "--load-out",
         dir / "l.csv"},
        {"cluster-gen", "--load-interval", "1e-300", "--jobs-out", dir / "j.csv", "--load-out",
         dir / "l.csv"},
        {"cluster-gen", "--days", "1e9", "--jobs-out", dir / "j.csv", "--load-out", dir / "l.csv"},
    };
    for (const auto& arguments : absurd) {
        INFO(arguments[0] << " " << arguments[1] << " " << arguments[2]);
        const Run run = run_cli(dir, arguments);
        CHECK(run.code == 2);
        CHECK_THAT(run.err, Catch::Contains("phasescale: error:"));
        CHECK(run.err.size() < 300);  // no 309-digit bound
    }
    CHECK(dir.files() == 2);  // stdout and stderr: nothing else written
}

TEST_CASE("a number option out of range names itself and what it takes", "[cli]") {
    TempDir dir;
    const std::string trace = "../shared/data/torch/dev01-mlp.csv";
    const auto refusal = [&](const std::string& option, const std::string& value) {
        const Run run =
            run_cli(dir, {"simulate", "--trace", trace, "--json", dir / "r.json", option, value});
        CHECK(run.code == 2);
        return run.err;
    };
    // The wording of train's and generate's checks.
    CHECK_THAT(refusal("--cooldown", "-5"),
               Catch::Contains("--cooldown: must be non-negative, not -5"));
    CHECK_THAT(refusal("--debounce", "0"), Catch::Contains("--debounce: must be positive, not 0"));
    CHECK_THAT(refusal("--horizon", "inf"),
               Catch::Contains("--horizon: must be non-negative, not inf"));
    CHECK_THAT(refusal("--busy-cpu", "lots"),
               Catch::Contains("--busy-cpu: 'lots' is not a number"));
    CHECK(refusal("--mem-step", "-1").size() < 200);  // no 309-digit bound
    CHECK_FALSE(fs::exists(dir / "r.json"));
    // train speaks alike, and an infinite rate is no rate.
    const Run train = run_cli(
        dir, {"train", "--trace", trace, "--out", dir / "m.json", "--learning-rate", "inf"});
    CHECK(train.code == 2);
    CHECK_THAT(train.err, Catch::Contains("--learning-rate: must be positive, not inf"));
    CHECK_FALSE(fs::exists(dir / "m.json"));
}

TEST_CASE("an output that cannot be written fails before any is written", "[cli]") {
    TempDir dir;
    const Run run =
        run_cli(dir, {"simulate", "--trace", kData + "sample.csv", "--policy", "vpa", "--json",
                      dir / "report.json", "--html", dir / "missing/report.html"});
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains("missing/report.html"));
    CHECK(dir.files() == 2);  // no report.json
}
