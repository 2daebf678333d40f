#pragma once
// The simple recommenders: `static` (a fixed allocation), `window` (reactive, AI4DL's
// statistics-based baseline), `krr` (Robusta KRR's simple strategy) and `perfect` (the next
// sample's usage: the physical lower bound).

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

// Robusta KRR's `simple` strategy (github.com/robusta-dev/krr, README "How KRR works" and
// robusta_krr/strategies/simple.py): CPU request the 95th percentile of the history, memory the
// history's maximum plus a 15% buffer; its history is 14 days (336 h).
struct KrrOptions {
    double cpu_percentile = 0.95;  // cpu_percentile: 95
    double memory_buffer = 0.15;   // memory_buffer_percentage: 15
    std::size_t history = 80640;   // history_duration 336 h, in 15 s samples
    Margins margins;               // on top, for calibration (0 by default)
};

class KrrRecommender : public Recommender {
public:
    explicit KrrRecommender(KrrOptions options);
    void observe(const Sample& sample) override;
    std::optional<Allocation> recommend(const Sample* next) override;

private:
    KrrOptions options_;
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
