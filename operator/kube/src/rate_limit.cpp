#include "phasescale/kube/rate_limit.hpp"

#include <algorithm>
#include <condition_variable>
#include <thread>

namespace phasescale::kube {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps), burst_(std::max(burst, 1)), tokens_(std::max(burst, 1)), last_(Clock::now()) {}

TokenBucket::Clock::duration TokenBucket::reserve(Clock::time_point now) {
    if (qps_ <= 0) return Clock::duration::zero();
    std::lock_guard lock(mutex_);
    if (now > last_) {
        double elapsed = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
        last_ = now;
    }
    tokens_ -= 1.0;
    if (tokens_ >= 0) return Clock::duration::zero();
    // A debt: the token exists once -tokens_ / qps seconds have passed.
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::try_acquire() {
    if (qps_ <= 0) return true;
    std::lock_guard lock(mutex_);
    auto now = Clock::now();
    if (now > last_) {
        double elapsed = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
        last_ = now;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
}

bool TokenBucket::acquire(std::stop_token stop) {
    auto wait = reserve();
    if (wait <= Clock::duration::zero()) return true;
    if (sleep_for(wait, stop)) return true;
    // Give the token back: nobody used it.
    std::lock_guard lock(mutex_);
    tokens_ += 1.0;
    return false;
}

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double factor,
                 double jitter, std::uint64_t seed)
    : initial_(initial),
      max_(max),
      factor_(factor),
      jitter_(jitter),
      current_(initial),
      rng_(seed) {}

std::chrono::milliseconds Backoff::next() {
    auto base = current_;
    current_ = std::min(
        max_, std::chrono::milliseconds(static_cast<long long>(current_.count() * factor_)));
    if (jitter_ <= 0) return base;
    std::uniform_real_distribution<double> dist(1.0 - jitter_, 1.0 + jitter_);
    return std::chrono::milliseconds(static_cast<long long>(base.count() * dist(rng_)));
}

bool sleep_for(std::chrono::nanoseconds d, std::stop_token stop) {
    if (!stop.stop_possible()) {
        std::this_thread::sleep_for(d);
        return true;
    }
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

}  // namespace phasescale::kube
