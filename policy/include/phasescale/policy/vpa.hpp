#pragma once
// The Kubernetes VPA recommender (k8s.io/autoscaler/vertical-pod-autoscaler, pkg/recommender),
// reimplemented for one container and pinned to v1.8.1: decaying exponential histograms of CPU
// usage (every sample the same weight) and of per-interval memory peaks, their percentiles, a
// safety margin, minimum resources and the OOM bump: the target of the default recommender.
// Each constant names its upstream identifier. tests/vpa-reference/ replays traces through the
// real v1.8.1 code and this one and compares them sample by sample.
//
// The lower and upper bounds (other percentiles, with confidence multipliers that widen them
// while the history is short) are modelled too: the updater (VpaUpdater, below) acts on them.
// Usage samples and every step of the estimator chain are whole millicores and bytes, truncated,
// as upstream's model.ResourceAmount is.
//
// Not modelled: the expiry of aggregate states (MemoryAggregationIntervalCount), checkpoints,
// post-processors (capping, integer CPU).

#include <phasescale/policy/recommender.hpp>

#include <cstddef>
#include <vector>

namespace phasescale::policy {

// The histogram shapes of model.AggregationsConfig (cpuHistogramOptions, memoryHistogramOptions,
// v1.8.1): CPU from 0.01 cores up to 1000 cores, memory from 10 MB (1e7 bytes) up to 1 TB (1e12),
// each bucket model.DefaultHistogramBucketSizeGrowth (0.05) wider than the last.
inline constexpr double kVpaBucketGrowth = 0.05;
inline constexpr double kVpaCpuFirstBucket = 0.01, kVpaCpuMaxValue = 1000.0;
inline constexpr double kVpaMemoryFirstBucket = 1e7, kVpaMemoryMaxValue = 1e12;

// util.HistogramOptions of the exponential kind: bucket n >= 1 starts at
// first_bucket * (ratio^n - 1) / (ratio - 1); the last bucket start is >= max_value.
class ExponentialBuckets {
public:
    ExponentialBuckets(double max_value, double first_bucket, double ratio);
    int count() const { return count_; }
    int find(double value) const;  // the bucket holding value (clamped to the first/last)
    double start(int bucket) const;

private:
    double first_bucket_, ratio_;
    int count_;
};

// util.decayingHistogram: a sample's weight is multiplied by 2^((t - reference) / half_life).
class DecayingHistogram {
public:
    // model.epsilon = 0.001 * minSampleWeight (v1.8.1): lighter buckets count as empty.
    static constexpr double kEpsilon = 1e-4;
    // util.maxDecayExponent 100 (v1.8.1): renormalise before 2^exponent overflows.
    static constexpr int kMaxDecayExponent = 100;

    DecayingHistogram(const ExponentialBuckets* buckets, double half_life_s);
    void add(double value, double weight, double time_s);
    // Both the bucket and the total drop to 0 when less than kEpsilon is left (util.safeSubtract).
    void subtract(double value, double weight, double time_s);
    // The end of the bucket where the cumulative weight reaches p of the total (the start of the
    // last bucket if it is that one); 0 when empty. Upstream's histogram.Percentile.
    double percentile(double p) const;
    bool empty() const;
    double total_weight() const { return total_; }

private:
    double decay_factor(double time_s);
    void shift_reference(double time_s);
    void update_min_max();

