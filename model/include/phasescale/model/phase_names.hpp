#pragma once
// Names of a model's phases. A name is short, lowercase and DNS-label-safe (at most 63 letters,
// digits and '-', a letter or digit at each end), so that it can be a Kubernetes label value,
// and unique within its model. A model names its phases from their statistics when it is
// trained (`cpu-high-mem-low`: each phase's median CPU and memory against the model's other
// phases); the names are kept in the model file, where a user may edit them
// (docs/model.md, "Phase names").

#include <string>
#include <vector>

namespace phasescale::model {

struct PhaseModel;

inline constexpr std::size_t kMaxPhaseNameLength = 63;
// What the operator shows for a container without a phase: never the name of a phase.
inline constexpr const char* kNoPhaseName = "unknown";

// "" when `name` can name a phase; else what is wrong with it.
std::string phase_name_problem(const std::string& name);

// Names for the model's phases from its statistics, one per centroid, unique:
//   cpu-LEVEL-mem-LEVEL   LEVEL low, mid or high: where the phase's median usage (p50) lies
//                         between the phases' lowest and highest median, in thirds on a log
//                         scale (all mid when the highest is less than 1.5 times the lowest)
//   idle-mem-LEVEL        a median CPU below kIdleCores (idle phases stay out of the CPU range)
//   phase-N               no statistics, no samples in the phase, or neither usage column
// A name that comes twice gets -2 on its second phase, -3 on its third, and so on.
std::vector<std::string> derive_phase_names(const PhaseModel& model);

// A median CPU below this is idle, whatever the other phases use.
inline constexpr double kIdleCores = 0.05;

// Appends -2, -3, ... to a name already taken by an earlier entry (or by `taken`), in order.
void make_names_unique(std::vector<std::string>& names, const std::vector<std::string>& taken = {});

}  // namespace phasescale::model
