#include <phasescale/model/error.hpp>
#include <phasescale/policy/actuator.hpp>

#include <algorithm>
#include <cmath>

namespace phasescale::policy {

Allocation no_cut(const Allocation& current, Allocation wanted) {
    auto keep = [](Amount& w, const Amount& c) {
        w.cpu = std::max(w.cpu, c.cpu);
        w.memory = std::max(w.memory, c.memory);
    };
    keep(wanted.request, current.request);
    keep(wanted.limit, current.limit);
    return wanted;
}

Allocation no_cpu_cut(const Allocation& current, Allocation wanted) {
    wanted.request.cpu = std::max(wanted.request.cpu, current.request.cpu);
    wanted.limit.cpu = std::max(wanted.limit.cpu, current.limit.cpu);
    return wanted;
}

bool only_raises_cpu(const Amount& current, const Amount& wanted) {
    return wanted.cpu > current.cpu && wanted.memory == current.memory;
}

bool changed(double from, double to, double min_change) {
    if (from <= 0) return to != from;
    return std::abs(to - from) > min_change * from;
}

bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change) {
    return changed(current.request.cpu, wanted.request.cpu, min_change) ||
           changed(current.request.memory, wanted.request.memory, min_change);
}

bool grows_memory(const Amount& current, const Amount& wanted, double min_change) {
    return wanted.memory > current.memory && changed(current.memory, wanted.memory, min_change);
}

PerResource at_risk(const Sample& sample, Margins safety_margins, double memory_before) {
    const auto within_margin = [](double usage, double margin, double line) {
        return line > 0 && usage * (1 + std::max(0.0, margin)) >= line;
    };
    const double cpu_line = std::max(sample.allocated.cpu, sample.limit.cpu);
    const double memory = sample.usage.memory;
    const double memory_line = oom_line(sample);
    const bool ramp = memory_before > 0 && memory > memory_before && memory_line > 0 &&
                      memory + (memory - memory_before) >= memory_line;
    return {
        sample.cpu_throttled > 0 || within_margin(sample.usage.cpu, safety_margins.cpu, cpu_line),
        sample.oom_killed || ramp || within_margin(memory, safety_margins.memory, memory_line)};
}

PerResource raises(const Amount& current, const Amount& wanted, Margins safety_margins) {
    return {wanted.cpu > current.cpu * (1 + std::max(0.0, safety_margins.cpu)),
            wanted.memory > current.memory};
}

void CpuLimitHistory::observe(double timestamp, double asked, double applied, double window) {
    if (limit_ && (asked > limit_->first || applied > limit_->second)) raise_seen_ = timestamp;
    limit_ = {asked, applied};
    now_ = timestamp;
    window_ = window;
}

void CpuLimitHistory::unknown_before(double timestamp) {
    raise_seen_ = timestamp;
}

double CpuLimitHistory::judge(double share, double usage) const {
    // Nearly all: CFS lets a throttled container use its quota in every period but a few.
    constexpr double kSaturated = 0.95;
    if (!limit_ || now_ - window_ >= raise_seen_) return share;
    const double limit = std::max(limit_->first, limit_->second);
    return usage >= kSaturated * limit ? share : 0;
}

bool in_cooldown(std::optional<double> cooldown_start, double now, double cooldown_s) {
    return cooldown_start && now < *cooldown_start + cooldown_s;
}

Restarts restarts(bool within_cooldown, bool only_cpu_raised) {
    if (within_cooldown) return Restarts::Nothing;
    return only_cpu_raised ? Restarts::CpuCuts : Restarts::Cooldown;
}

void Cooldowns::record(Restarts r, double now) {
    if (r == Restarts::Cooldown) start = now;
    if (r == Restarts::CpuCuts) cpu_raised = now;
}

bool Cooldowns::holds_cpu_cuts(double now, double cooldown_s) const {
    return !in_cooldown(start, now, cooldown_s) && in_cooldown(cpu_raised, now, cooldown_s);
}

bool cooling_down(std::optional<double> cooldown_start, double now, double cooldown_s,
                  PerResource at_risk, PerResource raised, bool memory_grows) {
    const bool called_for =
        memory_grows || (at_risk.cpu && raised.cpu) || (at_risk.memory && raised.memory);
    return in_cooldown(cooldown_start, now, cooldown_s) && !called_for;
}

Actuator::Actuator(Allocation initial, ActuationOptions options)
    : options_(options), in_force_(initial) {
    if (options_.delay < 0) throw model::InputError("actuation delay must not be negative");
    if (!(options_.min_change >= 0)) throw model::InputError("minimum change must not be negative");
    if (!(options_.cooldown_s >= 0)) throw model::InputError("cooldown must not be negative");
}

const Allocation& Actuator::advance(double now) {
    if (!pending_.empty() && pending_.size() >= static_cast<std::size_t>(options_.delay)) {
        if (pending_.front()) apply(*pending_.front(), now);
        pending_.pop_front();
    }
    return in_force_;
}

void Actuator::decide(const std::optional<Allocation>& wanted, const Sample& sample) {
    at_risk_ |= at_risk(sample, options_.safety_margins, memory_before_);
    memory_before_ = sample.usage.memory;
    decide(wanted);
}

void Actuator::decide(const std::optional<Allocation>& wanted) {
    pending_.push_back(wanted);
}

// Within the cooldown nothing is cut: only more memory, or more of a resource at risk, goes ahead,
// and such a raise does not restart the cooldown; within one of CPU cuts, no CPU is cut (restarts).
void Actuator::apply(const Allocation& wanted, double now) {
    Allocation next = constrain(in_force_, wanted.request, options_.bounds);
    const bool within_cooldown = in_cooldown(cooldowns_.start, now, options_.cooldown_s);
    if (within_cooldown) next = no_cut(in_force_, next);
    if (cooldowns_.holds_cpu_cuts(now, options_.cooldown_s)) next = no_cpu_cut(in_force_, next);
    if (!worth_resizing(in_force_, next, options_.min_change)) return;
    if (cooling_down(cooldowns_.start, now, options_.cooldown_s, at_risk_,
                     raises(in_force_.request, next.request, options_.safety_margins),
                     grows_memory(in_force_.request, next.request, options_.min_change)))
        return;
    cooldowns_.record(restarts(within_cooldown, only_raises_cpu(in_force_.request, next.request)),
                      now);
    in_force_ = next;
    at_risk_ = {};
    ++resizes_;
}

}  // namespace phasescale::policy
