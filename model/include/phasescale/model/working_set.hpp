#pragma once
// When a container has shown its working set: its latest samples were all at work and its memory
// did not grow at every one of them, after it had run for a while. The phase policy holds memory
// until then (start-up ramps grow it many times over); the model's statistics keep the rises of
// the samples after it apart from those before (a start-up's climb is no rise of a settled job).

#include <cstddef>
#include <vector>

namespace phasescale::model {

struct WorkingSetRule {
    // At work: at least this many cores at each sample (AI4DL's executions idle at 0.01-0.06
    // cores and a few MiB for minutes before climbing to 800 MiB).
    double busy_cpu = 0.1;
    std::size_t samples = 4;     // judged over the latest this many samples
    double memory_noise = 0.01;  // memory grew at a sample only by more than this share
    double horizon_s = 60;       // and run for this long at least (the CRD's default cooldown)
};

// Over a container's latest samples (oldest first; the last rule.samples count, and fewer say
// nothing): whether it was at work at every one (false where busy_cpu or samples turn the rule
// off: busy_cpu <= 0, samples < 2), and whether its memory grew at every one.
bool at_work(const std::vector<double>& cpu, const WorkingSetRule& rule);
bool growing(const std::vector<double>& memory, const WorkingSetRule& rule);
// At work, its memory not growing, and run for rule.horizon_s (`run_s`): it shows its working set.
bool shows_working_set(const std::vector<double>& cpu, const std::vector<double>& memory,
                       double run_s, const WorkingSetRule& rule);

}  // namespace phasescale::model
