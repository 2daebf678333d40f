#include <phasescale/sim/report.hpp>

#include <cmath>

namespace phasescale::sim {
namespace {

using nlohmann::json;

// The policies every other is compared with.
constexpr const char* kBaselines[] = {"vpa", "vpa-updater", "vpa-warm", "window", "krr"};

// NaN (an undefined ratio) becomes null.
json number(double x) {
    return std::isfinite(x) ? json(x) : json(nullptr);
}

json resource_json(const ResourceScore& r) {
    return {{"allocated", r.allocated},     {"used", r.used},
            {"fulfilment", r.fulfilment()}, {"shortfall", r.shortfall},
            {"samples", r.samples},         {"over_limit_samples", r.over_limit}};
}

// vpa - phase as a share of vpa - perfect: how much of the possible saving `phase` gets.
double gap_share(const Report& r, const std::string& resource) {
    const double phase = r.reduction("phase", "vpa", resource),
                 perfect = r.reduction("perfect", "vpa", resource);
    return perfect > 0 ? phase / perfect : std::nan("");
}

}  // namespace

// The risk keys come beside the historical ones (oom_events: samples over the memory limit).
nlohmann::json score_json(const Score& s) {
    json j = {{"cpu", resource_json(s.cpu)},
              {"memory", resource_json(s.memory)},
              {"resizes", s.resizes},
              {"unknown_phase_samples", s.unknown_phase_samples},
              {"resizes_per_pod_hour", s.resizes_per_pod_hour()},
              {"jobs", s.jobs},
              {"pod_hours", s.seconds / 3600}};
    j["cpu"]["throttled_share"] = s.cpu.over_limit_share();
    j["memory"]["oom_events"] = s.oom_events;
    j["memory"]["oom_kills"] = s.oom_kills;
    j["memory"]["oom_kills_per_job"] = s.oom_kills_per_job();
    j["memory"]["jobs_oom_killed"] = s.jobs_oom_killed;
    j["memory"]["jobs_oom_killed_share"] = s.jobs_oom_killed_share();
    return j;
}

json report_json(const Report& r) {
    json policies = json::object();
    for (const std::string& name : r.policies) {
        const PolicyResult& p = r.results.at(name);
        json j = score_json(p.score);
        double cpu_margin = 0, memory_margin = 0;
        json per_fold = json::array();
        for (const policy::Margins& m : p.margins) {
            cpu_margin += m.cpu / p.margins.size();
            memory_margin += m.memory / p.margins.size();
            per_fold.push_back({{"cpu", m.cpu}, {"memory", m.memory}});
        }
        j["cpu"]["margin"] = cpu_margin;
        j["memory"]["margin"] = memory_margin;
        j["margins_per_fold"] = per_fold;
        json targets = json::array();
        for (const RiskTarget& t : p.targets)
            targets.push_back({{"cpu_fulfilment", t.cpu_fulfilment}, {"oom_kills", t.oom_kills}});
        j["calibration_targets_per_fold"] = targets;
        json reduction = json::object();
        for (const char* baseline : kBaselines) {
            if (r.results.count(baseline) == 0) continue;
            reduction[baseline] = {{"cpu", number(r.reduction(name, baseline, "cpu"))},
                                   {"memory", number(r.reduction(name, baseline, "memory"))}};
        }
        j["reduction"] = reduction;
        json tradeoff = json::array();
        for (const TradeoffPoint& t : p.tradeoff) {
            tradeoff.push_back(
                {{"margin", t.margin},
                 {"cpu", {{"allocated", t.cpu.allocated}, {"fulfilment", t.cpu.fulfilment()}}},
                 {"memory",
                  {{"allocated", t.memory.allocated}, {"fulfilment", t.memory.fulfilment()}}}});
        }
        j["tradeoff"] = tradeoff;
        policies[name] = j;
    }

    json containers = json::array();
    for (const ContainerResult& c : r.containers) {
        json per_policy = json::object();
        for (const auto& [name, replay] : c.replays) {
            json j = score_json(replay.score);
            j["oom_kill_samples"] = replay.oom_kills;
            j["reduction"] = json::object();
            for (const char* baseline : kBaselines) {
                const auto base = c.replays.find(baseline);
                if (base == c.replays.end()) continue;
                j["reduction"][baseline] = {
                    {"cpu",
                     number(1 - replay.score.cpu.allocated / base->second.score.cpu.allocated)},
                    {"memory", number(1 - replay.score.memory.allocated /
                                              base->second.score.memory.allocated)}};
            }
            per_policy[name] = j;
        }
        containers.push_back({{"id", c.container.id},
                              {"source", c.container.source},
                              {"fold", c.fold},
                              {"samples", c.container.usage.size()},
                              {"policies", per_policy}});
    }

    json folds = json::array();
    for (const Fold& f : r.folds)
        folds.push_back({{"training", f.training.size()}, {"held_out", f.held_out.size()}});
    json summary = json::object();
    if (r.results.count("phase") && r.results.count("vpa") && r.results.count("perfect")) {
        summary["phase_share_of_perfect_saving_vs_vpa"] = {
            {"cpu", number(gap_share(r, "cpu"))}, {"memory", number(gap_share(r, "memory"))}};
    }
    if (r.results.count("phase") && r.results.count("oracle")) {
        summary["phase_over_oracle_allocation"] = {
            {"cpu", number(1 - r.reduction("phase", "oracle", "cpu"))},
            {"memory", number(1 - r.reduction("phase", "oracle", "memory"))}};
    }
    return {{"policies", policies},
            {"summary", summary},
            {"containers", containers},
            {"settings",
             {{"target_fulfilment", r.options.target_fulfilment},
              {"inner_folds", r.options.inner_folds},
              {"train_fraction", r.options.train_fraction},
              {"folds", folds},
              {"split", r.split},
              {"seed", r.options.seed},
              {"actuation_delay", r.options.settings.actuation.delay},
              {"min_change", r.options.settings.actuation.min_change},
              {"cooldown_seconds", r.options.settings.actuation.cooldown_s},
              {"tick_seconds", r.options.settings.actuation.tick_s},
              {"rate_window_seconds", r.options.settings.actuation.rate_window_s},
              {"memory_min_headroom", r.options.settings.phase.memory_min_headroom}}},
            {"notes", r.notes}};
}

}  // namespace phasescale::sim
