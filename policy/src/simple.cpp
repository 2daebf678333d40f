#include <phasescale/model/error.hpp>
#include <phasescale/model/statistics.hpp>
#include <phasescale/policy/simple.hpp>

#include <algorithm>
#include <vector>

namespace phasescale::policy {

Allocation guaranteed(Amount request) {
    return Allocation{request, request};
}

StaticRecommender::StaticRecommender(Amount allocation, Margins margins)
    : allocation_(guaranteed(
          {allocation.cpu * (1 + margins.cpu), allocation.memory * (1 + margins.memory)})) {}

std::optional<Allocation> StaticRecommender::recommend(const Sample*) {
    return allocation_;
}

WindowRecommender::WindowRecommender(WindowOptions options)
    : options_(options), cpu_(options.samples), memory_(options.samples) {
    if (options_.samples < 1)
        throw model::InputError("window policy: the window needs at least 1 sample");
    if (!(options_.quantile >= 0 && options_.quantile <= 1))
        throw model::InputError("window policy: the quantile must be in [0, 1]");
}

void WindowRecommender::observe(const Sample& sample) {
    cpu_.push(sample.usage.cpu);
    memory_.push(sample.usage.memory);
}

std::optional<Allocation> WindowRecommender::recommend(const Sample*) {
    if (cpu_.empty()) return std::nullopt;
    auto estimate = [&](const Ring<double>& values) {
        return model::quantile(values.values(), options_.quantile);
    };
    return guaranteed({estimate(cpu_) * (1 + options_.margins.cpu),
                       estimate(memory_) * (1 + options_.margins.memory)});
}

KrrRecommender::KrrRecommender(KrrOptions options)
    : options_(options), cpu_(options.history), memory_(options.history) {}

void KrrRecommender::observe(const Sample& sample) {
    cpu_.push(sample.usage.cpu);
    memory_.push(sample.usage.memory);
}

std::optional<Allocation> KrrRecommender::recommend(const Sample*) {
    if (cpu_.empty()) return std::nullopt;
    const std::vector<double> memory = memory_.values();
    const double peak = *std::max_element(memory.begin(), memory.end());
    return guaranteed(
        {model::quantile(cpu_.values(), options_.cpu_percentile) * (1 + options_.margins.cpu),
         peak * (1 + options_.memory_buffer) * (1 + options_.margins.memory)});
}

std::optional<Allocation> PerfectRecommender::recommend(const Sample* next) {
    if (next == nullptr) throw model::InputError("perfect policy: needs the next sample");
    return guaranteed(
        {next->usage.cpu * (1 + margins_.cpu), next->usage.memory * (1 + margins_.memory)});
}

}  // namespace phasescale::policy
