#pragma once
// What the phases of a trained model look like, in original units, computed at training time.

#include <phasescale/model/types.hpp>

#include <string>
#include <vector>

namespace phasescale::model {

// Quantiles use linear interpolation between order statistics (numpy's default).
double quantile(std::vector<double> values, double q);

struct Summary {
    std::size_t count = 0;
    double mean = 0, std = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
    static Summary of(const std::vector<double>& values);  // all zero when empty
};

struct PhaseStats {
    std::size_t samples = 0;
    std::vector<Summary> usage;  // one per PhaseStatistics::usage_columns
    Summary visit_samples;       // length of each visit in samples
    Summary visit_seconds;       // from a visit's first sample to the next visit's (or the end)
    Summary distance;            // Euclidean distance of its samples' activations to its centroid
    // One per usage column: the most usage reaches within the next kRiseSeconds, as a ratio to
    // the sample's own (samples with a later sample within that time and usage above 0).
    std::vector<Summary> rise;
    // The same, of the samples whose execution had shown its working set by then
    // (WorkingSetRule's defaults, over kCpuUsageColumn and kMemoryUsageColumn; none without
    // them): a start-up's climb (an idle wait before the data loads, 2-24x) is not how a settled
    // job's memory rises.
    std::vector<Summary> settled_rise;
};

inline constexpr double kRiseSeconds = 60;
// The usage columns of a container's CPU (cores) and memory (working set bytes).
inline constexpr const char* kCpuUsageColumn = "cpu.usage.cores";
inline constexpr const char* kMemoryUsageColumn = "mem.working.set";

// A phase sequence (visits, consecutive repeats collapsed) shared by several executions.
struct PhaseSequence {
    std::vector<int> phases;
    std::size_t executions = 0;
};

struct PhaseStatistics {
    std::vector<std::string> usage_columns;
    std::vector<PhaseStats> phases;        // one per centroid
    Matrix transitions;                    // k x k: counts of visit i followed by visit j
    std::vector<PhaseSequence> sequences;  // most common first
    std::size_t executions = 0;

    // Row-normalised transitions (a row without visits stays zero).
    Matrix transition_probabilities() const;
    // A sample assigned to `phase` at `distance` from its centroid is in no known phase when it
    // lies farther than `factor` times the p99 distance of that phase's training samples (or the
    // phase had no training samples at all).
    bool unknown(int phase, double distance, double factor = 1.0) const;
};

// One execution's samples with their phases (-1: no phase, e.g. history not yet full).
struct LabelledExecution {
    const std::vector<double>* timestamps = nullptr;
    Matrix usage;                   // samples x usage columns, original units
    std::vector<int> phases;        // per sample
    std::vector<double> distances;  // per sample, to the assigned centroid
};

inline constexpr std::size_t kMaxSequences = 10;
// Sorts sequences most common first and keeps the first kMaxSequences.
void keep_most_common(std::vector<PhaseSequence>& sequences);

PhaseStatistics compute_statistics(const std::vector<LabelledExecution>& executions, int phases,
                                   const std::vector<std::string>& usage_columns);

}  // namespace phasescale::model
