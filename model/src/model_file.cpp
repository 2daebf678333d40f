// Model files: one JSON document, read with every field checked so that a bad file is refused
// with the field at fault (and never half loaded), and written so that doubles round-trip exactly.

#include <phasescale/model/atomic_file.hpp>
#include <phasescale/model/error.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/phase_names.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <set>

#include <sys/stat.h>

namespace phasescale::model {
namespace {

// Ordered, so that a written file keeps the documented key order.
using Json = nlohmann::ordered_json;

// Sizes are bounded so that products such as n_vis * n_his stay far inside an int.
constexpr long long kMaxDimension = 10000;
constexpr long long kNoLimit = std::numeric_limits<long long>::max();

// Raised by the readers and writers below; the public functions add the file name.
struct FieldError {
    std::string path;  // e.g. crbm.W[3][1]; empty for the document itself
    std::string message;
};

[[noreturn]] void fail(std::string path, std::string message) {
    throw FieldError{std::move(path), std::move(message)};
}

std::string member(const std::string& path, const std::string& key) {
    bool plain = !key.empty();
    for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (plain) return path.empty() ? key : path + "." + key;
    return path + "[" + Json(key).dump() + "]";  // e.g. usage["cpu.usage.cores"]
}

std::string element(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// A JSON value as a message shows it: the value itself when short, else its kind.
std::string describe(const Json& j) {
    switch (j.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean:
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned: return j.dump();
        case Json::value_t::number_float: {
            const double x = j.get<double>();
            if (std::isnan(x)) return "nan";
            if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
            return j.dump();
        }
        case Json::value_t::string: {
            std::string s = j.dump();
            if (s.size() > 40) s = s.substr(0, 36) + "...\"";
            return "the string " + s;
        }
        case Json::value_t::array: return "an array";
        case Json::value_t::object: return "an object";
        default: return j.type_name();
    }
}

// A value and its path in the document.
struct Node {
    const Json& json;
    std::string path;

    void expect_object() const {
        if (!json.is_object()) fail(path, "expected an object, got " + describe(json));
    }
    bool has(const std::string& key) const {
        expect_object();
        return json.contains(key);
    }
    Node at(const std::string& key) const {
        expect_object();
        const auto it = json.find(key);
        if (it == json.end()) fail(member(path, key), "missing field");
        return {*it, member(path, key)};
    }
    Node at(std::size_t i) const { return {json[i], element(path, i)}; }
};

std::size_t read_array(const Node& n, long long expected = -1, const char* noun = "entries") {
    if (!n.json.is_array()) fail(n.path, "expected an array, got " + describe(n.json));
    if (expected >= 0 && n.json.size() != static_cast<std::size_t>(expected)) {
        fail(n.path, "expected " + std::to_string(expected) + " " + noun + ", got " +
                         std::to_string(n.json.size()));
    }
    return n.json.size();
}

double read_number(const Node& n) {
    if (!n.json.is_number() || !std::isfinite(n.json.get<double>())) {
        fail(n.path, "expected a finite number, got " + describe(n.json));
    }
    return n.json.get<double>();
}

double read_positive(const Node& n) {
    const double x = read_number(n);
    if (!(x > 0)) fail(n.path, "expected a positive number, got " + describe(n.json));
    return x;
}

long long read_integer(const Node& n, long long min, long long max) {
    const Json& j = n.json;
    bool ok = false;
    if (j.is_number_unsigned()) {  // nlohmann's type for every non-negative integer
        const auto u = j.get<std::uint64_t>();
        ok = u <= static_cast<std::uint64_t>(max) && static_cast<long long>(u) >= min;
    } else if (j.is_number_integer()) {
        const auto i = j.get<long long>();
        ok = i >= min && i <= max;
    }
    if (!ok) {
        std::string want = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
        if (max == kNoLimit) {
            want = min == 0   ? "a non-negative integer"
                   : min == 1 ? "a positive integer"
                              : "an integer >= " + std::to_string(min);
        }
        fail(n.path, "expected " + want + ", got " + describe(j));
    }
    return j.get<long long>();
}

int read_dimension(const Node& n) {
    return static_cast<int>(read_integer(n, 1, kMaxDimension));
}

std::size_t read_count(const Node& n) {
    return static_cast<std::size_t>(read_integer(n, 0, kNoLimit));
}

std::uint64_t read_seed(const Node& n) {
    if (!n.json.is_number_unsigned()) {
        fail(n.path, "expected a non-negative integer, got " + describe(n.json));
    }
    return n.json.get<std::uint64_t>();
}

bool read_bool(const Node& n) {
    if (!n.json.is_boolean()) fail(n.path, "expected true or false, got " + describe(n.json));
    return n.json.get<bool>();
}

std::string read_string(const Node& n) {
    if (!n.json.is_string()) fail(n.path, "expected a string, got " + describe(n.json));
    return n.json.get<std::string>();
}

// Names (features, columns): non-empty and, when `unique`, each once.
std::vector<std::string> read_strings(const Node& n, bool names) {
    const std::size_t size = read_array(n);
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < size; ++i) {
        std::string s = read_string(n.at(i));
        if (names && s.empty()) fail(element(n.path, i), "expected a name, got an empty string");
        if (names && !seen.insert(s).second)
            fail(element(n.path, i), "duplicate name \"" + s + "\"");
        out.push_back(std::move(s));
    }
    return out;
}

Vector read_vector(const Node& n, long long size) {
    const std::size_t got = read_array(n, size, "numbers");
    Vector v(static_cast<Eigen::Index>(got));
    for (std::size_t i = 0; i < got; ++i) v[static_cast<Eigen::Index>(i)] = read_number(n.at(i));
    return v;
}

std::vector<double> read_numbers(const Node& n) {
    const std::size_t size = read_array(n);
    std::vector<double> out(size);
    for (std::size_t i = 0; i < size; ++i) out[i] = read_number(n.at(i));
    return out;
}

// An array of rows; rows < 0 accepts any number of rows.
Matrix read_matrix(const Node& n, long long rows, int cols) {
    const std::size_t got = read_array(n, rows, "rows");
    Matrix m(static_cast<Eigen::Index>(got), cols);
    for (std::size_t i = 0; i < got; ++i) {
        m.row(static_cast<Eigen::Index>(i)) = read_vector(n.at(i), cols).transpose();
    }
    return m;
}

// Statistics of usage, visit lengths and distances: none is negative, and the quantiles climb to
// the maximum (a hand-edited or corrupt file would otherwise size containers at random). A
// rounding error of a millionth is let pass.
void check_summary(const Node& n, const Summary& s) {
    const std::pair<const char*, double> values[] = {
        {"mean", s.mean}, {"std", s.std}, {"p50", s.p50}, {"p90", s.p90},
        {"p95", s.p95},   {"p99", s.p99}, {"max", s.max}};
    for (const auto& [key, value] : values)
        if (value < 0)
            fail(member(n.path, key), "expected a statistic >= 0, got " + describe(n.json[key]));
    for (std::size_t i = 3; i < std::size(values); ++i) {
        const auto& [lower_key, lower] = values[i - 1];
        const auto& [key, value] = values[i];
        if (lower > value + 1e-6 * std::abs(value))
            fail(member(n.path, key), std::string("expected at least ") + lower_key + " (" +
                                          describe(n.json[lower_key]) + "), got " +
                                          describe(n.json[key]));
    }
}

Summary read_summary(const Node& n) {
    Summary s;
    s.count = read_count(n.at("count"));
    s.mean = read_number(n.at("mean"));
    s.std = read_number(n.at("std"));
    s.p50 = read_number(n.at("p50"));
    s.p90 = read_number(n.at("p90"));
    s.p95 = read_number(n.at("p95"));
    s.p99 = read_number(n.at("p99"));
    s.max = read_number(n.at("max"));
    check_summary(n, s);
    return s;
}

// What both formats share: features, scaler, CRBM and centroids.
void read_core(const Node& doc, PhaseModel& model) {
    model.features = read_strings(doc.at("features"), true);
    const auto f = static_cast<long long>(model.features.size());
    if (f == 0) fail("features", "expected at least one feature");

    const Node scaler = doc.at("scaler");
    model.scaler.mean = read_vector(scaler.at("mean"), f);
    const Node scale = scaler.at("scale");
    read_array(scale, f, "numbers");
    model.scaler.scale.resize(f);
    for (long long i = 0; i < f; ++i) model.scaler.scale[i] = read_positive(scale.at(i));

    const Node crbm = doc.at("crbm");
    Crbm& c = model.crbm;
    c.n_vis = read_dimension(crbm.at("n_vis"));
    if (c.n_vis != f) {
        fail("crbm.n_vis",
             std::to_string(c.n_vis) + " does not match the " + std::to_string(f) + " features");
    }
    c.n_hid = read_dimension(crbm.at("n_hid"));
    c.n_his = read_dimension(crbm.at("n_his"));
    c.W = read_matrix(crbm.at("W"), c.n_hid, c.n_vis);
    c.A = read_matrix(crbm.at("A"), c.n_vis, c.n_cond());
    c.B = read_matrix(crbm.at("B"), c.n_hid, c.n_cond());
    c.v_bias = read_vector(crbm.at("v_bias"), c.n_vis);
    c.h_bias = read_vector(crbm.at("h_bias"), c.n_hid);

    const Node centroids = doc.at("kmeans").at("centroids");
    model.centroids = read_matrix(centroids, -1, c.n_hid);
    if (model.centroids.rows() == 0) fail(centroids.path, "expected at least one centroid");
}

// One summary per usage column, by the column's name; no other key.
std::vector<Summary> read_column_summaries(const Node& n, const std::vector<std::string>& columns) {
    std::vector<Summary> summaries;
    for (const auto& column : columns) summaries.push_back(read_summary(n.at(column)));
    if (n.json.size() != columns.size()) {
        for (const auto& [key, value] : n.json.items()) {
            if (std::find(columns.begin(), columns.end(), key) == columns.end())
                fail(member(n.path, key), "not one of usage_columns");
        }
    }
    return summaries;
}

PhaseStatistics read_statistics(const Node& n, int k) {
    PhaseStatistics s;
    s.usage_columns = read_strings(n.at("usage_columns"), true);
    s.executions = read_count(n.at("executions"));

    const Node phases = n.at("phases");
    read_array(phases, k, "phases (one per centroid)");
    for (int p = 0; p < k; ++p) {
        const Node phase = phases.at(static_cast<std::size_t>(p));
        PhaseStats ps;
        ps.samples = read_count(phase.at("samples"));
        ps.usage = read_column_summaries(phase.at("usage"), s.usage_columns);
        // Models written before the rise was kept have none: the policy then provisions none.
        if (phase.json.contains("rise"))
            ps.rise = read_column_summaries(phase.at("rise"), s.usage_columns);
        // Nor a settled rise before it was kept: the policy then takes the rise throughout.
        if (phase.json.contains("settled_rise"))
            ps.settled_rise = read_column_summaries(phase.at("settled_rise"), s.usage_columns);
        ps.visit_samples = read_summary(phase.at("visit_samples"));
        ps.visit_seconds = read_summary(phase.at("visit_seconds"));
        ps.distance = read_summary(phase.at("distance"));
        s.phases.push_back(std::move(ps));
    }

    const Node transitions = n.at("transitions");
    s.transitions = read_matrix(transitions, k, k);
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
            if (s.transitions(i, j) < 0) {
                fail(element(element(transitions.path, i), j),
                     "expected a count (>= 0), got " + describe(transitions.json[i][j]));
            }
        }
    }

