#pragma once
// The Kubernetes VPA recommender (vertical-pod-autoscaler/pkg/recommender), reimplemented for one
// container: decaying exponential histograms of CPU usage (weighted by the CPU request) and of
// per-interval memory peaks, their percentiles, a safety margin, minimum resources and the OOM
// bump. Each constant names its upstream default.

#include <phasescale/policy/recommender.hpp>

#include <vector>

namespace phasescale::policy {

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
  // Upstream: epsilon 0.0001 (HistogramEpsilon): lighter buckets count as empty.
  static constexpr double kEpsilon = 1e-4;
  // Upstream: maxDecayExponent 100: renormalise before 2^exponent overflows.
  static constexpr int kMaxDecayExponent = 100;

  DecayingHistogram(const ExponentialBuckets* buckets, double half_life_s);
  void add(double value, double weight, double time_s);
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

struct VpaOptions {
  double cpu_half_life_s = 24 * 3600;     // DefaultCPUHistogramDecayHalfLife: 24h
  double memory_half_life_s = 24 * 3600;  // DefaultMemoryHistogramDecayHalfLife: 24h
  double memory_interval_s = 24 * 3600;   // DefaultMemoryAggregationInterval: 24h
  double cpu_percentile = 0.9;            // targetCPUPercentile: 0.9
  double memory_percentile = 0.9;         // targetMemoryPeaksPercentile: 0.9
  Margins margins{0.15, 0.15};            // safetyMarginFraction: 0.15
  double min_cpu = 0.025;                 // podMinCPUMillicores: 25
  double min_memory = 250.0 * 1024 * 1024;  // podMinMemoryMb: 250 (MiB)
  double oom_bump_ratio = 1.2;            // DefaultOOMBumpUpRatio: 1.2
  double oom_min_bump = 100.0 * 1024 * 1024;  // DefaultOOMMinBumpUp: 100 MiB
  double min_sample_weight = 0.1;         // minSampleWeight: 0.1 (CPU weight floor, cores)
};

// Histogram shapes of model/aggregations_config.go: CPU from 0.01 cores up to 1000 cores,
// memory from 10 MB (1e7 bytes) up to 1 TB (1e12), each bucket 5% wider than the last.
const ExponentialBuckets& vpa_cpu_buckets();
const ExponentialBuckets& vpa_memory_buckets();

class VpaRecommender : public Recommender {
 public:
  explicit VpaRecommender(VpaOptions options = {});
  void observe(const Sample& sample) override;
  std::optional<Allocation> recommend(const Sample* next) override;
  // Begins a new container of the same workload: its own memory-peak intervals and CPU sample
  // order, the same histograms (as the VPA's aggregate state is shared by a workload's pods).
  void start_container();

 private:
  void add_memory_peak(double usage, double time_s, bool oom);

  VpaOptions options_;
  DecayingHistogram cpu_, memory_;
  double last_cpu_time_ = -1e300;
  double window_end_ = 0;  // end of the current memory aggregation interval
  bool have_window_ = false;
  double memory_peak_ = 0, oom_peak_ = 0;
};

}  // namespace phasescale::policy
