#pragma once
// How well inferred phases agree with the true ones: reading the phases a training program
// logged, labelling samples with them, and comparing two labelings (adjusted mutual information,
// label changes).

#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace phasescale::sim {

// The phases a program logged: rows `unix_time,phase,epoch`, times non-decreasing, each row the
// moment the program entered that phase. The header row `unix_time,phase,epoch` is optional (the
// torch runs' files have none); epoch may be empty.
struct PhaseLog {
    std::string source;               // file it was read from
    std::vector<double> times;        // unix seconds
    std::vector<std::string> phases;  // label entered at each time
    std::vector<int> epochs;          // -1 where empty
};

// Throws model::InputError "FILE:LINE: message" for a missing or empty file, a bad header, a row
// without three fields, a bad time or epoch, an empty phase, or time going backwards.
PhaseLog read_phase_log(const std::string& path);

// Small integers for phase labels, shared across executions so that pooled labelings agree.
class PhaseIds {
public:
    int id(const std::string& label);
    const std::vector<std::string>& labels() const { return labels_; }

private:
    std::unordered_map<std::string, int> ids_;
    std::vector<std::string> labels_;
};

// The true phase of each sample: a sample at t whose interval from the previous sample is d
// covers (t - d, t] and gets the phase active at t - d/2 (the first sample uses the next
// interval; a lone sample, d = 0). -1 before the first logged phase. Timestamps must increase
// (std::invalid_argument if not).
std::vector<int> label_samples(const PhaseLog& log, std::span<const double> timestamps,
                               PhaseIds& ids);

// Adjusted mutual information of two labelings of the same samples, as scikit-learn's
// adjusted_mutual_info_score with its default arithmetic-mean normalisation: the expected mutual
// information under the hypergeometric (permutation) model subtracted. 1 for the same partition
// under any relabelling, about 0 for independent labelings, negative below chance. Positions
// where either label is negative are ignored; NaN when none is left. Both labelings a single
// cluster: 1. std::invalid_argument when the sizes differ.
double adjusted_mutual_information(std::span<const int> a, std::span<const int> b);

// Changes of label between consecutive labelled samples (negative labels skipped).
std::size_t label_changes(std::span<const int> labels);

// Seconds the samples cover: last - first plus the first sample's interval (as label_samples
// takes it); 0 for fewer than two samples.
double covered_seconds(std::span<const double> timestamps);

// label_changes per hour of covered_seconds; NaN when the samples cover no time. The sizes must
// match (std::invalid_argument).
double changes_per_hour(std::span<const int> labels, std::span<const double> timestamps);

}  // namespace phasescale::sim
