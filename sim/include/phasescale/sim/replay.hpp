#pragma once
// Replaying one container's trace through one recommender, causally, and scoring what it
// allocated against what the container used.

#include <phasescale/model/types.hpp>
#include <phasescale/policy/actuator.hpp>
#include <phasescale/policy/recommender.hpp>

#include <string>
#include <vector>

namespace phasescale::sim {

// One execution, ready for replay.
struct Container {
  std::string id;
  std::string source;
  std::vector<double> timestamps;
  std::vector<policy::Amount> usage;
  policy::Amount original;        // the allocation it ran with (the `static` policy)
  model::Matrix features;         // the phase model's features, raw, one row per sample
  std::vector<int> known_phases;  // phases with the whole trace known, for `oracle`
};

struct ResourceScore {
  double allocated = 0;    // request integrated over time (core-seconds, byte-seconds)
  double used = 0;         // usage integrated over time
  double shortfall = 0;    // integral of max(0, usage - request)
  std::size_t samples = 0;
  std::size_t fulfilled = 0;  // samples whose usage is at most the request
  double fulfilment() const { return samples ? static_cast<double>(fulfilled) / samples : 1.0; }
  void add(const ResourceScore& other);
};

struct Score {
  ResourceScore cpu, memory;
  std::size_t oom_events = 0;  // samples whose memory usage exceeds the memory limit
  std::size_t resizes = 0;
  std::size_t unknown_phase_samples = 0;
  void add(const Score& other);
};

struct Replay {
  Score score;
  std::vector<policy::Allocation> allocations;  // in force at each sample
};

// Each sample stands for the time until the next one; the last for the interval before it.
std::vector<double> sample_durations(const std::vector<double>& timestamps);

// Replays `container` through `recommender`. Causal recommenders decide after each sample and
// their decision takes effect `actuation.delay` samples later; the others (`oracle`, `perfect`)
// decide for each sample just before it, seeing it.
Replay replay(const Container& container, policy::Recommender& recommender, bool causal,
              const policy::ActuationOptions& actuation);

}  // namespace phasescale::sim