    const Node sequences = n.at("sequences");
    const std::size_t count = read_array(sequences);
    for (std::size_t i = 0; i < count; ++i) {
        const Node seq = sequences.at(i);
        PhaseSequence ps;
        const Node ids = seq.at("phases");
        const std::size_t length = read_array(ids);
        for (std::size_t j = 0; j < length; ++j) {
            ps.phases.push_back(static_cast<int>(read_integer(ids.at(j), 0, k - 1)));
        }
        ps.executions = read_count(seq.at("executions"));
        s.sequences.push_back(std::move(ps));
    }
    // transition_probabilities is written for readers only: it follows from transitions.
    return s;
}

void expect_match(const Node& n, int value, const char* what, int expected) {
    if (value != expected) {
        fail(n.path,
             std::to_string(value) + " does not match " + what + " " + std::to_string(expected));
    }
}

TrainingParameters read_parameters(const Node& n, const PhaseModel& model) {
    constexpr long long kMax = std::numeric_limits<int>::max();
    TrainingParameters p;
    p.traces = read_strings(n.at("traces"), false);
    p.id_column = read_string(n.at("id_column"));
    p.hidden = static_cast<int>(read_integer(n.at("hidden"), 1, kMaxDimension));
    expect_match(n.at("hidden"), p.hidden, "crbm.n_hid", model.crbm.n_hid);
    p.history = static_cast<int>(read_integer(n.at("history"), 1, kMaxDimension));
    expect_match(n.at("history"), p.history, "crbm.n_his", model.crbm.n_his);
    p.phases = static_cast<int>(read_integer(n.at("phases"), 1, kMaxDimension));
    expect_match(n.at("phases"), p.phases, "the number of centroids", model.phases());
    p.epochs = static_cast<int>(read_integer(n.at("epochs"), 0, kMax));
    p.learning_rate = read_number(n.at("learning_rate"));
    p.batch = static_cast<int>(read_integer(n.at("batch"), 1, kMax));
    p.cd_steps = static_cast<int>(read_integer(n.at("cd_steps"), 1, kMax));
    p.momentum = read_number(n.at("momentum"));
    p.weight_decay = read_number(n.at("weight_decay"));
    p.patience = static_cast<int>(read_integer(n.at("patience"), 0, kMax));
    p.kmeans_restarts = static_cast<int>(read_integer(n.at("kmeans_restarts"), 1, kMax));
    p.seed = read_seed(n.at("seed"));
    return p;
}