    const ExponentialBuckets* buckets_;
    double half_life_;
    double reference_ = 0;
    std::vector<double> weights_;
    double total_ = 0;
    int min_bucket_, max_bucket_;
};

// The defaults of v1.8.1: the model package's constants and config.DefaultRecommenderConfig
// (the recommender's flags), as routines.NewRecommenderController passes them on.
struct VpaOptions {
    double cpu_half_life_s = 24 * 3600;     // model.DefaultCPUHistogramDecayHalfLife: 24h
    double memory_half_life_s = 24 * 3600;  // model.DefaultMemoryHistogramDecayHalfLife: 24h
    double memory_interval_s = 24 * 3600;   // model.DefaultMemoryAggregationInterval: 24h
    double cpu_percentile = 0.9;            // TargetCPUPercentile: 0.9 (--target-cpu-percentile)
    double memory_percentile = 0.9;  // TargetMemoryPercentile: 0.9 (--target-memory-percentile)
    // Lower/UpperBoundCPUPercentile and Lower/UpperBoundMemoryPercentile: 0.5 and 0.95.
    double lower_bound_percentile = 0.5, upper_bound_percentile = 0.95;
    // ConfidenceIntervalCPU and ConfidenceIntervalMemory: 24h, the unit of the history length
    // in the bounds' confidence multipliers.
    double confidence_interval_s = 24 * 3600;
    // SafetyMarginFraction: 0.15 (--recommendation-margin-fraction). Upstream turns a negative
    // margin into 0; here it shrinks the target, for the simulator's calibration.
    Margins margins{0.15, 0.15};
    double min_cpu = 0.025;  // PodMinCPUMillicores: 25
    double min_memory =
        250.0 * 1024 * 1024;  // PodMinMemoryMb: 250 (MiB: logic multiplies by 1024 * 1024)
    OomBump oom_bump;         // model.DefaultOOMBumpUpRatio 1.2, model.DefaultOOMMinBumpUp 100 MiB
    // model.minSampleWeight: 0.1, the weight of every CPU sample. The request in force plays no
    // part: a sample carries none (v1.7.0 to v1.8.1 alike).
    double cpu_sample_weight = 0.1;
};

// The histogram buckets of model.AggregationsConfig (above).
const ExponentialBuckets& vpa_cpu_buckets();
const ExponentialBuckets& vpa_memory_buckets();

// What the recommender writes to a VerticalPodAutoscaler's status for one container.
struct VpaRecommendation {
    Amount target, lower_bound, upper_bound;
};

class VpaRecommender : public Recommender {
public:
    explicit VpaRecommender(VpaOptions options = {});
    void observe(const Sample& sample) override;
    // The target, as request and limit (what `simulate --policy vpa` applies at every sample).
    std::optional<Allocation> recommend(const Sample* next) override;
    // The target and its bounds; nothing before the first sample.
    std::optional<VpaRecommendation> recommendation() const;
    // Begins a new container of the same workload: its own memory-peak intervals and CPU sample
    // order, the same histograms (as the VPA's aggregate state is shared by a workload's pods).
    void start_container();
    // The next samples are those of container `index` (0 first) of the same workload, whose
    // pods run side by side: each container keeps its own ContainerState, as upstream's do.
    void select_container(std::size_t index);

private:
    void add_memory_peak(double usage, double time_s, bool oom);

    // Upstream's ContainerState: what one container contributed to the shared histograms.
    struct ContainerState {
        double last_cpu_time = -1e300;
        double last_memory_time = -1e300;
        double window_end = 0;  // end of the current memory aggregation interval
        bool have_window = false;
        double memory_peak = 0, oom_peak = 0;
    };
    ContainerState& container() { return containers_[current_]; }

    VpaOptions options_;
    DecayingHistogram cpu_, memory_;
    std::vector<ContainerState> containers_ = std::vector<ContainerState>(1);
    std::size_t current_ = 0;
    // AggregateContainerState's FirstSampleStart, LastSampleStart and TotalSamplesCount (CPU
    // samples), shared by the workload's containers: the history length of the confidence.
    double first_sample_ = 0, last_sample_ = 0;
    std::size_t samples_ = 0;
};

// The updater's settings, v1.8.1 defaults (pkg/updater/config, the updater's flags).
struct VpaUpdaterOptions {
    double interval_s = 60;  // UpdaterInterval: 1m (--updater-interval)
    // PodLifetimeUpdateThreshold: 12h (--in-recommendation-bounds-eviction-lifetime-threshold).
    // A younger pod is updated only when a request is outside the recommended bounds.
    double pod_lifetime_threshold_s = 12 * 3600;
    double min_change_priority = 0.1;  // DefaultUpdateThreshold: 0.1 (--pod-update-threshold)
    double evict_after_oom_s = 600;    // EvictAfterOOMThreshold: 10m (--evict-after-oom-threshold)
};

// The VPA as it is deployed: the recommender above, and the updater
// (pkg/updater/priority.UpdatePriorityCalculator.AddPod, the same rule for in-place updates
// and evictions in InPlaceOrRecreate mode) that applies the target only on its own loop, and
// only when a request is outside [lowerBound, upperBound], or the pod has lived
// pod_lifetime_threshold_s and the requests differ from the target by min_change_priority
// (the sum of relative differences), or after a quick OOM (a container killed within
// evict_after_oom_s of its start, and that recently). `simulate --policy vpa-updater`.
// Not modelled: the recommender's own loop (its status is taken as fresh at each updater
// loop), the admission controller (a fresh workload has no recommendation at pod creation),
// disruption limits between the pods of a workload.
class VpaUpdater : public Recommender {
public:
    explicit VpaUpdater(VpaOptions recommender = {}, VpaUpdaterOptions updater = {});
    void observe(const Sample& sample) override;
    std::optional<Allocation> recommend(const Sample* next) override;
    VpaRecommender& recommender() { return recommender_; }

private:
    bool should_update(const VpaRecommendation& r) const;

    VpaRecommender recommender_;
    VpaUpdaterOptions options_;
    bool started_ = false;
    double pod_start_ = 0, container_start_ = 0, now_ = 0, next_loop_ = 0;
    Amount request_;
    std::optional<double> quick_oom_at_;  // when the last quick OOM happened
};

}  // namespace phasescale::policy
