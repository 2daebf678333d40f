#include <phasescale/model/error.hpp>
#include <phasescale/model/statistics.hpp>
#include <phasescale/model/working_set.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace phasescale::model {

namespace {

double sorted_quantile(const std::vector<double>& values, double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return values[below] + fraction * (values[above] - values[below]);
}

}  // namespace

double quantile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return sorted_quantile(values, q);
}

Summary Summary::of(const std::vector<double>& values) {
    Summary s;
    s.count = values.size();
    if (values.empty()) return s;
    double sum = 0;
    for (double v : values) sum += v;
    s.mean = sum / static_cast<double>(s.count);
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(squares / static_cast<double>(s.count));
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    s.p50 = sorted_quantile(sorted, 0.50);
    s.p90 = sorted_quantile(sorted, 0.90);
    s.p95 = sorted_quantile(sorted, 0.95);
    s.p99 = sorted_quantile(sorted, 0.99);
    s.max = sorted.back();
    return s;
}

Matrix PhaseStatistics::transition_probabilities() const {
    Matrix p = transitions;
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
        const double total = p.row(i).sum();
        if (total > 0) p.row(i) /= total;
    }
    return p;
}

void keep_most_common(std::vector<PhaseSequence>& sequences) {
    // Equal counts keep their (the map's lexicographic) order, so the result is stable.
    std::stable_sort(
        sequences.begin(), sequences.end(),
        [](const PhaseSequence& a, const PhaseSequence& b) { return a.executions > b.executions; });
    if (sequences.size() > kMaxSequences) sequences.resize(kMaxSequences);
}

bool PhaseStatistics::unknown(int phase, double distance, double factor) const {
    const PhaseStats& s = phases[static_cast<std::size_t>(phase)];
    return s.samples == 0 || distance > factor * s.distance.p99;
}

namespace {

struct Visit {
    int phase;
    std::size_t first, last;  // sample indices
};

// Maximal runs of one phase; samples without a phase end a run and belong to none.
std::vector<Visit> visits_of(const std::vector<int>& phases) {
    std::vector<Visit> visits;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        if (phases[i] < 0) continue;
        if (!visits.empty() && visits.back().phase == phases[i] && visits.back().last + 1 == i) {
            visits.back().last = i;
        } else {
            visits.push_back({phases[i], i, i});
        }
    }
    return visits;
}

using Rises = std::vector<std::vector<std::vector<double>>>;  // per phase, per usage column

// Per sample, whether its execution had shown its working set by then (WorkingSetRule's
// defaults); all false where the usage columns lack CPU or memory.
std::vector<bool> settled_samples(const LabelledExecution& e,
                                  const std::vector<std::string>& usage_columns) {
    std::vector<bool> settled(e.phases.size(), false);
    const auto column = [&](const char* name) {
        return std::find(usage_columns.begin(), usage_columns.end(), name) - usage_columns.begin();
    };
    const Eigen::Index cpu = column(kCpuUsageColumn), memory = column(kMemoryUsageColumn);
    if (cpu == e.usage.cols() || memory == e.usage.cols()) return settled;
    const WorkingSetRule rule;
    const auto n = static_cast<Eigen::Index>(rule.samples);
    const std::vector<double>& t = *e.timestamps;
    bool shown = false;
    for (std::size_t i = 0; i < settled.size(); ++i) {
        const Eigen::Index first = static_cast<Eigen::Index>(i) + 1 - n;
        if (!shown && first >= 0) {
            const Eigen::VectorXd cpu_last = e.usage.col(cpu).segment(first, n);
            const Eigen::VectorXd memory_last = e.usage.col(memory).segment(first, n);
            shown = shows_working_set({cpu_last.begin(), cpu_last.end()},
                                      {memory_last.begin(), memory_last.end()}, t[i] - t[0], rule);
        }
        settled[i] = shown;
    }
    return settled;
}

