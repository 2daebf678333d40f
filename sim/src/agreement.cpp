#include <phasescale/sim/agreement.hpp>

#include <phasescale/model/error.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>

namespace phasescale::sim {
namespace {

constexpr std::string_view kHeader = "unix_time,phase,epoch";

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> fields;
    for (std::size_t start = 0;;) {
        std::size_t comma = line.find(',', start);
        fields.push_back(line.substr(start, comma - start));
        if (comma == std::string_view::npos) return fields;
        start = comma + 1;
    }
}

bool parse_time(std::string_view text, double& time) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), time);
    return error == std::errc() && end == text.data() + text.size() && std::isfinite(time);
}

bool parse_epoch(std::string_view text, int& epoch) {
    if (text.empty()) {
        epoch = -1;
        return true;
    }
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), epoch);
    return error == std::errc() && end == text.data() + text.size() && epoch >= 0;
}

class RowReader {
public:
    explicit RowReader(PhaseLog& log) : log_(log) {}

    void read(std::string_view line, std::size_t number) {
        where_ = log_.source + ":" + std::to_string(number) + ": ";
        std::vector<std::string_view> fields = split(line);
        double time = 0;
        bool numeric = parse_time(fields[0], time);
        if (!numeric && log_.times.empty() && !header_seen_) return header(line);
        if (fields.size() != 3)
            fail("expected 3 fields (unix_time,phase,epoch), found " +
                 std::to_string(fields.size()));
        if (!numeric) fail("bad time \"" + std::string(fields[0]) + "\"");
        if (fields[1].empty()) fail("empty phase");
        int epoch = -1;
        if (!parse_epoch(fields[2], epoch)) fail("bad epoch \"" + std::string(fields[2]) + "\"");
        if (!log_.times.empty() && time < log_.times.back()) {
            fail("time " + std::string(fields[0]) + " is before the previous row's");
        }
        log_.times.push_back(time);
        log_.phases.emplace_back(fields[1]);
        log_.epochs.push_back(epoch);
    }

private:
    void header(std::string_view line) {
        if (line != kHeader) {
            fail("bad header \"" + std::string(line) + "\": expected " + std::string(kHeader) +
                 " or a first row of phases");
        }
        header_seen_ = true;
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw model::InputError(where_ + what);
    }

    PhaseLog& log_;
    std::string where_;
    bool header_seen_ = false;
};

}  // namespace

PhaseLog read_phase_log(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw model::InputError(path + ": cannot open the phases file");
    PhaseLog log;
    log.source = path;
    RowReader rows(log);
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        rows.read(line, number);
    }
    if (log.times.empty()) throw model::InputError(path + ": no phases in the file");
    return log;
}

int PhaseIds::id(const std::string& label) {
    auto [it, added] = ids_.try_emplace(label, static_cast<int>(labels_.size()));
    if (added) labels_.push_back(label);
    return it->second;
}

std::vector<int> label_samples(const PhaseLog& log, std::span<const double> timestamps,
                               PhaseIds& ids) {
    const std::size_t n = timestamps.size();
    std::vector<int> labels(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0 && timestamps[i] < timestamps[i - 1]) {
            throw std::invalid_argument("label_samples: timestamps go backwards at sample " +
                                        std::to_string(i));
        }
        double interval = i > 0 ? timestamps[i] - timestamps[i - 1]
                                : (n > 1 ? timestamps[1] - timestamps[0] : 0.0);
        // The last phase entered at or before the middle of the sample's interval.
        double middle = timestamps[i] - interval / 2;
        auto after = std::upper_bound(log.times.begin(), log.times.end(), middle);
        if (after == log.times.begin()) continue;
        labels[i] = ids.id(log.phases[static_cast<std::size_t>(after - log.times.begin() - 1)]);
    }
    return labels;
}