// The summary keys of "training"; they come all together or not at all.
const char* const kSummaryKeys[] = {"final_reconstruction_error",
                                    "reconstruction_error_per_epoch",
                                    "stopped_early",
                                    "executions",
                                    "rows",
                                    "slices",
                                    "kmeans_inertia",
                                    "seconds"};

std::optional<TrainingSummary> read_training(const Node& n) {
    bool any = false;
    for (const char* key : kSummaryKeys) any = any || n.has(key);
    if (!any) return std::nullopt;
    TrainingSummary t;
    t.final_reconstruction_error = read_number(n.at("final_reconstruction_error"));
    t.reconstruction_error_per_epoch = read_numbers(n.at("reconstruction_error_per_epoch"));
    t.stopped_early = read_bool(n.at("stopped_early"));
    t.executions = read_count(n.at("executions"));
    t.rows = read_count(n.at("rows"));
    t.slices = read_count(n.at("slices"));
    t.kmeans_inertia = read_number(n.at("kmeans_inertia"));
    t.seconds = read_number(n.at("seconds"));
    return t;
}

// Optional: a file without names gets them derived from its statistics (or phase-N).
std::vector<std::string> read_phase_names(const Node& doc, const PhaseModel& model) {
    if (!doc.has("phase_names")) return derive_phase_names(model);
    const Node names = doc.at("phase_names");
    read_array(names, model.phases(), "names (one per centroid)");
    std::vector<std::string> out = read_strings(names, true);
    for (std::size_t i = 0; i < out.size(); ++i)
        if (const std::string problem = phase_name_problem(out[i]); !problem.empty())
            fail(element(names.path, i), problem);
    return out;
}