// Per phase and usage column, each sample's rise: the most usage reaches within the next
// kRiseSeconds over the sample's own usage; in `settled_rises` too where its execution had shown
// its working set.
void add_rises(const LabelledExecution& e, const std::vector<bool>& settled, Rises& rises,
               Rises& settled_rises) {
    const std::vector<double>& t = *e.timestamps;
    for (std::size_t i = 0; i < e.phases.size(); ++i) {
        if (e.phases[i] < 0) continue;
        const auto p = static_cast<std::size_t>(e.phases[i]);
        for (Eigen::Index c = 0; c < e.usage.cols(); ++c) {
            const double now = e.usage(static_cast<Eigen::Index>(i), c);
            if (!(now > 0)) continue;
            double most = -1;
            for (std::size_t j = i + 1; j < t.size() && t[j] - t[i] <= kRiseSeconds; ++j)
                most = std::max(most, e.usage(static_cast<Eigen::Index>(j), c));
            if (most < 0) continue;
            rises[p][static_cast<std::size_t>(c)].push_back(most / now);
            if (settled[i]) settled_rises[p][static_cast<std::size_t>(c)].push_back(most / now);
        }
    }
}

}  // namespace

PhaseStatistics compute_statistics(const std::vector<LabelledExecution>& executions, int phases,
                                   const std::vector<std::string>& usage_columns) {
    const std::size_t k = static_cast<std::size_t>(phases);
    const std::size_t columns = usage_columns.size();
    std::vector<std::vector<std::vector<double>>> usage(k,
                                                        std::vector<std::vector<double>>(columns));
    std::vector<std::vector<double>> visit_samples(k), visit_seconds(k), distances(k);
    Rises rises(k, std::vector<std::vector<double>>(columns)), settled_rises = rises;
    std::map<std::vector<int>, std::size_t> sequence_counts;

    PhaseStatistics stats;
    stats.usage_columns = usage_columns;
    stats.transitions = Matrix::Zero(phases, phases);
    stats.executions = executions.size();
    for (const LabelledExecution& e : executions) {
        if (e.timestamps == nullptr || e.timestamps->size() != e.phases.size() ||
            static_cast<std::size_t>(e.usage.rows()) != e.phases.size() ||
            static_cast<std::size_t>(e.usage.cols()) != columns ||
            e.distances.size() != e.phases.size()) {
            throw InputError(
                "phase statistics: an execution's timestamps, usage, phases and distances differ "
                "in length");
        }
        for (std::size_t i = 0; i < e.phases.size(); ++i) {
            const int p = e.phases[i];
            if (p < 0) continue;
            if (static_cast<std::size_t>(p) >= k)
                throw InputError("phase statistics: phase out of range");
            for (std::size_t c = 0; c < columns; ++c) usage[p][c].push_back(e.usage(i, c));
            distances[p].push_back(e.distances[i]);
        }
        add_rises(e, settled_samples(e, usage_columns), rises, settled_rises);
        const std::vector<Visit> visits = visits_of(e.phases);
        std::vector<int> sequence;
        for (std::size_t v = 0; v < visits.size(); ++v) {
            const Visit& visit = visits[v];
            const std::size_t end = v + 1 < visits.size() ? visits[v + 1].first : visit.last;
            visit_samples[visit.phase].push_back(static_cast<double>(visit.last - visit.first + 1));
            visit_seconds[visit.phase].push_back((*e.timestamps)[end] -
                                                 (*e.timestamps)[visit.first]);
            if (v > 0) stats.transitions(visits[v - 1].phase, visit.phase) += 1;
            sequence.push_back(visit.phase);
        }
        if (!sequence.empty()) ++sequence_counts[sequence];
    }

    stats.phases.resize(k);
    for (std::size_t p = 0; p < k; ++p) {
        PhaseStats& s = stats.phases[p];
        s.samples = distances[p].size();
        for (std::size_t c = 0; c < columns; ++c) s.usage.push_back(Summary::of(usage[p][c]));
        s.visit_samples = Summary::of(visit_samples[p]);
        s.visit_seconds = Summary::of(visit_seconds[p]);
        s.distance = Summary::of(distances[p]);
        for (std::size_t c = 0; c < columns; ++c) {
            s.rise.push_back(Summary::of(rises[p][c]));
            s.settled_rise.push_back(Summary::of(settled_rises[p][c]));
        }
    }
    for (const auto& [phases_seen, count] : sequence_counts)
        stats.sequences.push_back({phases_seen, count});
    keep_most_common(stats.sequences);
    return stats;
}

}  // namespace phasescale::model
