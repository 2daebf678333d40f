#include <phasescale/model/error.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/pretrained.hpp>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "fixtures.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using namespace phasescale::model;
using Json = nlohmann::ordered_json;

using phasescale::testing::read_file;
using phasescale::testing::TempDir;

namespace {

const std::string kAi4dlModel = "../shared/data/ai4dl/ai4dl-pretrained.model.json";

// Numbers that are easy to get wrong in text: repeating binary fractions, extremes, -0.
double awkward(int i) {
    static const double values[] = {0.1,
                                    1.0 / 3.0,
                                    -2.0 / 7.0,
                                    1e-300,
                                    5e-324,
                                    std::numeric_limits<double>::max(),
                                    -0.0,
                                    123456789.123456789,
                                    std::nextafter(1.0, 2.0),
                                    -1.3377348184585571};
    return values[i % 10] / (1 + i / 10);
}

Matrix filled(Eigen::Index rows, Eigen::Index cols, int start) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = awkward(start + static_cast<int>(i));
    return m;
}

Summary summary(double base) {
    Summary s;
    s.count = static_cast<std::size_t>(base * 10) + 1;
    s.mean = base / 3;
    s.std = base / 7;
    s.p50 = base * 0.5;
    s.p90 = base * 0.9;
    s.p95 = base * 0.95;
    s.p99 = base * 0.99;
    s.max = base * 1.1;
    return s;
}

// A full phasescale model, made by hand: 3 features, 4 hidden units, history 2, 3 phases.
PhaseModel hand_model() {
    PhaseModel m;
    m.features = {"cpu.usage.cores", "mem.working.set", "cpu.usage.pct"};
    m.scaler.mean = Vector::Map(filled(3, 1, 0).data(), 3);
    m.scaler.scale = Vector::Constant(3, 0.7);
    m.scaler.scale[2] = 1e-9 / 3;
    Crbm& c = m.crbm;
    c.n_vis = 3;
    c.n_hid = 4;
    c.n_his = 2;
    c.W = filled(4, 3, 1);
    c.A = filled(3, 6, 2);
    c.B = filled(4, 6, 3);
    c.v_bias = Vector::Map(filled(3, 1, 4).data(), 3);
    c.h_bias = Vector::Map(filled(4, 1, 5).data(), 4);
    m.centroids = filled(3, 4, 6);

    PhaseStatistics s;
    s.usage_columns = {"cpu.usage.cores", "mem.working.set"};
    s.executions = 12;
    for (int p = 0; p < 3; ++p) {
        PhaseStats ps;
        ps.samples = 100 + static_cast<std::size_t>(p);
        ps.usage = {summary(0.1 + p), summary(4e9 / 3 + p)};
        ps.visit_samples = summary(7 + p);
        ps.visit_seconds = summary(310.5 + p);
        ps.distance = summary(0.01 / 3 + p);
        if (p != 2) ps.rise = {summary(1.5 + p), summary(1.1 + p)};   // phase 2: an older model's
        if (p == 0) ps.settled_rise = {summary(1.2), summary(1.05)};  // phase 1: an older model's
        s.phases.push_back(ps);
    }
    s.transitions = Matrix::Zero(3, 3);
    s.transitions << 0, 4, 1, 2, 0, 3, 5, 0, 0;
    s.sequences = {{{0, 1, 2}, 7}, {{2, 0}, 3}, {{1}, 1}};
    m.statistics = s;

    TrainingParameters p;
    p.traces = {"a.csv", "dir/b \"quoted\".csv"};
    p.id_column = "pod.id";
    p.hidden = 4;
    p.history = 2;
    p.phases = 3;
    p.epochs = 40;
    p.learning_rate = 0.001;
    p.batch = 2;
    p.cd_steps = 3;
    p.momentum = 0.9;
    p.weight_decay = 1e-4;
    p.patience = 5;
    p.kmeans_restarts = 11;
    p.seed = std::numeric_limits<std::uint64_t>::max();
    m.parameters = p;

    TrainingSummary t;
    t.final_reconstruction_error = 0.123456789012345678;
    t.reconstruction_error_per_epoch = {1.0 / 3, 0.25, 0.2, 0.123456789012345678};
    t.stopped_early = true;
    t.executions = 12;
    t.rows = 1234;
    t.slices = 1210;
    t.kmeans_inertia = 98.765;
    t.seconds = 3.5;
    m.training = t;
    return m;
}

