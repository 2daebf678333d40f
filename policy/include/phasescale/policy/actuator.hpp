#pragma once
// When a recommendation takes effect: after an actuation delay, and only when it changes the
// allocation in force by more than a minimum fraction. Counts the resizes.

#include <phasescale/policy/recommender.hpp>

#include <deque>
#include <optional>

namespace phasescale::policy {

struct ActuationOptions {
  // The allocation in force at sample t is the one decided after sample t - delay (delay >= 1
  // for causal policies; 0 only for the bounds that see the future).
  int delay = 1;
  // Smaller relative changes of both requests are not worth a resize.
  double min_change = 0.05;
};

class Actuator {
 public:
  Actuator(Allocation initial, ActuationOptions options);
  // The allocation in force at the next sample. Call once per sample, before decide().
  const Allocation& advance();
  // A decision made now (after the current sample); nothing keeps the allocation in force.
  void decide(const std::optional<Allocation>& wanted);
  const Allocation& in_force() const { return in_force_; }
  std::size_t resizes() const { return resizes_; }

 private:
  void apply(const Allocation& wanted);

  ActuationOptions options_;
  Allocation in_force_;
  std::deque<std::optional<Allocation>> pending_;
  std::size_t resizes_ = 0;
};

// True when `wanted` differs from `current` by more than `min_change` in either request.
bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change);

}  // namespace phasescale::policy
