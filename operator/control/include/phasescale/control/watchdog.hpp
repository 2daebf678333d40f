// Whether the control loop still goes round, for /healthz: the loop beats once per pass; the
// loop is stuck once no beat came for `stuck_after`. Thread-safe (the HTTP thread asks).
#pragma once

#include <atomic>
#include <chrono>

namespace phasescale::control {

class LoopWatchdog {
public:
    using Clock = std::chrono::steady_clock;

    explicit LoopWatchdog(std::chrono::milliseconds stuck_after,
                          Clock::time_point now = Clock::now())
        : stuck_after_(stuck_after), beat_(now.time_since_epoch().count()) {}

    void beat(Clock::time_point now = Clock::now()) { beat_ = now.time_since_epoch().count(); }

    bool stuck(Clock::time_point now = Clock::now()) const {
        return now - Clock::time_point(Clock::duration(beat_.load())) > stuck_after_;
    }

private:
    std::chrono::milliseconds stuck_after_;
    std::atomic<Clock::rep> beat_;
};

}  // namespace phasescale::control