PhaseModel from_json(const Json& json) {
    const Node doc{json, ""};
    if (!json.is_object()) fail("", "expected a JSON object, got " + describe(json));
    PhaseModel model;
    model.format = read_string(doc.at("format"));
    if (model.format == kAi4dlFormat) {
        read_core(doc, model);  // its other keys (source, history_layout) only document it
        model.phase_names = derive_phase_names(model);
        return model;
    }
    if (model.format != kModelFormat) {
        fail("", "unknown format " + Json(model.format).dump() + " (expected \"" + kModelFormat +
                     "\" or \"" + kAi4dlFormat + "\")");
    }
    const long long version = read_integer(doc.at("version"), 1, kNoLimit);
    if (version > kModelVersion) {
        fail("", "version " + std::to_string(version) + " is newer than this phasescale (reads " +
                     std::to_string(kModelVersion) + ")");
    }
    read_core(doc, model);
    if (doc.has("statistics")) {
        model.statistics = read_statistics(doc.at("statistics"), model.phases());
    }
    if (doc.has("training")) {
        const Node training = doc.at("training");
        training.expect_object();
        if (training.has("parameters")) {
            model.parameters = read_parameters(training.at("parameters"), model);
        }
        model.training = read_training(training);
    }
    model.phase_names = read_phase_names(doc, model);
    return model;
}

