#include <phasescale/policy/simple.hpp>
#include <phasescale/sim/replay.hpp>

namespace phasescale::sim {

void ResourceScore::add(const ResourceScore& o) {
  allocated += o.allocated;
  used += o.used;
  shortfall += o.shortfall;
  samples += o.samples;
  fulfilled += o.fulfilled;
}

void Score::add(const Score& o) {
  cpu.add(o.cpu);
  memory.add(o.memory);
  oom_events += o.oom_events;
  resizes += o.resizes;
  unknown_phase_samples += o.unknown_phase_samples;
}

std::vector<double> sample_durations(const std::vector<double>& timestamps) {
  std::vector<double> d(timestamps.size(), 0.0);
  for (std::size_t i = 0; i + 1 < timestamps.size(); ++i) d[i] = timestamps[i + 1] - timestamps[i];
  if (d.size() >= 2) d.back() = d[d.size() - 2];
  return d;
}

namespace {

void score_sample(ResourceScore& s, double usage, double request, double duration) {
  s.allocated += request * duration;
  s.used += usage * duration;
  if (usage > request) s.shortfall += (usage - request) * duration;
  ++s.samples;
  s.fulfilled += usage <= request;
}

}  // namespace

Replay replay(const Container& c, policy::Recommender& recommender, bool causal,
              const policy::ActuationOptions& actuation) {
  policy::ActuationOptions options = actuation;
  // The bounds see the sample they allocate for, and resize for any change.
  if (!causal) options = {0, 0.0};
  policy::Actuator actuator(policy::guaranteed(c.original), options);
  const std::vector<double> durations = sample_durations(c.timestamps);
  const bool has_features = c.features.rows() == static_cast<Eigen::Index>(c.usage.size());

  Replay r;
  r.allocations.reserve(c.usage.size());
  for (std::size_t t = 0; t < c.usage.size(); ++t) {
    policy::Sample s;
    s.timestamp = c.timestamps[t];
    s.usage = c.usage[t];
    s.features = has_features ? c.features.row(static_cast<Eigen::Index>(t)).data() : nullptr;
    s.known_phase = t < c.known_phases.size() ? c.known_phases[t] : -1;

    if (!causal) actuator.decide(recommender.recommend(&s));
    const policy::Allocation& in_force = actuator.advance();
    r.allocations.push_back(in_force);
    score_sample(r.score.cpu, s.usage.cpu, in_force.request.cpu, durations[t]);
    score_sample(r.score.memory, s.usage.memory, in_force.request.memory, durations[t]);
    s.allocated = in_force.request;
    s.oom_killed = s.usage.memory > in_force.limit.memory;
    r.score.oom_events += s.oom_killed;

    recommender.observe(s);
    if (causal) actuator.decide(recommender.recommend(nullptr));
  }
  r.score.resizes = actuator.resizes();
  r.score.unknown_phase_samples = recommender.unknown_phase_samples();
  return r;
}

}  // namespace phasescale::sim
