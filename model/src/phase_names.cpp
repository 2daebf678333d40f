#include <phasescale/model/model.hpp>
#include <phasescale/model/phase_names.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace phasescale::model {
namespace {

// Below this ratio of highest to lowest mean the phases use about the same: all "mid".
constexpr double kSameRatio = 1.5;

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

std::string fallback_name(std::size_t phase) {
    return "phase-" + std::to_string(phase);
}

// Each phase's median of `column`; nothing for a phase without samples or a model without it.
std::vector<std::optional<double>> means(const PhaseStatistics& s, const std::string& column) {
    std::vector<std::optional<double>> out(s.phases.size());
    const auto found = std::find(s.usage_columns.begin(), s.usage_columns.end(), column);
    if (found == s.usage_columns.end()) return out;
    const auto c = static_cast<std::size_t>(found - s.usage_columns.begin());
    for (std::size_t k = 0; k < s.phases.size(); ++k)
        if (s.phases[k].samples > 0 && c < s.phases[k].usage.size())
            out[k] = s.phases[k].usage[c].p50;
    return out;
}

// low, mid or high per phase: thirds of the log range of the values above `floor` (idle phases
// stay out of the CPU range, so that it compares the phases that work).
std::vector<std::string> levels(const std::vector<std::optional<double>>& values, double floor) {
    double lowest = INFINITY, highest = 0;
    for (const auto& v : values)
        if (v && *v > floor) lowest = std::min(lowest, *v), highest = std::max(highest, *v);
    std::vector<std::string> out(values.size());
    for (std::size_t k = 0; k < values.size(); ++k) {
        if (!values[k]) continue;
        if (!(highest > lowest * kSameRatio)) {
            out[k] = "mid";
            continue;
        }
        const double at = *values[k] > lowest ? std::log(*values[k] / lowest) : 0;
        const double third = std::log(highest / lowest) / 3;
        out[k] = at < third ? "low" : at <= 2 * third ? "mid" : "high";
    }
    return out;
}

}  // namespace

std::string phase_name_problem(const std::string& name) {
    if (name.empty()) return "a phase name cannot be empty";
    if (name.size() > kMaxPhaseNameLength)
        return "\"" + name + "\" is longer than " + std::to_string(kMaxPhaseNameLength) +
               " characters";
    for (char c : name)
        if (!is_lower_alnum(c) && c != '-')
            return "\"" + name + "\" may hold only lowercase letters, digits and '-'";
    if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back()))
        return "\"" + name + "\" must start and end with a letter or digit";
    if (name == kNoPhaseName) return "\"unknown\" means no phase; it cannot name one";
    return "";
}

void make_names_unique(std::vector<std::string>& names, const std::vector<std::string>& taken) {
    std::set<std::string> used(taken.begin(), taken.end());
    for (std::string& name : names) {
        std::string unique = name;
        for (int n = 2; used.count(unique); ++n) {
            const std::string suffix = "-" + std::to_string(n);
            unique = name.substr(0, kMaxPhaseNameLength - suffix.size()) + suffix;
        }
        name = unique;
        used.insert(name);
    }
}

std::vector<std::string> derive_phase_names(const PhaseModel& model) {
    const auto k = static_cast<std::size_t>(model.phases());
    std::vector<std::string> names(k);
    std::vector<std::optional<double>> cpu(k), memory(k);
    if (model.statistics && model.statistics->phases.size() == k) {
        cpu = means(*model.statistics, kCpuUsageColumn);
        memory = means(*model.statistics, kMemoryUsageColumn);
    }
    const std::vector<std::string> cpu_level = levels(cpu, kIdleCores),
                                   memory_level = levels(memory, 0);
    for (std::size_t p = 0; p < k; ++p) {
        std::string name;
        if (cpu[p]) name = *cpu[p] < kIdleCores ? "idle" : "cpu-" + cpu_level[p];
        if (memory[p]) name += (name.empty() ? "" : "-") + std::string("mem-") + memory_level[p];
        names[p] = name.empty() ? fallback_name(p) : name;
    }
    make_names_unique(names);
    return names;
}

}  // namespace phasescale::model

namespace phasescale::model {

std::string PhaseModel::phase_name(int phase) const {
    if (phase < 0) return kNoPhaseName;
    const auto p = static_cast<std::size_t>(phase);
    return p < phase_names.size() ? phase_names[p] : fallback_name(p);
}

}  // namespace phasescale::model
