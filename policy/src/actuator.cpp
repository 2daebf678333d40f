#include <phasescale/model/error.hpp>
#include <phasescale/policy/actuator.hpp>

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

bool cooling_down(std::optional<double> last_resize, double now, double cooldown_s,
                  bool oom_since_resize, bool more_memory) {
    return last_resize && now < *last_resize + cooldown_s && !(oom_since_resize && more_memory);
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

void Actuator::decide(const std::optional<Allocation>& wanted, bool oom_killed) {
    oom_since_resize_ = oom_since_resize_ || oom_killed;
    pending_.push_back(wanted);
}

void Actuator::apply(const Allocation& wanted, double now) {
    const Allocation next = constrain(in_force_, wanted.request, options_.bounds);
    if (!worth_resizing(in_force_, next, options_.min_change)) return;
    if (cooling_down(last_resize_, now, options_.cooldown_s, oom_since_resize_,
                     next.request.memory > in_force_.request.memory))
        return;
    in_force_ = next;
    last_resize_ = now;
    oom_since_resize_ = false;
    ++resizes_;
}

}  // namespace phasescale::policy