// Writers. They refuse non-finite numbers: JSON has none, and nlohmann would write null.

Json write_number(double x, const std::string& path) {
    if (!std::isfinite(x))
        fail(path, "cannot write " + describe(Json(x)) + ": not a finite number");
    return x;
}

template <typename V>
Json write_vector(const V& v, const std::string& path) {
    Json out = Json::array();
    for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(write_number(v(i), element(path, i)));
    return out;
}

Json write_numbers(const std::vector<double>& v, const std::string& path) {
    Json out = Json::array();
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(write_number(v[i], element(path, i)));
    return out;
}

Json write_matrix(const Matrix& m, const std::string& path) {
    Json out = Json::array();
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        out.push_back(write_vector(m.row(i), element(path, static_cast<std::size_t>(i))));
    }
    return out;
}

Json write_summary(const Summary& s, const std::string& path) {
    return Json{{"count", s.count},
                {"mean", write_number(s.mean, member(path, "mean"))},
                {"std", write_number(s.std, member(path, "std"))},
                {"p50", write_number(s.p50, member(path, "p50"))},
                {"p90", write_number(s.p90, member(path, "p90"))},
                {"p95", write_number(s.p95, member(path, "p95"))},
                {"p99", write_number(s.p99, member(path, "p99"))},
                {"max", write_number(s.max, member(path, "max"))}};
}

