#include "recommend_report.hpp"

#include "command.hpp"

#include <phasescale/control/decision.hpp>
#include <phasescale/control/tracker.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <tuple>

namespace phasescale::cli {
namespace {

using nlohmann::ordered_json;

std::optional<double> larger(std::optional<double> a, std::optional<double> b) {
    if (!a) return b;
    if (!b) return a;
    return std::max(*a, *b);
}

void take_larger(control::ResourceValues& into, const control::ResourceValues& other) {
    into.cpu = larger(into.cpu, other.cpu);
    into.memory = larger(into.memory, other.memory);
}

void take_larger(Resources& into, const Resources& other) {
    take_larger(into.requests, other.requests);
    take_larger(into.limits, other.limits);
}

std::optional<double> plus(std::optional<double> a, std::optional<double> b) {
    if (!a) return b;
    if (!b) return a;
    return *a + *b;
}

// One pod's container replayed: per phase (nullopt: before the first), its samples and the
// target at its latest sample.
struct PodReplay {
    std::map<std::optional<int>, PhaseRecommendation> phases;
    std::size_t samples = 0;
    std::optional<int> last_phase;
};

PodReplay replay(const ContainerHistory& h, const std::shared_ptr<const model::PhaseModel>& model,
                 const control::AutoscalerSpec& spec, const control::ContainerPolicy& policy) {
    control::ContainerTracker tracker(model, spec);
    PodReplay out;
    // As if phasescale had sized the container through the window: it starts from the requests
    // and limits in force now and follows its own recommendations, so the policy's per-resize
    // step bounds are passed through, not stopped at.
    control::ContainerResources sized = h.current;
    for (std::size_t i = 0; i < h.timestamps.size(); ++i) {
        control::TrackerInput in;
        in.timestamp = h.timestamps[i];
        in.features = h.features[i];
        in.usage = h.usage[i];
        const policy::Allocation a = control::allocation_of(sized);
        in.allocated = a.request;
        in.limits = a.limit;
        const control::TrackerStep step = tracker.step(in);
        if (!step.observed) continue;
        ++out.samples;
        out.last_phase = step.phase;
        PhaseRecommendation& p = out.phases[step.phase];
        p.phase = control::phase_name(*model, step.phase);
        p.index = step.phase;
        ++p.samples;
        if (step.recommendation) {
            const control::ContainerTarget t =
                control::target_for(sized, *step.recommendation, policy, spec.min_change);
            p.recommended = {t.wanted.requests, t.wanted.limits};
            sized = t.wanted;
        }
    }
    return out;
}

// Folds one pod's replay into its workload's report: samples add up, each phase's
// recommendation is the largest of the pods'.
void merge(ContainerReport& report, const PodReplay& pod) {
    report.samples += pod.samples;
    for (const auto& [index, phase] : pod.phases) {
        auto it = std::find_if(report.phases.begin(), report.phases.end(),
                               [&](const PhaseRecommendation& p) { return p.index == index; });
        if (it == report.phases.end()) {
            report.phases.push_back(phase);
            continue;
        }
        it->samples += phase.samples;
        take_larger(it->recommended, phase.recommended);
    }
}

void finish(ContainerReport& report) {
    std::sort(report.phases.begin(), report.phases.end(),
              [](const PhaseRecommendation& a, const PhaseRecommendation& b) {
                  return a.index.value_or(-1) < b.index.value_or(-1);
              });
    for (PhaseRecommendation& p : report.phases) {
        p.share = report.samples ? static_cast<double>(p.samples) / report.samples : 0;
        take_larger(report.overall, p.recommended);
    }
    if (report.samples == 0)
        report.note = "no sample the policy could use (missing or implausible usage)";
    else if (!report.overall.requests.cpu && !report.overall.requests.memory)
        report.note = "too few samples for a first recommendation";
}

}  // namespace

std::optional<double> Risk::cpu_throttled_share() const {
    if (!cpu_periods || !cpu_throttled_periods || !(*cpu_periods > 0)) return std::nullopt;
    return *cpu_throttled_periods / *cpu_periods;
}

void Risk::add(const Risk& other) {
    oom_kills += other.oom_kills;
    cpu_periods = plus(cpu_periods, other.cpu_periods);
    cpu_throttled_periods = plus(cpu_throttled_periods, other.cpu_throttled_periods);
}

std::vector<ContainerReport> recommend_containers(
    const std::vector<ContainerHistory>& histories,
    const std::shared_ptr<const model::PhaseModel>& model, const control::AutoscalerSpec& spec) {
    using Key = std::tuple<std::string, std::string, std::string>;
    std::map<Key, ContainerReport> reports;
    std::map<Key, double> last_seen;
    for (const ContainerHistory& h : histories) {
        const Key key{h.ns, h.workload, h.container};
        ContainerReport& r = reports[key];
        r.ns = h.ns;
        r.workload = h.workload;
        r.container = h.container;
        r.pods.push_back(h.pod);
        r.risk.add(h.risk);
        const double seen = h.timestamps.empty() ? 0 : h.timestamps.back();
        const bool latest = r.pods.size() == 1 || seen >= last_seen[key];
        if (latest) {
            last_seen[key] = seen;
            r.current = {h.current.requests, h.current.limits};
        }
        const control::ContainerPolicy policy = spec.policy_for(h.container);
        if (!policy.enabled) {
            r.note = "its container policy's mode is Off";
            continue;
        }
        const PodReplay pod = replay(h, model, spec, policy);
        if (latest) r.current_phase = control::phase_name(*model, pod.last_phase);
        merge(r, pod);
    }
    std::vector<ContainerReport> out;
    for (auto& [key, r] : reports) {
        if (r.note.empty()) finish(r);
        out.push_back(std::move(r));
    }
    return out;
}

// ---- units ----

namespace {

// Up to `decimals` decimals, trailing zeros dropped: 1.50 -> "1.5".
std::string trimmed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    std::string text = buffer;
    if (text.find('.') != std::string::npos) {
        text.erase(text.find_last_not_of('0') + 1);
        if (text.back() == '.') text.pop_back();
    }
    return text;
}

}  // namespace

