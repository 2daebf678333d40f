#pragma once
// A recommender turns one container's usage, sample by sample, into the allocation (requests
// and limits of CPU and memory) it wants for what comes next. The simulator and the operator
// drive the same recommenders.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace phasescale::policy {

// CPU in cores, memory in bytes.
struct Amount {
    double cpu = 0;
    double memory = 0;
};

struct Allocation {
    Amount request;
    Amount limit;
};

struct Sample {
    double timestamp = 0;  // unix seconds
    Amount usage;          // CPU cores in use, memory working set
    Amount allocated;      // the request in force while this sample was taken
    Amount limit;          // the limit in force (0: none)
    // The share of the sample's CPU periods throttled at the CPU limit (0 to 1). Usage cannot go
    // above the limit, so a throttled sample's CPU usage is a lower bound of its demand.
    double cpu_throttled = 0;
    // The CPU-seconds per second the container was throttled for (NaN: not measured). CFS sums
    // the throttled time of each CPU whose run queue it throttled, so a container wanting D
    // cores under a limit of L is throttled for about D - L of them: usage plus this is its
    // demand (PhaseRecommender::throttled_floor).
    double cpu_throttled_cores = std::numeric_limits<double>::quiet_NaN();
    bool oom_killed =
        false;  // the container was OOM-killed during this sample (usage crossed the limit)
    // The phase model's features of this sample (raw, model order), for `phase`; may be null.
    const double* features = nullptr;
    // For `oracle` only: this sample's phase, known in advance (-1: none).
    int known_phase = -1;
};

// Memory usage above this kills the container: its limit, or its request where none is set (a
// limit of 0).
inline double oom_line(const Amount& request, const Amount& limit) {
    return std::max(request.memory, limit.memory);
}
inline double oom_line(const Allocation& a) {
    return oom_line(a.request, a.limit);
}
inline double oom_line(const Sample& s) {
    return oom_line(s.allocated, s.limit);
}

// The memory an OOM-killed container gets at least: what it was given plus min_bytes, or times
// ratio, whichever is more (the VPA's ContainerState.RecordOOM with DefaultOOMMinBumpUp and
// DefaultOOMBumpUpRatio). The vpa and phase recommenders both bump this way.
struct OomBump {
    double ratio = 1.2;
    double min_bytes = 100.0 * 1024 * 1024;
    double after(double given) const { return std::max(given + min_bytes, given * ratio); }
};

// Safety margins: the recommended request is the policy's estimate times (1 + margin).
struct Margins {
    double cpu = 0;
    double memory = 0;
};

// Per resource of a container: whether it is at risk, or whether a resize gives it more.
struct PerResource {
    bool cpu = false;
    bool memory = false;
    PerResource& operator|=(PerResource o) {
        cpu = cpu || o.cpu;
        memory = memory || o.memory;
        return *this;
    }
};

class Recommender {
public:
    virtual ~Recommender() = default;
    // Learns from a sample that has happened.
    virtual void observe(const Sample& sample) = 0;
    // The allocation wanted from now on, given every sample observed so far; nothing while the
    // recommender does not know enough yet (the allocation in force stays). `next` is the sample
    // to come: only the non-causal bounds (`oracle`, `perfect`) may read it, and it is null when
    // unknown (as in the operator).
    virtual std::optional<Allocation> recommend(const Sample* next) = 0;
    // Samples whose phase was unknown (the `phase` policy's fallback count).
    virtual std::size_t unknown_phase_samples() const { return 0; }
};

}  // namespace phasescale::policy
