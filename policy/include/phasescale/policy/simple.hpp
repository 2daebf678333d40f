#pragma once
// The simple recommenders: `static` (a fixed allocation), `window` (reactive, AI4DL's
// statistics-based baseline) and `perfect` (the next sample's usage: the physical lower bound).

#include <phasescale/policy/recommender.hpp>

#include <phasescale/policy/ring.hpp>

namespace phasescale::policy {

// Limits follow requests: training containers run with requests equal to limits (Guaranteed QoS),
// so a memory usage above the request is an OOM kill.
Allocation guaranteed(Amount request);

class StaticRecommender : public Recommender {
 public:
  StaticRecommender(Amount allocation, Margins margins);
  void observe(const Sample&) override {}
  std::optional<Allocation> recommend(const Sample* next) override;

 private:
  Allocation allocation_;
};

struct WindowOptions {
  std::size_t samples = 10;  // W: how many recent samples are looked at
  double quantile = 1.0;     // of those samples; 1 is their maximum (AI4DL's reactive policy)
  Margins margins;
};

class WindowRecommender : public Recommender {
 public:
  explicit WindowRecommender(WindowOptions options);
  void observe(const Sample& sample) override;
  std::optional<Allocation> recommend(const Sample* next) override;
  bool empty() const { return cpu_.empty(); }

 private:
  WindowOptions options_;
  Ring<double> cpu_, memory_;
};

class PerfectRecommender : public Recommender {
 public:
  explicit PerfectRecommender(Margins margins) : margins_(margins) {}
  void observe(const Sample&) override {}
  std::optional<Allocation> recommend(const Sample* next) override;  // needs `next`

 private:
  Margins margins_;
};

}  // namespace phasescale::policy