std::string human_cpu(std::optional<double> cores) {
    if (!cores) return "-";
    if (*cores < 1) return trimmed(std::ceil(*cores * 1000 - 1e-9), 0) + "m";
    return trimmed(*cores, 3);
}

std::string human_memory(std::optional<double> bytes) {
    if (!bytes) return "-";
    constexpr double kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024;
    if (*bytes >= kTi) return trimmed(*bytes / kTi, 2) + "Ti";
    if (*bytes >= kGi) return trimmed(*bytes / kGi, 2) + "Gi";
    if (*bytes >= kMi) return trimmed(*bytes / kMi, 0) + "Mi";
    if (*bytes >= kKi) return trimmed(*bytes / kKi, 0) + "Ki";
    return trimmed(*bytes, 0);
}

// ---- json and yaml ----

namespace {

ordered_json value_json(std::optional<double> v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json values_json(const control::ResourceValues& v) {
    return {{"cpu", value_json(v.cpu)}, {"memory", value_json(v.memory)}};
}

ordered_json resources_json(const Resources& r) {
    return {{"requests", values_json(r.requests)}, {"limits", values_json(r.limits)}};
}

ordered_json container_json(const ContainerReport& c) {
    ordered_json phases = ordered_json::array();
    for (const PhaseRecommendation& p : c.phases) {
        ordered_json j = {{"phase", p.phase}, {"samples", p.samples}, {"share", p.share}};
        j.update(resources_json(p.recommended));
        phases.push_back(std::move(j));
    }
    return {{"namespace", c.ns},
            {"workload", c.workload},
            {"container", c.container},
            {"pods", c.pods},
            {"samples", c.samples},
            {"current", resources_json(c.current)},
            {"recommended", resources_json(c.overall)},
            {"phases", std::move(phases)},
            {"current_phase", c.current_phase},
            {"risk",
             {{"oom_kills", std::llround(c.risk.oom_kills)},
              {"cpu_periods", value_json(c.risk.cpu_periods)},
              {"cpu_throttled_periods", value_json(c.risk.cpu_throttled_periods)},
              {"cpu_throttled_share", value_json(c.risk.cpu_throttled_share())}}},
            {"note", c.note}};
}

void yaml_value(const ordered_json& j, int indent, std::string& out);

std::string yaml_scalar(const ordered_json& j) {
    if (j.is_null()) return "null";
    if (j.is_string()) return j.dump();  // a JSON string is a YAML double-quoted scalar
    if (j.is_number_float()) return format_number(j.get<double>());
    return j.dump();
}

bool yaml_nested(const ordered_json& j) {
    return (j.is_object() || j.is_array()) && !j.empty();
}

// Block style: "key: scalar", "key:" then the nested value two spaces in; "- " for items.
void yaml_value(const ordered_json& j, int indent, std::string& out) {
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            out += pad + key + ":";
            if (yaml_nested(value)) {
                out += "\n";
                yaml_value(value, indent + 2, out);
            } else {
                out += " " + yaml_scalar(value) + "\n";
            }
        }
    } else if (j.is_array()) {
        for (const ordered_json& item : j) {
            if (yaml_nested(item)) {
                std::string nested;
                yaml_value(item, indent + 2, nested);
                out += pad + "- " + nested.substr(pad.size() + 2);
            } else {
                out += pad + "- " + yaml_scalar(item) + "\n";
            }
        }
    }
}

}  // namespace

ordered_json report_json(const Report& r) {
    ordered_json containers = ordered_json::array();
    for (const ContainerReport& c : r.containers) containers.push_back(container_json(c));
    return {{"prometheus", r.prometheus}, {"namespace", r.ns},       {"selector", r.selector},
            {"window", r.window},         {"start", r.start},        {"end", r.end},
            {"model", r.model},           {"containers", containers}};
}

std::string render_json(const Report& report) {
    return report_json(report).dump(2) + "\n";
}

std::string render_yaml(const Report& report) {
    std::string out;
    yaml_value(report_json(report), 0, out);
    return out;
}

// ---- csv and table: one row per phase, after the container's "overall" row ----