bool same(double a, double b) {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

template <typename M>
bool same(const M& a, const M& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
        for (Eigen::Index j = 0; j < a.cols(); ++j) {
            if (!same(a(i, j), b(i, j))) return false;
        }
    }
    return true;
}

bool same(const Summary& a, const Summary& b) {
    return a.count == b.count && same(a.mean, b.mean) && same(a.std, b.std) && same(a.p50, b.p50) &&
           same(a.p90, b.p90) && same(a.p95, b.p95) && same(a.p99, b.p99) && same(a.max, b.max);
}

void require_same(const PhaseModel& a, const PhaseModel& b) {
    CHECK(a.features == b.features);
    CHECK(same(a.scaler.mean, b.scaler.mean));
    CHECK(same(a.scaler.scale, b.scaler.scale));
    CHECK(a.crbm.n_vis == b.crbm.n_vis);
    CHECK(a.crbm.n_hid == b.crbm.n_hid);
    CHECK(a.crbm.n_his == b.crbm.n_his);
    CHECK(same(a.crbm.W, b.crbm.W));
    CHECK(same(a.crbm.A, b.crbm.A));
    CHECK(same(a.crbm.B, b.crbm.B));
    CHECK(same(a.crbm.v_bias, b.crbm.v_bias));
    CHECK(same(a.crbm.h_bias, b.crbm.h_bias));
    CHECK(same(a.centroids, b.centroids));

    REQUIRE(a.statistics.has_value() == b.statistics.has_value());
    if (a.statistics) {
        const PhaseStatistics& s = *a.statistics;
        const PhaseStatistics& t = *b.statistics;
        CHECK(s.usage_columns == t.usage_columns);
        CHECK(s.executions == t.executions);
        REQUIRE(s.phases.size() == t.phases.size());
        for (std::size_t p = 0; p < s.phases.size(); ++p) {
            CHECK(s.phases[p].samples == t.phases[p].samples);
            REQUIRE(s.phases[p].usage.size() == t.phases[p].usage.size());
            for (std::size_t u = 0; u < s.phases[p].usage.size(); ++u) {
                CHECK(same(s.phases[p].usage[u], t.phases[p].usage[u]));
            }
            CHECK(same(s.phases[p].visit_samples, t.phases[p].visit_samples));
            CHECK(same(s.phases[p].visit_seconds, t.phases[p].visit_seconds));
            CHECK(same(s.phases[p].distance, t.phases[p].distance));
            REQUIRE(s.phases[p].rise.size() == t.phases[p].rise.size());
            for (std::size_t u = 0; u < s.phases[p].rise.size(); ++u)
                CHECK(same(s.phases[p].rise[u], t.phases[p].rise[u]));
            REQUIRE(s.phases[p].settled_rise.size() == t.phases[p].settled_rise.size());
            for (std::size_t u = 0; u < s.phases[p].settled_rise.size(); ++u)
                CHECK(same(s.phases[p].settled_rise[u], t.phases[p].settled_rise[u]));
        }
        CHECK(same(s.transitions, t.transitions));
        REQUIRE(s.sequences.size() == t.sequences.size());
        for (std::size_t i = 0; i < s.sequences.size(); ++i) {
            CHECK(s.sequences[i].phases == t.sequences[i].phases);
            CHECK(s.sequences[i].executions == t.sequences[i].executions);
        }
    }

    REQUIRE(a.parameters.has_value() == b.parameters.has_value());
    if (a.parameters) {
        const TrainingParameters& p = *a.parameters;
        const TrainingParameters& q = *b.parameters;
        CHECK(p.traces == q.traces);
        CHECK(p.id_column == q.id_column);
        CHECK(p.hidden == q.hidden);
        CHECK(p.history == q.history);
        CHECK(p.phases == q.phases);
        CHECK(p.epochs == q.epochs);
        CHECK(same(p.learning_rate, q.learning_rate));
        CHECK(p.batch == q.batch);
        CHECK(p.cd_steps == q.cd_steps);
        CHECK(same(p.momentum, q.momentum));
        CHECK(same(p.weight_decay, q.weight_decay));
        CHECK(p.patience == q.patience);
        CHECK(p.kmeans_restarts == q.kmeans_restarts);
        CHECK(p.seed == q.seed);
    }

    REQUIRE(a.training.has_value() == b.training.has_value());
    if (a.training) {
        const TrainingSummary& t = *a.training;
        const TrainingSummary& u = *b.training;
        CHECK(same(t.final_reconstruction_error, u.final_reconstruction_error));
        REQUIRE(t.reconstruction_error_per_epoch.size() == u.reconstruction_error_per_epoch.size());
        for (std::size_t i = 0; i < t.reconstruction_error_per_epoch.size(); ++i) {
            CHECK(same(t.reconstruction_error_per_epoch[i], u.reconstruction_error_per_epoch[i]));
        }
        CHECK(t.stopped_early == u.stopped_early);
        CHECK(t.executions == u.executions);
        CHECK(t.rows == u.rows);
        CHECK(t.slices == u.slices);
        CHECK(same(t.kmeans_inertia, u.kmeans_inertia));
        CHECK(same(t.seconds, u.seconds));
    }
}

