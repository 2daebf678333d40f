#include <phasescale/model/working_set.hpp>

#include <algorithm>

namespace phasescale::model {

namespace {

// The last rule.samples of `values`, or nothing where there are fewer or the rule is off.
std::vector<double> latest(const std::vector<double>& values, const WorkingSetRule& rule) {
    if (rule.samples < 2 || values.size() < rule.samples) return {};
    return {values.end() - static_cast<std::ptrdiff_t>(rule.samples), values.end()};
}

}  // namespace

bool at_work(const std::vector<double>& cpu, const WorkingSetRule& rule) {
    const std::vector<double> last = latest(cpu, rule);
    return rule.busy_cpu > 0 && !last.empty() &&
           std::all_of(last.begin(), last.end(), [&](double c) { return c >= rule.busy_cpu; });
}

bool growing(const std::vector<double>& memory, const WorkingSetRule& rule) {
    const std::vector<double> last = latest(memory, rule);
    if (last.empty()) return false;
    for (std::size_t i = 1; i < last.size(); ++i)
        if (!(last[i] > last[i - 1] * (1 + rule.memory_noise))) return false;
    return true;
}

bool shows_working_set(const std::vector<double>& cpu, const std::vector<double>& memory,
                       double run_s, const WorkingSetRule& rule) {
    return at_work(cpu, rule) && !growing(memory, rule) && run_s >= rule.horizon_s;
}

}  // namespace phasescale::model