Json write_statistics(const PhaseStatistics& s) {
    const std::string path = "statistics";
    Json phases = Json::array();
    for (std::size_t p = 0; p < s.phases.size(); ++p) {
        const PhaseStats& ps = s.phases[p];
        const std::string at = element(path + ".phases", p);
        const auto by_column = [&](const std::vector<Summary>& summaries, const char* key) {
            if (summaries.size() != s.usage_columns.size()) {
                fail(member(at, key), std::to_string(summaries.size()) + " summaries for " +
                                          std::to_string(s.usage_columns.size()) +
                                          " usage columns");
            }
            Json out = Json::object();
            for (std::size_t c = 0; c < summaries.size(); ++c) {
                const std::string& column = s.usage_columns[c];
                out[column] = write_summary(summaries[c], member(member(at, key), column));
            }
            return out;
        };
        const auto summary = [&](const Summary& x, const char* key) {
            return write_summary(x, member(at, key));
        };
        Json phase{{"samples", ps.samples},
                   {"usage", by_column(ps.usage, "usage")},
                   {"visit_samples", summary(ps.visit_samples, "visit_samples")},
                   {"visit_seconds", summary(ps.visit_seconds, "visit_seconds")},
                   {"distance", summary(ps.distance, "distance")}};
        if (!ps.rise.empty()) phase["rise"] = by_column(ps.rise, "rise");
        if (!ps.settled_rise.empty())
            phase["settled_rise"] = by_column(ps.settled_rise, "settled_rise");
        phases.push_back(std::move(phase));
    }
    Json sequences = Json::array();
    for (const auto& seq : s.sequences) {
        sequences.push_back(Json{{"phases", seq.phases}, {"executions", seq.executions}});
    }
    return Json{{"usage_columns", s.usage_columns},
                {"executions", s.executions},
                {"phases", std::move(phases)},
                {"transitions", write_matrix(s.transitions, path + ".transitions")},
                {"transition_probabilities",
                 write_matrix(s.transition_probabilities(), path + ".transition_probabilities")},
                {"sequences", std::move(sequences)}};
}

Json write_training(const PhaseModel& model) {
    const std::string path = "training";
    Json out = Json::object();
    if (model.parameters) {
        const TrainingParameters& p = *model.parameters;
        const std::string at = member(path, "parameters");
        const auto number = [&](double x, const char* key) {
            return write_number(x, member(at, key));
        };
        out["parameters"] = Json{{"traces", p.traces},
                                 {"id_column", p.id_column},
                                 {"hidden", p.hidden},
                                 {"history", p.history},
                                 {"phases", p.phases},
                                 {"epochs", p.epochs},
                                 {"learning_rate", number(p.learning_rate, "learning_rate")},
                                 {"batch", p.batch},
                                 {"cd_steps", p.cd_steps},
                                 {"momentum", number(p.momentum, "momentum")},
                                 {"weight_decay", number(p.weight_decay, "weight_decay")},
                                 {"patience", p.patience},
                                 {"kmeans_restarts", p.kmeans_restarts},
                                 {"seed", p.seed}};
    }
    if (model.training) {
        const TrainingSummary& t = *model.training;
        out["final_reconstruction_error"] =
            write_number(t.final_reconstruction_error, member(path, "final_reconstruction_error"));
        out["reconstruction_error_per_epoch"] = write_numbers(
            t.reconstruction_error_per_epoch, member(path, "reconstruction_error_per_epoch"));
        out["stopped_early"] = t.stopped_early;
        out["executions"] = t.executions;
        out["rows"] = t.rows;
        out["slices"] = t.slices;
        out["kmeans_inertia"] = write_number(t.kmeans_inertia, member(path, "kmeans_inertia"));
        out["seconds"] = write_number(t.seconds, member(path, "seconds"));
    }
    return out;
}

Json to_json(const PhaseModel& model) {
    const Crbm& c = model.crbm;
    Json doc{
        {"format", kModelFormat},
        {"version", kModelVersion},
        {"features", model.features},
        {"scaler",
         {{"mean", write_vector(model.scaler.mean, "scaler.mean")},
          {"scale", write_vector(model.scaler.scale, "scaler.scale")}}},
        {"crbm",
         {{"n_vis", c.n_vis},
          {"n_hid", c.n_hid},
          {"n_his", c.n_his},
          {"W", write_matrix(c.W, "crbm.W")},
          {"A", write_matrix(c.A, "crbm.A")},
          {"B", write_matrix(c.B, "crbm.B")},
          {"v_bias", write_vector(c.v_bias, "crbm.v_bias")},
          {"h_bias", write_vector(c.h_bias, "crbm.h_bias")}}},
        {"kmeans", {{"centroids", write_matrix(model.centroids, "kmeans.centroids")}}},
        {"phase_names", model.phase_names.empty() ? derive_phase_names(model) : model.phase_names}};
    if (model.statistics) doc["statistics"] = write_statistics(*model.statistics);
    if (model.parameters || model.training) doc["training"] = write_training(model);
    return doc;
}

