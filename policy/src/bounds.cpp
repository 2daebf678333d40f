#include <phasescale/policy/bounds.hpp>

#include <algorithm>

namespace phasescale::policy {
namespace {

double clamp(double v, std::optional<double> lo, std::optional<double> hi) {
    if (hi) v = std::min(v, *hi);
    if (lo) v = std::max(v, *lo);
    return v;
}

double exact(double v) {
    return v;
}

std::optional<double> present(double v) {
    return v > 0 ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

SizedResource size_resource(double wanted, std::optional<double> lo, std::optional<double> hi,
                            double ceiling, bool limits_controlled,
                            std::optional<double> current_request,
                            std::optional<double> current_limit, double (*round)(double)) {
    SizedResource s;
    s.request = round(std::min(clamp(wanted, lo, hi), ceiling));
    s.limit = current_limit;
    if (!current_limit) return s;
    if (limits_controlled) {
        const double ratio =
            current_request && *current_request > 0 ? *current_limit / *current_request : 1.0;
        s.limit = ratio == 1.0 ? s.request : round(std::min(s.request * ratio, ceiling));
    } else {
        s.request = std::min(s.request, *current_limit);
    }
    return s;
}

Allocation constrain(const Allocation& current, const Amount& wanted, const ContainerBounds& b) {
    Allocation a = current;
    auto apply = [&](double want, std::optional<double> lo, std::optional<double> hi,
                     double ceiling, double& request, double& limit) {
        const SizedResource s = size_resource(want, lo, hi, ceiling, b.requests_and_limits,
                                              present(request), present(limit), &exact);
        request = s.request;
        limit = s.limit.value_or(0);
    };
    if (b.control_cpu)
        apply(wanted.cpu, b.min_cpu, b.max_cpu, kMaxCpuCores, a.request.cpu, a.limit.cpu);
    if (b.control_memory)
        apply(wanted.memory, b.min_memory, b.max_memory, kMaxMemoryBytes, a.request.memory,
              a.limit.memory);
    return a;
}

}  // namespace phasescale::policy