namespace {

// The contingency table of two labelings over the positions where both are labelled.
struct Contingency {
    std::map<std::pair<int, int>, long> cells;
    std::vector<long> rows, columns;  // marginal counts
    long n = 0;
};

Contingency contingency(std::span<const int> a, std::span<const int> b) {
    std::map<int, std::size_t> row_of, column_of;
    Contingency c;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] < 0 || b[i] < 0) continue;
        auto [r, new_row] = row_of.try_emplace(a[i], c.rows.size());
        if (new_row) c.rows.push_back(0);
        auto [k, new_column] = column_of.try_emplace(b[i], c.columns.size());
        if (new_column) c.columns.push_back(0);
        ++c.cells[{static_cast<int>(r->second), static_cast<int>(k->second)}];
        ++c.rows[r->second];
        ++c.columns[k->second];
        ++c.n;
    }
    return c;
}

double entropy(const std::vector<long>& counts, long n) {
    double h = 0;
    for (long count : counts) {
        double p = static_cast<double>(count) / static_cast<double>(n);
        h -= p * std::log(p);
    }
    return h;
}

double mutual_information(const Contingency& c) {
    const double n = static_cast<double>(c.n);
    double mi = 0;
    for (const auto& [cell, count] : c.cells) {
        double a = static_cast<double>(c.rows[static_cast<std::size_t>(cell.first)]);
        double b = static_cast<double>(c.columns[static_cast<std::size_t>(cell.second)]);
        mi += count / n * std::log(n * count / (a * b));
    }
    return mi;
}

double log_factorial(long k) {
    return std::lgamma(static_cast<double>(k) + 1);
}

// E[MI] when the labels are permuted at random with the marginals fixed: each cell count follows
// a hypergeometric distribution (Vinh, Epps and Bailey 2010, eq. 24a).
double expected_mutual_information(const Contingency& c) {
    const long n = c.n;
    const double log_n_factorial = log_factorial(n);
    double emi = 0;
    for (long a : c.rows) {
        for (long b : c.columns) {
            double fixed = log_factorial(a) + log_factorial(b) + log_factorial(n - a) +
                           log_factorial(n - b) - log_n_factorial;
            for (long k = std::max(1L, a + b - n); k <= std::min(a, b); ++k) {
                double log_p = fixed - log_factorial(k) - log_factorial(a - k) -
                               log_factorial(b - k) - log_factorial(n - a - b + k);
                double term = static_cast<double>(k) / n *
                              std::log(static_cast<double>(n) * k / (static_cast<double>(a) * b));
                emi += term * std::exp(log_p);
            }
        }
    }
    return emi;
}

}  // namespace

double adjusted_mutual_information(std::span<const int> a, std::span<const int> b) {
    if (a.size() != b.size()) {
        throw std::invalid_argument("adjusted_mutual_information: labelings of " +
                                    std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                    " samples");
    }
    Contingency c = contingency(a, b);
    if (c.n == 0) return std::numeric_limits<double>::quiet_NaN();
    if (c.rows.size() == 1 && c.columns.size() == 1) return 1.0;  // nothing split: a perfect match
    double mi = mutual_information(c);
    double emi = expected_mutual_information(c);
    double normaliser = (entropy(c.rows, c.n) + entropy(c.columns, c.n)) / 2;
    // As scikit-learn: keep the sign, never divide by zero when the expectation equals the maximum.
    constexpr double eps = std::numeric_limits<double>::epsilon();
    double denominator = normaliser - emi;
    denominator = denominator < 0 ? std::min(denominator, -eps) : std::max(denominator, eps);
    return (mi - emi) / denominator;
}

std::size_t label_changes(std::span<const int> labels) {
    std::size_t changes = 0;
    int previous = -1;
    for (int label : labels) {
        if (label < 0) continue;
        if (previous >= 0 && label != previous) ++changes;
        previous = label;
    }
    return changes;
}

double covered_seconds(std::span<const double> timestamps) {
    if (timestamps.size() < 2) return 0;
    return timestamps.back() - timestamps.front() + (timestamps[1] - timestamps[0]);
}

double changes_per_hour(std::span<const int> labels, std::span<const double> timestamps) {
    if (labels.size() != timestamps.size()) {
        throw std::invalid_argument("changes_per_hour: " + std::to_string(labels.size()) +
                                    " labels for " + std::to_string(timestamps.size()) +
                                    " samples");
    }
    double seconds = covered_seconds(timestamps);
    if (seconds <= 0) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(label_changes(labels)) * 3600 / seconds;
}

}  // namespace phasescale::sim
