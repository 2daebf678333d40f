#include <phasescale/model/error.hpp>
#include <phasescale/policy/actuator.hpp>

#include <algorithm>
#include <cmath>

namespace phasescale::policy {

bool worth_resizing(const Allocation& current, const Allocation& wanted, double min_change) {
    auto changed = [&](double from, double to) {
        if (from <= 0) return to != from;
        return std::abs(to - from) > min_change * from;
    };
    return changed(current.request.cpu, wanted.request.cpu) ||
           changed(current.request.memory, wanted.request.memory);
}

bool memory_at_risk(const Sample& sample, double margin) {
    if (sample.oom_killed) return true;
    const double line = oom_line(sample);
    return line > 0 && sample.usage.memory * (1 + std::max(0.0, margin)) >= line;
}

bool in_cooldown(std::optional<double> last_resize, double now, double cooldown_s) {
    return last_resize && now < *last_resize + cooldown_s;
}

bool cooling_down(std::optional<double> last_resize, double now, double cooldown_s,
                  bool memory_at_risk, bool more_memory) {
    return in_cooldown(last_resize, now, cooldown_s) && !(memory_at_risk && more_memory);
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
    memory_at_risk_ = memory_at_risk_ || memory_at_risk(sample, options_.memory_margin);
    decide(wanted);
}

void Actuator::decide(const std::optional<Allocation>& wanted) {
    pending_.push_back(wanted);
}

void Actuator::apply(const Allocation& wanted, double now) {
    Allocation next = constrain(in_force_, wanted.request, options_.bounds);
    if (in_cooldown(last_resize_, now, options_.cooldown_s)) {  // only more memory goes ahead
        next.request.cpu = std::max(next.request.cpu, in_force_.request.cpu);
        next.limit.cpu = std::max(next.limit.cpu, in_force_.limit.cpu);
    }
    if (!worth_resizing(in_force_, next, options_.min_change)) return;
    if (cooling_down(last_resize_, now, options_.cooldown_s, memory_at_risk_,
                     next.request.memory > in_force_.request.memory))
        return;
    in_force_ = next;
    last_resize_ = now;
    memory_at_risk_ = false;
    ++resizes_;
}

}  // namespace phasescale::policy