namespace {

std::string csv_number(std::optional<double> v) {
    return v ? format_number(*v) : "";
}

struct Row {
    const ContainerReport* container;
    std::string phase;
    std::size_t samples;
    double share;
    const Resources* recommended;
};

std::vector<Row> rows_of(const ContainerReport& c) {
    std::vector<Row> rows{{&c, "overall", c.samples, c.samples ? 1.0 : 0.0, &c.overall}};
    for (const PhaseRecommendation& p : c.phases)
        rows.push_back({&c, p.phase, p.samples, p.share, &p.recommended});
    return rows;
}

}  // namespace

std::string render_csv(const Report& report) {
    std::string out =
        "namespace,workload,container,pods,phase,samples,share,current_cpu_request,"
        "current_cpu_limit,current_memory_request,current_memory_limit,cpu_request,cpu_limit,"
        "memory_request,memory_limit,oom_kills,cpu_throttled_share\n";
    for (const ContainerReport& c : report.containers)
        for (const Row& row : rows_of(c)) {
            const std::vector<std::string> fields{c.ns,
                                                  c.workload,
                                                  c.container,
                                                  std::to_string(c.pods.size()),
                                                  row.phase,
                                                  std::to_string(row.samples),
                                                  format_number(row.share),
                                                  csv_number(c.current.requests.cpu),
                                                  csv_number(c.current.limits.cpu),
                                                  csv_number(c.current.requests.memory),
                                                  csv_number(c.current.limits.memory),
                                                  csv_number(row.recommended->requests.cpu),
                                                  csv_number(row.recommended->limits.cpu),
                                                  csv_number(row.recommended->requests.memory),
                                                  csv_number(row.recommended->limits.memory),
                                                  std::to_string(std::llround(c.risk.oom_kills)),
                                                  csv_number(c.risk.cpu_throttled_share())};
            std::string line;
            for (const std::string& f : fields) line += (line.empty() ? "" : ",") + csv_field(f);
            out += line + "\n";
        }
    return out;
}

namespace {

// "500m -> 250m" on the overall row (current, then recommended); the recommendation alone on a
// phase's row.
std::string cell(std::string current, std::string recommended, bool overall) {
    if (!overall || (current == "-" && recommended == "-")) return recommended;
    return current + " -> " + recommended;
}

std::string percent(std::optional<double> share) {
    return share ? trimmed(*share * 100, 1) + "%" : "-";
}

std::string aligned(const std::vector<std::vector<std::string>>& table) {
    std::vector<std::size_t> width;
    for (const auto& row : table)
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], row[i].size());
        }
    std::string out;
    for (const auto& row : table) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i)
            line +=
                row[i] + std::string(i + 1 < row.size() ? width[i] - row[i].size() + 2 : 0, ' ');
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

}  // namespace

std::string render_table(const Report& report) {
    std::vector<std::vector<std::string>> table{
        {"NAMESPACE", "WORKLOAD", "CONTAINER", "PODS", "PHASE", "TIME", "CPU REQUEST", "CPU LIMIT",
         "MEMORY REQUEST", "MEMORY LIMIT", "OOM KILLS", "THROTTLED"}};
    std::string notes;
    for (const ContainerReport& c : report.containers) {
        for (const Row& row : rows_of(c)) {
            const bool overall = row.phase == "overall";
            const Resources& now = c.current;
            const Resources& rec = *row.recommended;
            std::string phase = row.phase;
            if (overall && !c.current_phase.empty()) phase += " (now " + c.current_phase + ")";
            table.push_back(
                {overall ? c.ns : "", overall ? c.workload : "", overall ? c.container : "",
                 overall ? std::to_string(c.pods.size()) : "", phase, percent(row.share),
                 cell(human_cpu(now.requests.cpu), human_cpu(rec.requests.cpu), overall),
                 cell(human_cpu(now.limits.cpu), human_cpu(rec.limits.cpu), overall),
                 cell(human_memory(now.requests.memory), human_memory(rec.requests.memory),
                      overall),
                 cell(human_memory(now.limits.memory), human_memory(rec.limits.memory), overall),
                 overall ? std::to_string(std::llround(c.risk.oom_kills)) : "",
                 overall ? percent(c.risk.cpu_throttled_share()) : ""});
        }
        if (!c.note.empty())
            notes += c.ns + "/" + c.workload + "/" + c.container + ": " + c.note + "\n";
    }
    std::string out = "Namespace " + report.ns +
                      (report.selector.empty() ? "" : ", pods matching " + report.selector) +
                      ", window " + report.window + ", model " + report.model + ": " +
                      std::to_string(report.containers.size()) + " containers\n\n";
    out += aligned(table);
    if (!notes.empty()) out += "\n" + notes;
    return out;
}

std::string render(const Report& report, const std::string& format) {
    if (format == "table") return render_table(report);
    if (format == "json") return render_json(report);
    if (format == "yaml") return render_yaml(report);
    if (format == "csv") return render_csv(report);
    throw std::invalid_argument("unknown output format \"" + format +
                                "\": use table, json, yaml or csv");
}

}  // namespace phasescale::cli
