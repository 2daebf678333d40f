// The cluster simulator's inputs: CSV files, the Philly trace, scaling curves, the generator.

#include <phasescale/model/number_text.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/sim/cluster_trace.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <numbers>
#include <ostream>
#include <stdexcept>

namespace phasescale::sim {
namespace {

// ---------------------------------------------------------------------------------------------
// A small CSV reader: plain fields (none of these files quotes), columns found by header name.

class CsvFile {
public:
    explicit CsvFile(const std::string& path) : path_(path), in_(path) {
        if (!in_) throw std::runtime_error(path + ": cannot open");
        std::string header;
        if (!next_line(header))
            throw std::runtime_error(path + ": empty file (a header line is needed)");
        header_ = split(header);
    }

    // The index of a column; throws if the header lacks it.
    std::size_t column(const std::string& name) const {
        for (std::size_t i = 0; i < header_.size(); ++i) {
            if (header_[i] == name) return i;
        }
        throw std::runtime_error(path_ + ":1: no column '" + name + "' in the header");
    }

    bool read_row() {
        std::string line;
        while (next_line(line)) {
            if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines
            fields_ = split(line);
            if (fields_.size() < header_.size())
                error(fields_.size(), "missing field (" + std::to_string(fields_.size()) + " of " +
                                          std::to_string(header_.size()) + ")");
            return true;
        }
        return false;
    }

    const std::string& text(std::size_t column) const { return fields_[column]; }

    double number(std::size_t column) const {
        const std::string& t = fields_[column];
        double value = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
        if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value)) {
            error(column,
                  "'" + t.substr(0, 60) + (t.size() > 60 ? "...'" : "'") + " is not a number");
        }
        return value;
    }

    int integer(std::size_t column) const {
        const double value = number(column);
        if (value != std::floor(value) || std::fabs(value) > 1e9)
            error(column, "'" + text(column).substr(0, 60) + "' is not an integer");
        return static_cast<int>(value);
    }

    [[noreturn]] void error(std::size_t column, const std::string& what) const {
        const std::string name = column < header_.size() ? " (" + header_[column] + ")" : "";
        throw std::runtime_error(path_ + ":" + std::to_string(line_) + ": column " +
                                 std::to_string(column + 1) + name + ": " + what);
    }

private:
    bool next_line(std::string& line) {
        if (!std::getline(in_, line)) return false;
        ++line_;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
    }

    static std::vector<std::string> split(const std::string& line) {
        std::vector<std::string> out;
        std::size_t start = 0;
        for (;;) {
            const std::size_t comma = line.find(',', start);
            std::string field = line.substr(start, comma - start);
            const auto b = field.find_first_not_of(" \t"), e = field.find_last_not_of(" \t");
            out.push_back(b == std::string::npos ? "" : field.substr(b, e - b + 1));
            if (comma == std::string::npos) return out;
            start = comma + 1;
        }
    }

    std::string path_;
    std::ifstream in_;
    std::vector<std::string> header_, fields_;
    std::size_t line_ = 0;
};