std::string error_of(const std::string& text) {
    try {
        parse_model(text, "model.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

// The hand model as JSON, changed by `edit`, parsed back: the error it gives.
template <typename Edit>
std::string error_after(Edit edit) {
    Json doc = Json::parse(serialise_model(hand_model()));
    edit(doc);
    return error_of(doc.dump());
}

}  // namespace

TEST_CASE("model files round-trip every number bit for bit", "[model-file]") {
    const PhaseModel model = hand_model();
    const std::string text = serialise_model(model);
    const PhaseModel back = parse_model(text, "memory");
    CHECK(back.format == kModelFormat);
    require_same(model, back);
    // Serialising again gives the same text: nothing drifts over repeated saves.
    CHECK(serialise_model(back) == text);

    const Json doc = Json::parse(text);
    CHECK(doc.begin().key() == "format");
    CHECK(doc["version"] == kModelVersion);
    // A phase without rises (a model written before they were kept) has no "rise" member.
    CHECK(doc["statistics"]["phases"][0].contains("rise"));
    CHECK_FALSE(doc["statistics"]["phases"][2].contains("rise"));
    // Nor one without settled rises.
    CHECK(doc["statistics"]["phases"][0].contains("settled_rise"));
    CHECK_FALSE(doc["statistics"]["phases"][1].contains("settled_rise"));
    // Written for readers: transitions normalised per row.
    CHECK(doc["statistics"]["transition_probabilities"][0][1].get<double>() == 0.8);
}

TEST_CASE("model files without statistics or training round-trip", "[model-file]") {
    PhaseModel model = hand_model();
    model.statistics.reset();
    model.training.reset();
    PhaseModel back = parse_model(serialise_model(model), "memory");
    require_same(model, back);
    CHECK_FALSE(back.statistics);
    CHECK_FALSE(back.training);
    CHECK(back.parameters);

    model.parameters.reset();
    const std::string text = serialise_model(model);
    CHECK(Json::parse(text).contains("training") == false);
    back = parse_model(text, "memory");
    require_same(model, back);
}

TEST_CASE("save_model and load_model go through a file atomically", "[model-file]") {
    TempDir dir;
    const std::string path = dir.path("model.json");
    const PhaseModel model = hand_model();
    save_model(model, path);
    require_same(model, load_model(path));
    CHECK(dir.files() == 1);  // no temporary file left beside it

    // Overwriting replaces the file; a model that cannot be saved leaves the old one alone.
    PhaseModel changed = model;
    changed.crbm.W(0, 0) = 42;
    save_model(changed, path);
    CHECK(load_model(path).crbm.W(0, 0) == 42);
    const std::string before = read_file(path);
    PhaseModel broken = model;
    broken.crbm.W(3, 1) = std::nan("");
    REQUIRE_THROWS_WITH(save_model(broken, path),
                        path + ": not saved: crbm.W[3][1]: cannot write nan: not a finite number");
    broken = model;
    broken.crbm.A.conservativeResize(2, Eigen::NoChange);
    REQUIRE_THROWS_WITH(save_model(broken, path),
                        path + ": not saved: crbm.A: expected 3 rows, got 2");
    CHECK(read_file(path) == before);
    CHECK(dir.files() == 1);

    const std::string nowhere = dir.path("no/such/dir/model.json");
    REQUIRE_THROWS_WITH(save_model(model, nowhere),
                        nowhere + ": cannot create: No such file or directory");
    const std::string missing = dir.path("missing.json");
    REQUIRE_THROWS_WITH(load_model(missing), missing + ": cannot open: No such file or directory");
    const std::string folder = dir.path("folder");
    fs::create_directory(folder);
    REQUIRE_THROWS_WITH(load_model(folder), folder + ": cannot read: Is a directory");
    // A folder is refused before anything is written.
    const std::size_t files = dir.files();
    REQUIRE_THROWS_WITH(save_model(model, folder), folder + ": is a folder, not a file");
    CHECK(dir.files() == files);
    PhaseModel latin1 = model;
    latin1.features[0] = "caf\xe9";
    REQUIRE_THROWS_WITH(
        save_model(latin1, path),
        Catch::Matchers::StartsWith(path + ": not saved: a name (feature, column or "
                                           "trace) is not valid UTF-8: "));

    REQUIRE_THROWS_WITH(serialise_model(broken),
                        "cannot serialise model: crbm.A: expected 3 rows, got 2");
}

TEST_CASE("load_model reads the AI4DL pretrained model", "[model-file]") {
    const PhaseModel m = load_model(kAi4dlModel);
    CHECK(m.format == kAi4dlFormat);
    REQUIRE(m.features.size() == 8);
    CHECK(m.features[0] == "cpu.usage");
    CHECK(m.features[7] == "mem.working.set");
    CHECK(m.crbm.n_vis == 8);
    CHECK(m.crbm.n_hid == 10);
    CHECK(m.crbm.n_his == 3);
    CHECK(m.crbm.W.rows() == 10);
    CHECK(m.crbm.W.cols() == 8);
    CHECK(m.crbm.A.rows() == 8);
    CHECK(m.crbm.A.cols() == 24);
    CHECK(m.crbm.B.rows() == 10);
    CHECK(m.crbm.B.cols() == 24);
    CHECK(m.crbm.W(0, 0) == -1.3377348184585571);
    CHECK(m.scaler.mean[0] == 11069329693.86303);
    CHECK(m.scaler.scale[7] == 587286397.958258);
    CHECK(m.phases() == 5);
    CHECK(m.centroids.cols() == 10);
    CHECK_FALSE(m.statistics);
    CHECK_FALSE(m.parameters);
    CHECK_FALSE(m.training);

    // Saved again it becomes a phasescale model with the same numbers.
    const PhaseModel again = parse_model(serialise_model(m), "memory");
    CHECK(again.format == kModelFormat);
    require_same(m, again);
}

TEST_CASE("bad model files name the field at fault", "[model-file]") {
    SECTION("missing field") {
        CHECK(error_after([](Json& d) { d["crbm"].erase("W"); }) ==
              "model.json: crbm.W: missing field");
        CHECK(error_after([](Json& d) { d.erase("kmeans"); }) ==
              "model.json: kmeans: missing field");
        CHECK(error_after([](Json& d) {
                  d["statistics"]["phases"][1]["usage"].erase("mem.working.set");
              }) == "model.json: statistics.phases[1].usage[\"mem.working.set\"]: missing field");
        CHECK(error_after([](Json& d) { d["training"].erase("rows"); }) ==
              "model.json: training.rows: missing field");
        CHECK(error_after([](Json& d) { d["training"]["parameters"].erase("seed"); }) ==
              "model.json: training.parameters.seed: missing field");
    }
    SECTION("wrong type") {
        CHECK(error_after([](Json& d) { d["crbm"]["n_hid"] = "4"; }) ==
              "model.json: crbm.n_hid: expected an integer from 1 to 10000, got the string \"4\"");
        CHECK(error_after([](Json& d) { d["crbm"]["n_hid"] = 4.0; }) ==
              "model.json: crbm.n_hid: expected an integer from 1 to 10000, got 4.0");
        CHECK(error_after([](Json& d) { d["crbm"]["W"] = Json::object(); }) ==
              "model.json: crbm.W: expected an array, got an object");
        CHECK(error_after([](Json& d) { d["scaler"] = 3; }) ==
              "model.json: scaler: expected an object, got 3");
        CHECK(error_after([](Json& d) { d["features"][1] = false; }) ==
              "model.json: features[1]: expected a string, got false");
        CHECK(error_after([](Json& d) { d["training"]["stopped_early"] = 1; }) ==
              "model.json: training.stopped_early: expected true or false, got 1");
        CHECK(error_after([](Json& d) { d["training"]["parameters"]["seed"] = -1; }) ==
              "model.json: training.parameters.seed: expected a non-negative integer, got -1");
        CHECK(error_of("[1, 2]") == "model.json: expected a JSON object, got an array");
    }
    SECTION("null and non-finite numbers") {
        CHECK(error_after([](Json& d) { d["crbm"]["W"][3][1] = nullptr; }) ==
              "model.json: crbm.W[3][1]: expected a finite number, got null");
        CHECK(error_after(
                  [](Json& d) { d["statistics"]["phases"][2]["distance"]["p99"] = nullptr; }) ==
              "model.json: statistics.phases[2].distance.p99: expected a finite number, got null");
        std::string text = serialise_model(hand_model());
        Json doc = Json::parse(text);
        doc["crbm"]["B"][2][5] = 777.25;  // markers to replace in the text
        doc["scaler"]["scale"][1] = 888.125;
        text = doc.dump();
        const auto at = text.find("777.25");
        REQUIRE(at != std::string::npos);
        CHECK(error_of(text.substr(0, at) + "1e999" + text.substr(at + 6)) ==
              "model.json: crbm.B[2][5]: expected a finite number, got 1e999");
        const auto scale = text.find("888.125");
        REQUIRE(scale != std::string::npos);
        CHECK(error_of(text.substr(0, scale) + "-1E+400" + text.substr(scale + 7)) ==
              "model.json: scaler.scale[1]: expected a finite number, got -1E+400");
    }
    SECTION("wrong dimension") {
        CHECK(error_after([](Json& d) { d["crbm"]["A"].erase(2); }) ==
              "model.json: crbm.A: expected 3 rows, got 2");
        CHECK(error_after([](Json& d) { d["crbm"]["W"][1].erase(0); }) ==
              "model.json: crbm.W[1]: expected 3 numbers, got 2");
        CHECK(error_after([](Json& d) { d["crbm"]["B"][0].push_back(1.0); }) ==
              "model.json: crbm.B[0]: expected 6 numbers, got 7");
        CHECK(error_after([](Json& d) { d["crbm"]["h_bias"].erase(0); }) ==
              "model.json: crbm.h_bias: expected 4 numbers, got 3");
        CHECK(error_after([](Json& d) { d["crbm"]["n_vis"] = 4; }) ==
              "model.json: crbm.n_vis: 4 does not match the 3 features");
        CHECK(error_after([](Json& d) { d["crbm"]["n_his"] = 0; }) ==
              "model.json: crbm.n_his: expected an integer from 1 to 10000, got 0");
        CHECK(error_after([](Json& d) { d["scaler"]["mean"].push_back(1); }) ==
              "model.json: scaler.mean: expected 3 numbers, got 4");
        CHECK(error_after([](Json& d) { d["scaler"]["scale"][0] = 0; }) ==
              "model.json: scaler.scale[0]: expected a positive number, got 0");
        CHECK(error_after([](Json& d) { d["kmeans"]["centroids"] = Json::array(); }) ==
              "model.json: kmeans.centroids: expected at least one centroid");
        CHECK(error_after([](Json& d) { d["kmeans"]["centroids"][0].erase(0); }) ==
              "model.json: kmeans.centroids[0]: expected 4 numbers, got 3");
        CHECK(error_after([](Json& d) { d["statistics"]["phases"].erase(0); }) ==
              "model.json: statistics.phases: expected 3 phases (one per centroid), got 2");
        CHECK(error_after([](Json& d) { d["statistics"]["transitions"][2].erase(0); }) ==
              "model.json: statistics.transitions[2]: expected 3 numbers, got 2");
        CHECK(error_after([](Json& d) { d["statistics"]["transitions"][1][0] = -1; }) ==
              "model.json: statistics.transitions[1][0]: expected a count (>= 0), got -1");
        CHECK(error_after([](Json& d) { d["statistics"]["sequences"][0]["phases"][1] = 3; }) ==
              "model.json: statistics.sequences[0].phases[1]: expected an integer from 0 to 2, got "
              "3");
        CHECK(error_after([](Json& d) {
                  d["statistics"]["phases"][0]["usage"]["gpu"] = Json::object();
              }) == "model.json: statistics.phases[0].usage.gpu: not one of usage_columns");
        CHECK(error_after([](Json& d) { d["training"]["parameters"]["hidden"] = 5; }) ==
              "model.json: training.parameters.hidden: 5 does not match crbm.n_hid 4");
        CHECK(error_after([](Json& d) { d["features"][2] = "cpu.usage.cores"; }) ==
              "model.json: features[2]: duplicate name \"cpu.usage.cores\"");
    }
    SECTION("format and version") {
        CHECK(error_after([](Json& d) { d["format"] = "foo"; }) ==
              "model.json: unknown format \"foo\" (expected \"phasescale-model\" or "
              "\"ai4dl-reference-v1\")");
        CHECK(error_after([](Json& d) { d.erase("format"); }) ==
              "model.json: format: missing field");
        CHECK(error_after([](Json& d) { d["version"] = 2; }) ==
              "model.json: version 2 is newer than this phasescale (reads 1)");
        CHECK(error_after([](Json& d) { d["version"] = "1"; }) ==
              "model.json: version: expected a positive integer, got the string \"1\"");
        // The AI4DL format has no version and no statistics; its own fields are still checked.
        Json ai4dl = Json::parse(read_file(kAi4dlModel));
        ai4dl["crbm"]["W"][9][7] = "x";
        CHECK(error_of(ai4dl.dump()) ==
              "model.json: crbm.W[9][7]: expected a finite number, got the string \"x\"");
    }
    SECTION("invalid and truncated JSON") {
        CHECK(error_of("{ not json }") ==
              "model.json: not valid JSON: parse error at line 1, column 4: syntax error while "
              "parsing object key - invalid literal; last read: '{ no'; expected string literal");
        CHECK(error_of("").starts_with(
            "model.json: not valid JSON: parse error at line 1, column 1"));
        const std::string text = serialise_model(hand_model());
        // Cut at a line break: mid-number the parser would name the number instead.
        const std::string cut = error_of(text.substr(0, text.rfind('\n', text.size() / 2)));
        CHECK(cut.starts_with("model.json: not valid JSON: parse error at line "));
        CHECK(cut.find("unexpected end of input") != std::string::npos);
        CHECK(error_of(text + "}").starts_with("model.json: not valid JSON: parse error at line "));

        TempDir dir;
        const std::string path = dir.path("truncated.json");
        std::ofstream(path, std::ios::binary) << text.substr(0, text.size() - 10);
        const std::string prefix = path + ": not valid JSON: ";
        REQUIRE_THROWS_WITH(load_model(path), Catch::Matchers::StartsWith(prefix));
    }
}

TEST_CASE("model statistics are checked on load: non-negative, quantiles in order",
          "[model-file]") {
    CHECK(error_after([](Json& d) {
              d["statistics"]["phases"][1]["usage"]["mem.working.set"]["p50"] = -1;
          }) ==
          "model.json: statistics.phases[1].usage[\"mem.working.set\"].p50: expected a statistic "
          ">= 0, got -1");
    CHECK(
        error_after(
            [](Json& d) { d["statistics"]["phases"][0]["visit_samples"]["mean"] = -0.5; }) ==
        "model.json: statistics.phases[0].visit_samples.mean: expected a statistic >= 0, got -0.5");
    // A p99 of 1e300 above a max of 1: the quantiles must climb to the maximum.
    CHECK(error_after([](Json& d) {
              Json& s = d["statistics"]["phases"][0]["usage"]["mem.working.set"];
              s["p99"] = 1e300;
              s["max"] = 1.0;
          }) ==
          "model.json: statistics.phases[0].usage[\"mem.working.set\"].max: expected at least p99 "
          "(1e+300), got 1.0");
    CHECK(error_after([](Json& d) {
              Json& s = d["statistics"]["phases"][2]["distance"];
              s["p90"] = s["p95"].get<double>() * 2 + 1;
          }).find("statistics.phases[2].distance.p95: expected at least p90") != std::string::npos);
    // Rises alike: per usage column, checked as every statistic.
    CHECK(error_after([](Json& d) {
              d["statistics"]["phases"][1]["rise"]["mem.working.set"]["p95"] = -2;
          }) ==
          "model.json: statistics.phases[1].rise[\"mem.working.set\"].p95: expected a statistic "
          ">= 0, got -2");
    CHECK(error_after([](Json& d) { d["statistics"]["phases"][0]["rise"]["gpu"] = Json{}; }) ==
          "model.json: statistics.phases[0].rise.gpu: not one of usage_columns");
    CHECK(error_after([](Json& d) {
              d["statistics"]["phases"][0]["settled_rise"]["mem.working.set"]["p99"] = -1;
          })
              .find("statistics.phases[0].settled_rise[\"mem.working.set\"].p99: expected a "
                    "statistic >= 0") != std::string::npos);
    // The shipped model passes.
    CHECK_NOTHROW(resolve_model("default"));
}
