// Pacing of requests: a token bucket (client-side QPS and burst) and exponential backoff.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <stop_token>

namespace phasescale::kube {

// Allows `burst` requests at once and `qps` per second on average. Thread-safe. qps <= 0 means
// no limit.
class TokenBucket {
public:
    using Clock = std::chrono::steady_clock;

    TokenBucket(double qps, int burst);

    // Takes one token, first waiting until there is one. Returns false (without a token) if
    // `stop` is requested meanwhile.
    bool acquire(std::stop_token stop = {});
    // Takes one token if there is one now.
    bool try_acquire();
    // Takes one token that may not exist yet, and returns how long the caller must wait before
    // using it (zero if it was there). acquire() is reserve() plus the wait.
    Clock::duration reserve(Clock::time_point now = Clock::now());

    double qps() const { return qps_; }
    int burst() const { return burst_; }

private:
    double qps_;
    int burst_;
    std::mutex mutex_;
    double tokens_;
    Clock::time_point last_;
};

// Exponential backoff with jitter: initial, initial*factor, ... capped at max, each multiplied by a
// random factor in [1 - jitter, 1 + jitter] drawn from a seeded generator (deterministic).
class Backoff {
public:
    Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double factor = 2.0,
            double jitter = 0.2, std::uint64_t seed = 1);

    std::chrono::milliseconds next();
    void reset() { current_ = initial_; }

private:
    std::chrono::milliseconds initial_;
    std::chrono::milliseconds max_;
    double factor_;
    double jitter_;
    std::chrono::milliseconds current_;
    std::mt19937_64 rng_;
};

// Sleeps for `d` unless `stop` is requested first; returns false if it was.
bool sleep_for(std::chrono::nanoseconds d, std::stop_token stop = {});

}  // namespace phasescale::kube