// nlohmann refuses a number too large for a double without saying where it is: track the path
// while parsing so the message can name the field.
Json parse_json(const std::string& text) {
    struct Frame {
        bool array;
        std::size_t index;
        std::string key;
    };
    std::vector<Frame> stack;
    const auto track = [&](int, Json::parse_event_t event, Json& parsed) {
        switch (event) {
            case Json::parse_event_t::object_start: stack.push_back({false, 0, {}}); break;
            case Json::parse_event_t::array_start: stack.push_back({true, 0, {}}); break;
            case Json::parse_event_t::key: stack.back().key = parsed.get<std::string>(); break;
            case Json::parse_event_t::object_end:
            case Json::parse_event_t::array_end: stack.pop_back(); [[fallthrough]];
            case Json::parse_event_t::value:
                if (!stack.empty() && stack.back().array) ++stack.back().index;
                break;
        }
        return true;
    };
    try {
        return Json::parse(text, track);
    } catch (const Json::out_of_range& e) {
        std::string path;
        for (const Frame& f : stack) path = f.array ? element(path, f.index) : member(path, f.key);
        std::string what = e.what();
        const auto quote = what.find('\'');
        const std::string token = quote == std::string::npos
                                      ? what
                                      : what.substr(quote + 1, what.rfind('\'') - quote - 1);
        fail(path, "expected a finite number, got " + token);
    } catch (const Json::exception& e) {
        std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line ..."
        if (what.starts_with("[json.exception.")) what.erase(0, what.find(']') + 2);
        fail("", "not valid JSON: " + what);
    }
}

[[noreturn]] void rethrow(const FieldError& e, const std::string& where) {
    throw InputError(where + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message);
}

std::string dump(const Json& doc) {
    try {
        return doc.dump(1) + "\n";  // one space of indentation, like the AI4DL export
    } catch (const Json::type_error& e) {
        // A name that is not UTF-8: refuse it rather than write a name the model does not have.
        std::string what = e.what();
        if (what.starts_with("[json.exception.")) what.erase(0, what.find(']') + 2);
        fail("", "a name (feature, column or trace) is not valid UTF-8: " + what);
    }
}

// Builds the document and checks it reads back, so no file is written that cannot be loaded.
Json checked_document(const PhaseModel& model) {
    Json doc = to_json(model);
    from_json(doc);
    return doc;
}

}  // namespace

PhaseModel parse_model(const std::string& text, const std::string& source) {
    try {
        return from_json(parse_json(text));
    } catch (const FieldError& e) {
        rethrow(e, source);
    }
}

PhaseModel load_model(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string text;
    char block[1 << 16];
    std::size_t got;
    while ((got = std::fread(block, 1, sizeof block, file.get())) > 0) text.append(block, got);
    // A directory opens fine and fails here, with EISDIR.
    if (std::ferror(file.get())) throw InputError(path + ": cannot read: " + std::strerror(errno));
    return parse_model(text, path);
}

std::string serialise_model(const PhaseModel& model) {
    try {
        return dump(checked_document(model));
    } catch (const FieldError& e) {
        rethrow(e, "cannot serialise model");
    }
}

void save_model(const PhaseModel& model, const std::string& path) {
    std::string text;
    try {
        text = dump(checked_document(model));
    } catch (const FieldError& e) {
        rethrow(e, path + ": not saved");
    }

    AtomicFile file(path);
    file.write(text.data(), text.size());
    file.commit();
}

}  // namespace phasescale::model