// "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS", UTC, to unix seconds; false if malformed.
bool parse_utc(const std::string& text, double& seconds) {
    std::tm tm{};
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char tail = 0;
    const int n =
        std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail);
    if (!(n == 3 || n == 6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    if (n == 3 && text.size() != 10) return false;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    seconds = static_cast<double>(::timegm(&tm));
    // timegm normalises 2017-02-31 to March 3rd: a date that does not come back is no date.
    return tm.tm_year == y - 1900 && tm.tm_mon == mo - 1 && tm.tm_mday == d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Job and load CSVs

// What a job of any real cluster stays within; rows beyond are refused, not simulated (a job of
// a billion workers or of 1e308 seconds makes the simulator's tables huge or never ends).
constexpr int kMostWorkers = 100000, kMostGpusPerWorker = 1024;
constexpr double kLongestJobS = 1e9, kLatestSubmitS = 1e10;

std::vector<ClusterJob> read_cluster_jobs(const std::string& path) {
    CsvFile csv(path);
    const std::size_t id = csv.column("id"), submit = csv.column("submit_s"),
                      gpw = csv.column("gpus_per_worker"), lo = csv.column("min_workers"),
                      hi = csv.column("max_workers"), duration = csv.column("duration_s"),
                      elastic = csv.column("elastic"), curve = csv.column("curve");
    std::vector<ClusterJob> jobs;
    while (csv.read_row()) {
        ClusterJob job;
        job.id = csv.text(id);
        job.submit_s = csv.number(submit);
        if (!(job.submit_s >= 0 && job.submit_s <= kLatestSubmitS))
            csv.error(submit, "must be in [0, 1e10]");
        job.gpus_per_worker = csv.integer(gpw);
        if (job.gpus_per_worker < 1 || job.gpus_per_worker > kMostGpusPerWorker)
            csv.error(gpw, "must be in [1, 1024]");
        job.min_workers = csv.integer(lo);
        if (job.min_workers < 1 || job.min_workers > kMostWorkers)
            csv.error(lo, "must be in [1, 100000]");
        job.max_workers = csv.integer(hi);
        if (job.max_workers < job.min_workers || job.max_workers > kMostWorkers)
            csv.error(hi, "must be at least min_workers and at most 100000");
        job.duration_s = csv.number(duration);
        if (!(job.duration_s > 0 && job.duration_s <= kLongestJobS))
            csv.error(duration, "must be in (0, 1e9] seconds");
        const int is_elastic = csv.integer(elastic);
        if (is_elastic != 0 && is_elastic != 1) csv.error(elastic, "must be 0 or 1");
        if (is_elastic == 0 && job.max_workers != job.min_workers) {
            csv.error(hi, "an inelastic job (elastic 0) needs max_workers == min_workers");
        }
        job.curve = csv.text(curve);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

void write_cluster_jobs(std::ostream& out, const std::vector<ClusterJob>& jobs) {
    out << "id,submit_s,gpus_per_worker,min_workers,max_workers,duration_s,elastic,curve\n";
    for (const ClusterJob& j : jobs) {
        out << j.id << ',' << model::number_text(j.submit_s) << ',' << j.gpus_per_worker << ','
            << j.min_workers << ',' << j.max_workers << ',' << model::number_text(j.duration_s)
            << ',' << (j.elastic() ? 1 : 0) << ',' << (j.curve.empty() ? "linear" : j.curve)
            << '\n';
    }
}

std::vector<LoadPoint> read_inference_load(const std::string& path) {
    CsvFile csv(path);
    const std::size_t time = csv.column("time_s"), load = csv.column("load");
    std::vector<LoadPoint> points;
    while (csv.read_row()) {
        LoadPoint p{csv.number(time), csv.number(load)};
        if (p.load < 0 || p.load > 1) csv.error(load, "must be in [0, 1]");
        if (!points.empty() && p.time_s < points.back().time_s)
            csv.error(time, "times must not decrease");
        points.push_back(p);
    }
    return points;
}

void write_inference_load(std::ostream& out, const std::vector<LoadPoint>& load) {
    out << "time_s,load\n";
    for (const LoadPoint& p : load)
        out << model::number_text(p.time_s) << ',' << model::number_text(p.load) << '\n';
}

// ---------------------------------------------------------------------------------------------
// Scaling curves

policy::ScalingCurve read_scaling_curve(const std::string& path) {
    CsvFile csv(path);
    const std::size_t replicas = csv.column("num_replicas"), bsz = csv.column("local_bsz"),
                      step = csv.column("step_time");
    std::map<double, double> best;
    while (csv.read_row()) {
        const double n = csv.number(replicas), b = csv.number(bsz), t = csv.number(step);
        if (!(n > 0) || !(b > 0) || !(t > 0))
            csv.error(step, "num_replicas, local_bsz and step_time must be positive");
        best[n] = std::max(best[n], n * b / t);
    }
    if (best.empty()) throw std::runtime_error(path + ": no measurements");
    return policy::ScalingCurve(std::vector<std::pair<double, double>>(best.begin(), best.end()));
}

std::vector<std::pair<std::string, policy::ScalingCurve>> read_scaling_curves(
    const std::string& directory, const std::vector<ClusterJob>& jobs) {
    std::vector<std::pair<std::string, policy::ScalingCurve>> curves;
    for (const ClusterJob& job : jobs) {
        if (job.curve.empty() || job.curve == "linear") continue;
        if (std::any_of(curves.begin(), curves.end(),
                        [&](const auto& c) { return c.first == job.curve; }))
            continue;
        if (job.curve.find('/') != std::string::npos)
            throw std::runtime_error("job '" + job.id + "': bad curve name '" + job.curve + "'");
        curves.emplace_back(job.curve,
                            read_scaling_curve(directory + "/scalability-" + job.curve + ".csv"));
    }
    return curves;
}

void assign_elasticity(std::vector<ClusterJob>& jobs, const ElasticRule& rule) {
    model::Random random(rule.seed);
    constexpr std::size_t models = std::size(kCurveModels);
    for (ClusterJob& job : jobs) {
        // Two draws per job whatever it becomes, so job i's lot depends on i only.
        const bool elastic = random.uniform() < rule.share;
        const std::size_t curve = random.below(models);
        if (elastic) {
            job.max_workers = job.min_workers * rule.max_scale;
            job.curve = kCurveModels[curve];
        } else {
            job.max_workers = job.min_workers;
            job.curve = "linear";
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The Philly trace

std::vector<ClusterJob> read_philly_jobs(const std::string& path, const PhillyWindow& window) {
    double from = 0;
    if (!parse_utc(window.from, from)) {
        throw std::runtime_error("bad date '" + window.from +
                                 "': expected YYYY-MM-DD or YYYY-MM-DD HH:MM:SS");
    }
    if (!(window.days > 0)) throw std::runtime_error("the window must last more than 0 days");
    const double until = from + window.days * 86400;
    CsvFile csv(path);
    const std::size_t timestamp = csv.column("timestamp"), duration = csv.column("duration"),
                      gpus = csv.column("num_gpus"), cluster = csv.column("cluster");
    std::vector<ClusterJob> jobs;
    std::size_t row = 0;
    while (csv.read_row()) {
        ++row;
        if (csv.text(cluster) != window.cluster) continue;
        double submit = 0;
        if (!parse_utc(csv.text(timestamp), submit))
            csv.error(timestamp, "'" + csv.text(timestamp).substr(0, 60) + "' is not a date");
        if (submit < from || submit >= until) continue;
        const double d = csv.number(duration);
        const int n = csv.integer(gpus);
        if (!(d > 0) || n < 1) continue;  // jobs that never ran
        if (d > kLongestJobS)
            csv.error(duration, "'" + csv.text(duration).substr(0, 40) +
                                    "' seconds is beyond any job (at most 1e9)");
        if (n > kMostWorkers)
            csv.error(gpus, "'" + csv.text(gpus).substr(0, 40) +
                                "' GPUs is beyond any cluster (at most 100000)");
        ClusterJob job;
        job.id = "philly-" + std::to_string(row);
        job.submit_s = submit - from;
        job.gpus_per_worker = 1;
        job.min_workers = job.max_workers = n;
        job.duration_s = d;
        jobs.push_back(std::move(job));
    }
    std::stable_sort(jobs.begin(), jobs.end(), [](const ClusterJob& a, const ClusterJob& b) {
        return a.submit_s < b.submit_s;
    });
    assign_elasticity(jobs, window.elastic);
    return jobs;
}

// ---------------------------------------------------------------------------------------------
// The generator

namespace {

// Daily cycle in [0, 1]: 1 at `peak_hour`, 0 twelve hours later.
double daily(double t_s, double peak_hour) {
    return 0.5 + 0.5 * std::cos(2 * std::numbers::pi * (t_s / 3600 - peak_hour) / 24);
}

// Draws from {values} with the given weights (summing to 1).
template <std::size_t N>
int weighted(model::Random& random, const int (&values)[N], const double (&weights)[N]) {
    double u = random.uniform();
    for (std::size_t i = 0; i < N; ++i) {
        if (u < weights[i]) return values[i];
        u -= weights[i];
    }
    return values[N - 1];
}

// What one trace may hold: beyond these a run takes gigabytes or hours, never a useful trace.
constexpr double kMaxDays = 3650, kMaxJobs = 1e7, kMaxLoadPoints = 1e7, kMaxSigma = 10,
                 kMaxDurationS = 1e9;

void check(const ClusterGenOptions& o) {
    auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
    if (!(o.days > 0 && o.days <= kMaxDays)) fail("days must be in (0, 3650]");
    if (!(o.jobs_per_day >= 0)) fail("jobs per day must be at least 0");
    if (!(o.days * o.jobs_per_day <= kMaxJobs))
        fail("days x jobs per day must be at most 10,000,000 jobs");
    if (!(o.submit_swing >= 0 && o.submit_swing <= 1)) fail("submit swing must be in [0, 1]");
    if (!(o.median_duration_s >= 1) || !(o.duration_sigma >= 0 && o.duration_sigma <= kMaxSigma))
        fail("durations need a median of at least 1 s and a sigma in [0, 10]");
    if (!(o.max_duration_s >= o.median_duration_s && o.max_duration_s <= kMaxDurationS))
        fail("max duration must be at least the median and at most 1e9 s");
    if (!(o.elastic.share >= 0 && o.elastic.share <= 1)) fail("elastic share must be in [0, 1]");
    if (o.elastic.max_scale < 2) fail("max scale must be at least 2");
    if (!(o.load_interval_s > 0 && o.days * 86400 / o.load_interval_s <= kMaxLoadPoints))
        fail(
            "load interval must be positive, and days x 86400 / load interval at most 10,000,000 "
            "load points");
    if (!(o.load_trough >= 0 && o.load_trough <= o.load_peak && o.load_peak <= 1))
        fail("need 0 <= trough <= peak <= 1");
    if (!(o.load_noise >= 0)) fail("load noise must be at least 0");
}

// A lognormal duration within [1 s, max]: out-of-range draws are redrawn, a bounded number of
// times (the last one is clamped), so that no setting loops forever.
double draw_duration(model::Random& random, const ClusterGenOptions& o) {
    double d = 0;
    for (int attempt = 0; attempt < 1000; ++attempt) {
        d = std::round(o.median_duration_s * std::exp(o.duration_sigma * random.normal()));
        if (d >= 1 && d <= o.max_duration_s) return d;
    }
    return std::clamp(d, 1.0, o.max_duration_s);
}

}  // namespace

std::vector<ClusterJob> generate_cluster_jobs(const ClusterGenOptions& o) {
    check(o);
    model::Random random(o.seed * 2 + 1);  // the job stream; the load has its own
    std::vector<ClusterJob> jobs;
    const double horizon = o.days * 86400,
                 peak_rate = o.jobs_per_day / 86400 * (1 + o.submit_swing);
    if (peak_rate <= 0) return jobs;
    // A Poisson process with a daily rate cycle, by thinning: candidates at the peak rate, each
    // kept with probability rate(t) / peak rate. Submissions peak at the load's peak hour too.
    for (double t = 0;;) {
        t += -std::log(1 - random.uniform()) / peak_rate;
        if (t >= horizon) break;
        const double rate_share =
            (1 + o.submit_swing * (2 * daily(t, o.peak_hour) - 1)) / (1 + o.submit_swing);
        if (random.uniform() >= rate_share) continue;
        ClusterJob job;
        job.id = "job-" + std::to_string(jobs.size());
        job.submit_s = std::round(t);
        static const int gpw[] = {1, 2, 4, 8};
        static const double gpw_weights[] = {0.6, 0.15, 0.15, 0.1};
        static const int workers[] = {1, 2, 4, 8, 16};
        static const double worker_weights[] = {0.7, 0.15, 0.08, 0.05, 0.02};
        job.gpus_per_worker = weighted(random, gpw, gpw_weights);
        job.min_workers = job.max_workers = weighted(random, workers, worker_weights);
        job.duration_s = draw_duration(random, o);
        jobs.push_back(std::move(job));
    }
    ElasticRule rule = o.elastic;
    rule.seed = o.seed * 2 + 2;
    assign_elasticity(jobs, rule);
    return jobs;
}

std::vector<LoadPoint> generate_inference_load(const ClusterGenOptions& o) {
    check(o);
    model::Random random(o.seed * 2 + 3);
    std::vector<LoadPoint> load;
    const double horizon = o.days * 86400;
    for (double t = 0; t < horizon; t += o.load_interval_s) {
        const double level = o.load_trough + (o.load_peak - o.load_trough) * daily(t, o.peak_hour);
        const double noisy = std::clamp(level + o.load_noise * random.normal(), 0.0, 1.0);
        load.push_back({t, std::round(noisy * 1e4) / 1e4});  // 4 decimals: files stay short
    }
    return load;
}

double offered_gpus(const std::vector<ClusterJob>& jobs, double horizon_s) {
    double gpu_s = 0;
    for (const ClusterJob& j : jobs)
        gpu_s += static_cast<double>(j.gpus_per_worker) * j.min_workers * j.duration_s;
    return horizon_s > 0 ? gpu_s / horizon_s : 0;
}

}  // namespace phasescale::sim
