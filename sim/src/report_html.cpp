// The simulator's report as one self-contained HTML page: a headline, the summary table, the
// trade-off curves, usage against allocation over time with the phases as bands, and per-phase
// box plots. Every chart is inline SVG drawn here; nothing is fetched from anywhere.

#include <phasescale/model/phases.hpp>
#include <phasescale/model/statistics.hpp>
#include <phasescale/sim/report.hpp>

#include "html_text.hpp"
#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace phasescale::sim {
namespace {

// Long series are cut into at most this many buckets per line (the maximum of each is kept).
constexpr std::size_t kMaxPoints = 1500;
// Containers drawn over time (the first ones held out).
constexpr std::size_t kMaxContainers = 6;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kHour = 3600;

// ---------------------------------------------------------------------------------------------
// Text and numbers

using html::escape;
using html::fixed;
using html::printf_string;
using svg::Axis;
using svg::nice_ceiling;
using svg::percent_tick;
using svg::px;
using svg::Scale;
using svg::Style;
using svg::Svg;

// Thousands separated by a thin space: 12 345.
std::string grouped(double x) {
    std::string digits = fixed(std::fabs(x), 0), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += "\u2009";
        out += digits[i];
    }
    return (x < 0 ? "-" : "") + out;
}

// About three significant digits, never in exponent form for everyday magnitudes.
std::string readable(double x) {
    if (!std::isfinite(x)) return "—";
    const double a = std::fabs(x);
    if (a >= 1000) return grouped(x);
    if (a >= 100) return fixed(x, 0);
    if (a >= 10) return fixed(x, 1);
    if (a >= 1) return fixed(x, 2);
    if (a == 0) return "0";
    return printf_string("%.3g", x);
}

std::string percent(double share, int decimals = 1) {
    return std::isfinite(share) ? fixed(100 * share, decimals) + "%" : "—";
}

std::string count(std::size_t n) {
    return grouped(static_cast<double>(n));
}

// A duration in seconds, in the unit that reads best.
std::string duration(double seconds) {
    if (!std::isfinite(seconds)) return "—";
    if (seconds < 120) return readable(seconds) + " s";
    if (seconds < 2 * kHour) return readable(seconds / 60) + " min";
    return readable(seconds / kHour) + " h";
}

// ---------------------------------------------------------------------------------------------
// Colours: one per policy (vpa and phase emphasised), one per phase (bands and boxes).

struct PolicyStyle {
    std::string colour;
    double width = 1.3;
    std::string dash;
};

PolicyStyle policy_style(const std::string& name) {
    static const std::map<std::string, PolicyStyle> known = {
        {"static", {"#8c8c8c", 1.3, "6 3"}},      {"vpa", {"#d62728", 2.4, ""}},
        {"vpa-updater", {"#e377c2", 1.6, "3 2"}}, {"vpa-warm", {"#ff7f0e", 1.4, ""}},
        {"window", {"#9467bd", 1.4, ""}},         {"krr", {"#8c564b", 1.4, ""}},
        {"phase", {"#1f5fbf", 2.6, ""}},          {"phase-no-model", {"#6fa8dc", 1.4, "4 2"}},
        {"oracle", {"#2ca02c", 1.4, "5 3"}},      {"perfect", {"#222222", 1.0, "2 2"}}};
    if (const auto it = known.find(name); it != known.end()) return it->second;
    static const char* others[] = {"#17becf", "#bcbd22", "#e377c2", "#7f7f7f"};
    std::size_t h = 0;
    for (const char c : name) h = h * 31 + static_cast<unsigned char>(c);
    return {others[h % 4], 1.4, ""};
}

bool emphasised(const std::string& policy) {
    return policy == "phase" || policy == "vpa";
}

std::string phase_colour(int phase) {
    static const char* palette[] = {"#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3",
                                    "#a6d854", "#ffd92f", "#e5c494", "#80b1d3",
                                    "#fb8072", "#bebada", "#b3de69", "#bc80bd"};
    constexpr int n = sizeof palette / sizeof palette[0];
    return palette[((phase % n) + n) % n];
}

// ---------------------------------------------------------------------------------------------
// What the sections read from the report

const ResourceScore& resource(const Score& s, bool cpu) {
    return cpu ? s.cpu : s.memory;
}
double unit(bool cpu) {
    return cpu ? 1.0 : kGiB;
}  // cores or GiB
const char* unit_name(bool cpu) {
    return cpu ? "cores" : "GiB";
}
const char* resource_name(bool cpu) {
    return cpu ? "CPU" : "memory";
}

bool has(const Report& r, const std::string& policy) {
    return r.results.count(policy) &&
           std::find(r.policies.begin(), r.policies.end(), policy) != r.policies.end();
}

// The policies in the report's order, vpa and phase last so that they are drawn on top.
std::vector<std::string> drawing_order(const std::vector<std::string>& policies) {
    std::vector<std::string> order;
    for (const auto& p : policies)
        if (!emphasised(p)) order.push_back(p);
    for (const char* p : {"vpa", "phase"})
        if (std::find(policies.begin(), policies.end(), p) != policies.end()) order.push_back(p);
    return order;
}

double mean_margin(const PolicyResult& p, bool cpu) {
    if (p.margins.empty()) return std::nan("");
    double sum = 0;
    for (const auto& m : p.margins) sum += cpu ? m.cpu : m.memory;
    return sum / static_cast<double>(p.margins.size());
}

std::string signed_percent(double share) {
    if (!std::isfinite(share)) return "—";
    return (share > 0.0005 ? "+" : "") + percent(share);
}

struct HeldOut {
    std::size_t containers = 0, samples = 0;
    double seconds = 0;
};

// "held-out " where executions were held out from the model's training, else nothing: a replay
// without a split scores every execution.
std::string held_out_prefix(const Report& r) {
    return r.split ? "held-out " : "";
}

// A policy's margin as the report's dots show it: calibrated to the target, or its own default.
std::string margin_kind(const Report& r) {
    return r.options.target_fulfilment > 0 ? "calibrated" : "own";
}

HeldOut held_out(const Report& r) {
    HeldOut h;
    for (const ContainerResult& c : r.containers) {
        ++h.containers;
        h.samples += c.container.usage.size();
        const auto d = sample_durations(c.container.timestamps);
        for (const double x : d) h.seconds += x;
    }
    return h;
}

// ---------------------------------------------------------------------------------------------
// Small HTML pieces

std::string swatch(const PolicyStyle& s) {
    return "<i class=\"sw\" style=\"border-top:" + fixed(std::max(2.0, s.width), 1) + "px " +
           (s.dash.empty() ? "solid" : "dashed") + " " + s.colour + "\"></i>";
}

// Clicking a policy in any legend hides or shows its lines in every chart.
std::string policy_legend(const std::vector<std::string>& policies, const std::string& extra = "") {
    std::string h = "<div class=\"legend\">";
    for (const auto& p : policies) {
        h += "<span class=\"lg" + std::string(emphasised(p) ? " em" : "") + "\" data-policy=\"" +
             escape(p) + "\" title=\"click to hide or show\">" + swatch(policy_style(p)) +
             escape(p) + "</span>";
    }
    return h + extra + "</div>\n";
}

std::string phase_legend(int phases) {
    std::string h;
    for (int k = 0; k < phases; ++k)
        h += "<span class=\"ph\"><i class=\"band\" style=\"background:" + phase_colour(k) +
             "\"></i>phase " + std::to_string(k) + "</span>";
    return h;
}

// ---------------------------------------------------------------------------------------------
// 1. The headline

std::string lead_paragraph(const Report& r) {
    const HeldOut h = held_out(r);
    const double target = r.options.target_fulfilment;
    std::ostringstream o;
    o << "<p class=\"lead\">";
    if (r.split) {
        o << "Replayed <b>" << count(h.containers) << " held-out executions</b> ("
          << count(h.samples) << " samples, " << duration(h.seconds)
          << " of trace, never seen by the phase model) ";
        if (r.folds.size() > 1) {
            o << "over <b>" << r.folds.size() << " folds</b>";
        } else {
            o << "from one split (" << count(r.folds.front().training.size())
              << " executions for training)";
        }
    } else {
        o << "Replayed <b>all " << count(h.containers) << " executions</b> (" << count(h.samples)
          << " samples, " << duration(h.seconds) << " of trace) without a held-out split";
    }
    o << " through " << r.policies.size() << " policies. ";
    if (target > 0) {
        o << "Each policy's safety margins were calibrated "
          << (r.split ? "on the training executions" : "on the same executions");
        if (r.split && has(r, "phase") && r.options.inner_folds >= 2)
            o << " (phase replaying each with a model trained without it, on inner folds)";
        o << ", so the policies are compared at equal risk: "
          << (has(r, "phase") ? "phase's" : "every policy's") << " to <b>" << percent(target, 0)
          << " CPU fulfilment</b> and no more OOM kills than vpa at its defaults";
        if (has(r, "phase"))
            o << " (margins never below 0, as a PhaseAutoscaler's), the others' to the "
                 "fulfilment and OOM kills phase reached";
        o << ".";
    } else {
        o << "Margins were not calibrated: each policy ran with its default margins.";
    }
    o << "</p>\n";
    return o.str();
}

// Escaped, with `quoted` names as code.
std::string note_text(const std::string& note) {
    const std::string e = escape(note);
    std::string out;
    bool open = false;
    for (const char c : e) {
        if (c != '`') {
            out += c;
            continue;
        }
        out += open ? "</code>" : "<code>";
        open = !open;
    }
    return open ? out + "</code>" : out;
}

// What the experiment itself tells the reader (a policy skipped, and why), before any number.
std::string report_notes(const Report& r) {
    if (r.notes.empty()) return "";
    std::string h = "<div class=\"report-notes\"><b>Notes</b><ul>";
    for (const std::string& n : r.notes) h += "<li>" + note_text(n) + "</li>";
    return h + "</ul></div>\n";
}

// phase against vpa in one sentence and a row of cards: the risk first, then the savings.
std::string key_findings(const Report& r) {
    const double target = r.options.target_fulfilment;
    const Score& phase = r.results.at("phase").score;
    const Score& vpa = r.results.at("vpa").score;
    const double cpu = r.reduction("phase", "vpa", "cpu"),
                 memory = r.reduction("phase", "vpa", "memory");
    const auto less = [](double x) {
        return std::isfinite(x) ? percent(std::fabs(x)) + (x >= 0 ? " less" : " more") : "—";
    };
    const auto kills = [](std::size_t n) {
        return count(n) + (n == 1 ? " OOM kill" : " OOM kills");
    };
    std::ostringstream o;
    o << "<p class=\"key\">The <b>phase</b> policy had <b>" << kills(phase.oom_kills) << "</b> ("
      << count(phase.jobs_oom_killed) << " of " << count(phase.jobs)
      << " jobs killed) against vpa's " << kills(vpa.oom_kills) << " ("
      << count(vpa.jobs_oom_killed) << " of " << count(vpa.jobs) << "), met CPU demand in "
      << percent(phase.cpu.fulfilment()) << " of " << held_out_prefix(r) << "samples (vpa "
      << percent(vpa.cpu.fulfilment()) << "), and allocates <b>" << less(cpu) << " CPU</b> and <b>"
      << less(memory) << " memory</b> than <b>vpa</b>.</p>\n";

    o << "<div class=\"cards\">";
    const auto card = [&](const std::string& big, const std::string& what, const char* verdict) {
        o << "<div class=\"card\"><div class=\"big " << verdict << "\">" << big << "</div><div>"
          << what << "</div></div>";
    };
    const auto good_or_bad = [](double x) { return x >= 0 ? "good" : "bad"; };
    // No kill is good; more than vpa is bad; as many as vpa or fewer, but some, is neither.
    const auto kill_verdict = [](double phase_kills, double vpa_kills) {
        return phase_kills == 0 ? "good" : phase_kills > vpa_kills ? "bad" : "";
    };
    card(count(phase.oom_kills) + " / " + count(vpa.oom_kills), "OOM kills, phase / vpa",
         kill_verdict(static_cast<double>(phase.oom_kills), static_cast<double>(vpa.oom_kills)));
    card(percent(phase.jobs_oom_killed_share()) + " / " + percent(vpa.jobs_oom_killed_share()),
         "jobs OOM-killed, phase / vpa",
         kill_verdict(phase.jobs_oom_killed_share(), vpa.jobs_oom_killed_share()));
    card(percent(phase.cpu.fulfilment()) + " / " + percent(phase.memory.fulfilment()),
         "phase fulfilment, CPU / memory",
         good_or_bad(std::min(phase.cpu.fulfilment(), phase.memory.fulfilment()) -
                     (target > 0 ? target - 0.02 : 0)));
    card(percent(cpu), "less CPU than vpa", good_or_bad(cpu));
    card(percent(memory), "less memory than vpa", good_or_bad(memory));
    o << "</div>\n";
    return o.str();
}

// Risk as users judge an autoscaler, per policy, with what it saves beside it.
std::string risk_table(const Report& r) {
    const bool vpa = has(r, "vpa");
    std::ostringstream o;
    o << "<div class=\"scroll\"><table class=\"risk\">\n<thead><tr><th rowspan=\"2\">policy</th>"
      << "<th colspan=\"2\" class=\"group\">jobs OOM-killed</th><th colspan=\"2\" "
         "class=\"group\">OOM kills</th>"
      << "<th colspan=\"2\" class=\"group\">CPU</th><th rowspan=\"2\">resizes per<br>pod-hour</th>"
      << "<th colspan=\"2\" class=\"group\">" << (vpa ? "allocated: less than vpa" : "allocated")
      << "</th></tr>\n<tr>"
      << "<th class=\"first\">share</th><th>jobs</th><th class=\"first\">kills</th><th>per job</th>"
      << "<th class=\"first\">throttled</th><th>fulfil&shy;ment</th>"
      << (vpa ? "<th class=\"first\">CPU</th><th>memory</th>"
              : "<th class=\"first\">core-hours</th><th>GiB-hours</th>")
      << "</tr></thead>\n<tbody>\n";
    for (const std::string& name : r.policies) {
        const auto it = r.results.find(name);
        if (it == r.results.end()) continue;
        const Score& s = it->second.score;
        const auto risky = [](bool bad) { return bad ? "<td class=\"bad\">" : "<td>"; };
        o << "<tr data-risk=\"" << escape(name) << "\"" << (emphasised(name) ? " class=\"em\"" : "")
          << "><td class=\"name\">" << swatch(policy_style(name)) << escape(name)
          << (is_causal(name) ? "" : " <span class=\"tag\">bound</span>") << "</td>"
          << risky(s.jobs_oom_killed > 0) << percent(s.jobs_oom_killed_share()) << "</td><td>"
          << count(s.jobs_oom_killed) << " of " << count(s.jobs) << "</td>"
          << risky(s.oom_kills > 0) << count(s.oom_kills) << "</td><td>"
          << fixed(s.oom_kills_per_job(), 2) << "</td><td>" << percent(s.cpu.over_limit_share())
          << "</td><td>" << percent(s.cpu.fulfilment()) << "</td><td>"
          << fixed(s.resizes_per_pod_hour(), 2) << "</td>";
        for (const bool cpu : {true, false}) {
            if (!vpa) {
                o << "<td>" << readable(resource(s, cpu).allocated / unit(cpu) / kHour) << "</td>";
            } else if (name == "vpa") {
                o << "<td class=\"dim\">—</td>";
            } else {
                const double x = r.reduction(name, "vpa", cpu ? "cpu" : "memory");
                o << "<td class=\""
                  << (x > 0.0005    ? "good"
                      : x < -0.0005 ? "bad"
                                    : "")
                  << "\">" << percent(x) << "</td>";
            }
        }
        o << "</tr>\n";
    }
    o << "</tbody></table></div>\n<p class=\"small\">An OOM kill is memory usage over the memory "
         "limit: one when usage "
      << "crosses it, and one at each restart (CrashLoopBackOff) while it stays over; a killed job "
         "loses its progress. "
      << "Throttled: the share of samples whose CPU usage is over the CPU limit. Fulfilment: the "
         "share of samples whose "
      << "CPU usage is at most the request. Resizes per pod-hour: in-place resizes over the "
         "executions' time."
      << (vpa ? " Less than vpa: 1 − the policy's requests over time / vpa's (negative: more)."
              : "")
      << "</p>\n";
    return o.str();
}

// How phase's savings compare with the bounds and the other baselines.
std::vector<std::string> comparison_notes(const Report& r) {
    const double target = r.options.target_fulfilment;
    std::vector<std::string> notes;
    if (has(r, "perfect")) {
        const Score& perfect_score = r.results.at("perfect").score;
        for (const bool c : {true, false}) {
            const char* res = c ? "cpu" : "memory";
            const double perfect = r.reduction("perfect", "vpa", res),
                         got = r.reduction("phase", "vpa", res);
            if (!(perfect > 0)) continue;
            std::string note =
                "phase gets <b>" + percent(got / perfect, 0) + "</b> of the " +
                percent(perfect, 0) + " " + resource_name(c) +
                " saving that <i>perfect</i> (the next sample's usage) has against vpa";
            // A bound that falls short of the target saves what it does not provide.
            const double f = resource(perfect_score, c).fulfilment();
            if (target > 0 && f < target - 0.02)
                note +=
                    " (but perfect met only " + percent(f) + " of " + resource_name(c) + " demand)";
            notes.push_back(note);
        }
    }
    if (has(r, "oracle")) {
        notes.push_back(
            "phase allocates " + signed_percent(-r.reduction("phase", "oracle", "cpu")) +
            " CPU and " + signed_percent(-r.reduction("phase", "oracle", "memory")) +
            " memory against <i>oracle</i> (the same policy told each phase in advance)");
    }
    for (const char* baseline : {"vpa-updater", "vpa-warm", "window", "krr"}) {
        if (!has(r, baseline)) continue;
        notes.push_back("against <i>" + std::string(baseline) + "</i>: " +
                        signed_percent(-r.reduction("phase", baseline, "cpu")) + " CPU, " +
                        signed_percent(-r.reduction("phase", baseline, "memory")) + " memory");
    }
    return notes;
}

std::string model_line(const Report& r) {
    if (!r.model) return "";
    const model::PhaseModel& m = *r.model;
    std::ostringstream o;
    o << "<p class=\"small\">Phase model" << (r.folds.size() > 1 ? " (the last fold's)" : "")
      << ": " << m.phases() << " phases over " << m.crbm.n_hid << " hidden units, history "
      << m.crbm.n_his << ", features ";
    for (std::size_t i = 0; i < m.features.size(); ++i)
        o << (i ? ", " : "") << "<code>" << escape(m.features[i]) << "</code>";
    if (m.training) o << "; trained on " << count(m.training->executions) << " executions";
    o << ". Actuation delay " << r.options.settings.actuation.delay << " sample(s), seed "
      << r.options.seed << ".</p>\n";
    return o.str();
}

std::string headline_section(const Report& r) {
    std::ostringstream o;
    o << "<header>\n<h1>phasescale: what each provisioning policy risks and allocates</h1>\n"
      << lead_paragraph(r) << report_notes(r);
    const bool versus = has(r, "phase") && has(r, "vpa");
    if (versus) o << key_findings(r);
    if (!r.policies.empty())
        o << "<h2 class=\"risk\">Risk and savings per policy</h2>\n" << risk_table(r);
    if (versus) {
        const auto notes = comparison_notes(r);
        if (!notes.empty()) {
            o << "<ul class=\"notes\">";
            for (const auto& n : notes) o << "<li>" << n << "</li>";
            o << "</ul>\n";
        }
    }
    o << model_line(r) << "</header>\n";
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// 2. The summary table

std::string summary_section(const Report& r) {
    std::vector<std::string> baselines;
    for (const char* b : {"vpa", "vpa-updater", "vpa-warm", "window"})
        if (has(r, b)) baselines.push_back(b);
    const double target = r.options.target_fulfilment;
    const int span = 4 + static_cast<int>(baselines.size());

    std::ostringstream o;
    o << "<section>\n<h2>Summary</h2>\n<div class=\"scroll\"><table "
         "class=\"summary\">\n<thead><tr><th rowspan=\"2\">policy</th>"
      << "<th colspan=\"" << span - 1 << "\" class=\"group\">CPU</th><th colspan=\"" << span
      << "\" class=\"group\">memory</th>"
      << "<th rowspan=\"2\">resizes</th><th rowspan=\"2\">unknown-phase<br>samples</th></tr>\n<tr>";
    for (const bool cpu : {true, false}) {
        o << "<th class=\"first\">allocated<br>" << (cpu ? "core-hours" : "GiB-hours")
          << "</th><th>fulfil&shy;ment</th>";
        for (const auto& b : baselines) o << "<th>vs<br>" << escape(b) << "</th>";
        if (!cpu) o << "<th>OOM<br>kills</th>";
        o << "<th>margin</th>";
    }
    o << "</tr></thead>\n<tbody>\n";

    for (const std::string& name : r.policies) {
        const auto it = r.results.find(name);
        if (it == r.results.end()) continue;
        const PolicyResult& p = it->second;
        o << "<tr" << (emphasised(name) ? " class=\"em\"" : "") << "><td class=\"name\">"
          << swatch(policy_style(name)) << escape(name)
          << (is_causal(name) ? "" : " <span class=\"tag\">bound</span>") << "</td>";
        for (const bool cpu : {true, false}) {
            const ResourceScore& s = resource(p.score, cpu);
            const double f = s.fulfilment();
            o << "<td class=\"first\">" << readable(s.allocated / unit(cpu) / kHour) << "</td><td"
              << (target > 0 && f < target - 0.02 ? " class=\"bad\"" : "") << ">" << percent(f)
              << "</td>";
            for (const auto& b : baselines) {
                if (b == name) {
                    o << "<td class=\"dim\">—</td>";
                    continue;
                }
                const double x = r.reduction(name, b, cpu ? "cpu" : "memory");
                o << "<td class=\""
                  << (x > 0.0005    ? "good"
                      : x < -0.0005 ? "bad"
                                    : "")
                  << "\">" << percent(x) << "</td>";
            }
            if (!cpu)
                o << "<td" << (p.score.oom_kills ? " class=\"bad\"" : "") << ">"
                  << count(p.score.oom_kills) << "</td>";
            std::string folds;
            for (std::size_t f = 0; f < p.margins.size(); ++f)
                folds +=
                    (f ? ", " : "") + signed_percent(cpu ? p.margins[f].cpu : p.margins[f].memory);
            o << "<td title=\"per fold: " << escape(folds) << "\">"
              << signed_percent(mean_margin(p, cpu)) << "</td>";
        }
        o << "<td>" << count(p.score.resizes) << "</td><td>" << count(p.score.unknown_phase_samples)
          << "</td></tr>\n";
    }
    o << "</tbody></table></div>\n<p class=\"small\">Allocated: the request integrated over the "
      << held_out_prefix(r) << "executions' time. "
      << "Fulfilment: the share of samples whose usage is at most the request. \"vs X\": 1 − "
         "allocated / X's allocated "
      << "(positive: less than X). Margin: the safety margin on top of the policy's estimate"
      << (r.folds.size() > 1 ? ", the mean over folds (hover for each fold's)" : "")
      << ". <i>bound</i>: sees each sample before it allocates (not causal).</p>\n";

    // Per-container detail, folded away.
    if (!r.containers.empty() && has(r, "phase") && has(r, "vpa")) {
        o << "<details><summary>Per execution: phase against vpa</summary>\n<table "
             "class=\"detail\"><thead><tr><th>execution</th>"
          << "<th>fold</th><th>samples</th><th>length</th><th>CPU vs vpa</th><th>CPU "
             "fulfilment<br>phase / vpa</th>"
          << "<th>memory vs vpa</th><th>memory fulfilment<br>phase / vpa</th><th>OOM "
             "kills<br>phase / vpa</th></tr></thead><tbody>\n";
        for (const ContainerResult& c : r.containers) {
            const auto ph = c.replays.find("phase"), vp = c.replays.find("vpa");
            if (ph == c.replays.end() || vp == c.replays.end()) continue;
            const Score &a = ph->second.score, &b = vp->second.score;
            const auto cut = [](double x, double base) {
                return base > 0 ? 1 - x / base : std::nan("");
            };
            const auto d = sample_durations(c.container.timestamps);
            double seconds = 0;
            for (const double x : d) seconds += x;
            o << "<tr><td class=\"name\">" << escape(c.container.id) << "</td><td>" << c.fold
              << "</td><td>" << count(c.container.usage.size()) << "</td><td>" << duration(seconds)
              << "</td><td>" << percent(cut(a.cpu.allocated, b.cpu.allocated)) << "</td><td>"
              << percent(a.cpu.fulfilment()) << " / " << percent(b.cpu.fulfilment()) << "</td><td>"
              << percent(cut(a.memory.allocated, b.memory.allocated)) << "</td><td>"
              << percent(a.memory.fulfilment()) << " / " << percent(b.memory.fulfilment())
              << "</td><td>" << a.oom_kills << " / " << b.oom_kills << "</td></tr>\n";
        }
        o << "</tbody></table></details>\n";
    }
    o << "</section>\n";
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// 3. Trade-off curves: allocation against fulfilment as the margin sweeps

std::string tradeoff_chart(const Report& r, bool cpu, const std::string& id) {
    const std::string res = resource_name(cpu);
    // Relative to vpa's allocation at its calibrated margins when there is one, else absolute.
    double base = 0;
    if (has(r, "vpa")) base = resource(r.results.at("vpa").score, cpu).allocated;
    const bool relative = base > 0;
    const double divide = relative ? base : unit(cpu) * kHour;
    const double target = r.options.target_fulfilment;

    struct Line {
        std::string policy;
        std::vector<std::pair<double, double>> points;  // fulfilment, allocation
        std::vector<double> margins;
        std::pair<double, double> calibrated;
    };
    std::vector<Line> lines;
    for (const std::string& name : drawing_order(r.policies)) {
        const auto it = r.results.find(name);
        if (it == r.results.end()) continue;
        Line l;
        l.policy = name;
        std::vector<TradeoffPoint> sweep = it->second.tradeoff;
        std::stable_sort(sweep.begin(), sweep.end(),
                         [](const auto& a, const auto& b) { return a.margin < b.margin; });
        for (const TradeoffPoint& t : sweep) {
            const ResourceScore& s = cpu ? t.cpu : t.memory;
            l.points.push_back({s.fulfilment(), s.allocated / divide});
            l.margins.push_back(t.margin);
        }
        const ResourceScore& s = resource(it->second.score, cpu);
        l.calibrated = {s.fulfilment(), s.allocated / divide};
        lines.push_back(std::move(l));
    }

    // Fulfilment from a little below the target (or the lowest operating point) to 100%.
    double lo = 0.8;
    if (target > 0) lo = std::min(lo, target - 0.1);
    for (const Line& l : lines) lo = std::min(lo, l.calibrated.first - 0.02);
    lo = std::clamp(std::floor(lo * 20) / 20, 0.0, 0.95);
    // Allocation up to what the visible points need, without letting a far-off curve squash the
    // rest.
    double top = relative ? 1.2 : 0, calibrated_top = 0;
    for (const Line& l : lines) calibrated_top = std::max(calibrated_top, l.calibrated.second);
    double visible_top = calibrated_top;
    for (const Line& l : lines)
        for (const auto& [f, a] : l.points)
            if (f >= lo) visible_top = std::max(visible_top, a);
    top =
        std::max(top, std::min(visible_top, std::max(relative ? 2.0 : 0.0, 1.3 * calibrated_top)));
    top = nice_ceiling(top * 1.04, 6);

    Svg svg(id, 640, 420, 64, 16, 16, 46, res + ": allocation against fulfilment");
    // A little room right of 100%, where the bounds and large margins pile up.
    const Scale x = svg.x(lo, 1 + (1 - lo) * 0.025), y = svg.y(0, top);
    svg.axes({x,
              "fulfilment (share of " + held_out_prefix(r) + "samples whose " + res +
                  " usage ≤ request)",
              6, percent_tick},
             {y,
              relative ? res + " allocated, relative to vpa at its " + margin_kind(r) + " margin"
                       : res + (cpu ? " core-hours" : " GiB-hours"),
              6, relative ? percent_tick : nullptr});
    if (target > 0 && target > lo) {
        svg.line(x(target), svg.top(), x(target), svg.bottom(),
                 Style().stroke("#444").width(1).dash("4 4"));
        svg.text(x(target) - 4, svg.top() + 12, "target " + percent(target, 0), "end", "note");
    }
    if (relative && top >= 1)
        svg.line(svg.left(), y(1), svg.right(), y(1),
                 Style().stroke("#d62728").width(1).opacity(0.35));
    svg.begin_clip();
    for (const Line& l : lines) {
        const PolicyStyle ps = policy_style(l.policy);
        std::vector<std::pair<double, double>> p;
        for (const auto& [f, a] : l.points) p.push_back({x(f), y(a)});
        svg.polyline(p, Style()
                            .stroke(ps.colour)
                            .width(ps.width)
                            .opacity(emphasised(l.policy) ? 1 : 0.85)
                            .dash(ps.dash)
                            .policy(l.policy));
        for (std::size_t i = 0; i < l.points.size(); ++i) {
            const auto [f, a] = l.points[i];
            svg.circle(x(f), y(a), emphasised(l.policy) ? 2.8 : 2.2,
                       Style().fill(ps.colour).policy(l.policy),
                       l.policy + ", margin " + signed_percent(l.margins[i]) + ": fulfilment " +
                           percent(f) + ", allocated " +
                           (relative ? percent(a) + " of vpa" : readable(a)));
        }
    }
    for (const Line& l : lines) {
        const PolicyStyle ps = policy_style(l.policy);
        const auto [f, a] = l.calibrated;
        svg.circle(x(f), y(a), emphasised(l.policy) ? 6.5 : 5,
                   Style().fill(ps.colour).stroke("#fff").width(1.8).policy(l.policy),
                   l.policy + " at its " + margin_kind(r) + " margin: fulfilment " + percent(f) +
                       ", allocated " + (relative ? percent(a) + " of vpa" : readable(a)));
        // vpa's name above right of its dot, phase's below left, so that the two never collide.
        if (emphasised(l.policy) && f >= lo && a <= top) {
            if (l.policy == "vpa")
                svg.text(x(f) + 8, y(a) - 8, l.policy, "start", "label", ps.colour);
            else
                svg.text(x(f) - 8, y(a) + 17, l.policy, "end", "label", ps.colour);
        }
    }
    svg.end_clip();
    return svg.finish();
}

std::string tradeoff_section(const Report& r) {
    std::ostringstream o;
    o << "<section>\n<h2>Trade-off: allocation against fulfilment</h2>\n<p>Each line sweeps one "
         "policy's safety margin "
      << (r.folds.size() > 1 ? "(the same for every fold: " : "(");
    for (std::size_t i = 0; i < r.options.tradeoff_margins.size(); ++i)
        o << (i ? ", " : "") << signed_percent(r.options.tradeoff_margins[i]);
    o << ") over the " << held_out_prefix(r)
      << "executions; the large dots are the policies at their " << margin_kind(r)
      << " margins (the summary table). "
      << "Lower is better at any fulfilment: read the curves at the fulfilment you want.";
    if (has(r, "vpa")) o << " 100% is what vpa allocates at its " << margin_kind(r) << " margin.";
    o << " Hover a dot for its numbers.</p>\n"
      << policy_legend(r.policies) << "<div class=\"row\">" << tradeoff_chart(r, true, "to-cpu")
      << tradeoff_chart(r, false, "to-mem") << "</div>\n</section>\n";
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// 4. Usage against allocation over time

// Samples cut into at most kMaxPoints buckets: each bucket's first sample.
std::vector<std::size_t> bucket_starts(std::size_t n) {
    const std::size_t size = std::max<std::size_t>(1, (n + kMaxPoints - 1) / kMaxPoints);
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < n; i += size) starts.push_back(i);
    return starts;
}

// The maximum of each bucket, so that no peak is lost.
template <typename Value>
std::vector<double> bucket_max(const std::vector<std::size_t>& starts, std::size_t n, Value value) {
    std::vector<double> out;
    out.reserve(starts.size());
    for (std::size_t b = 0; b < starts.size(); ++b) {
        const std::size_t end = b + 1 < starts.size() ? starts[b + 1] : n;
        double m = value(starts[b]);
        for (std::size_t i = starts[b] + 1; i < end; ++i) m = std::max(m, value(i));
        out.push_back(m);
    }
    return out;
}

// The most frequent phase of each bucket (ties to the lowest; -1 is no phase).
std::vector<int> bucket_phase(const std::vector<std::size_t>& starts,
                              const std::vector<int>& phases, std::size_t n) {
    std::vector<int> out;
    for (std::size_t b = 0; b < starts.size(); ++b) {
        const std::size_t end = b + 1 < starts.size() ? starts[b + 1] : n;
        std::map<int, std::size_t> seen;
        for (std::size_t i = starts[b]; i < end; ++i) ++seen[i < phases.size() ? phases[i] : -1];
        int best = -1;
        std::size_t most = 0;
        for (const auto& [p, k] : seen)
            if (k > most) best = p, most = k;
        out.push_back(best);
    }
    return out;
}

// A step line: value ys[i] from xs[i] to xs[i + 1] (the last to x_end), in pixels.
std::string step_path(const std::vector<double>& xs, double x_end, const std::vector<double>& ys,
                      const Scale& sx, const Scale& sy, bool area) {
    if (xs.empty()) return "";
    std::string d = "M";
    d += px(sx(xs[0]));
    d += ',';
    d += px(area ? sy.r0 : sy(ys[0]));
    if (area) d += "V" + px(sy(ys[0]));
    std::string last_y = px(sy(ys[0]));
    for (std::size_t i = 1; i < xs.size(); ++i) {
        const std::string py = px(sy(ys[i]));
        if (py == last_y) continue;
        d += "H" + px(sx(xs[i])) + "V" + py;
        last_y = py;
    }
    d += "H" + px(sx(x_end));
    if (area) d += "V" + px(sy.r0) + "Z";
    return d;
}

// Usage stays readable: the axis holds the usage and what the policies allocate, but no higher
// than this many times the usage's peak, so that one policy's outlier cannot flatten the rest;
// lines above it are clipped and marked where they leave the plot.
constexpr double kAxisHeadroom = 3;

// One container's time axis: the buckets' starts, in minutes (under two hours) or hours.
struct TimeAxis {
    std::vector<std::size_t> starts;
    std::vector<double> xs;  // each bucket's start
    double t0 = 0, unit = 60, end = 0;
    bool minutes = true;
    double at(double timestamp) const { return (timestamp - t0) / unit; }
    const char* name() const { return minutes ? "min" : "h"; }
};

TimeAxis time_axis(const Container& k, std::size_t n) {
    TimeAxis t;
    const auto durations = sample_durations(k.timestamps);
    t.t0 = k.timestamps.front();
    const double seconds = k.timestamps[n - 1] + std::max(durations[n - 1], 1e-9) - t.t0;
    t.minutes = seconds < 2 * kHour;
    t.unit = t.minutes ? 60 : kHour;
    t.end = seconds / t.unit;
    t.starts = bucket_starts(n);
    for (const std::size_t s : t.starts) t.xs.push_back(t.at(k.timestamps[s]));
    return t;
}

bool distinct_memory_limit(const Replay& r) {
    for (const policy::Allocation& a : r.allocations)
        if (a.limit.memory > 0 && a.limit.memory != a.request.memory) return true;
    return false;
}

// What one policy allocated for one resource, in the plot's unit.
struct PolicyLines {
    std::vector<double> request;  // per bucket
    std::vector<double>
        limit;  // per bucket; memory only, and only where some limit differs from its request
    std::vector<double> decided;  // per sample, the requests after the starting allocation
};

std::map<std::string, PolicyLines> policy_lines(const ContainerResult& c,
                                                const std::vector<std::string>& policies, bool cpu,
                                                const TimeAxis& t, std::size_t n) {
    const double u = unit(cpu);
    // Every causal policy holds the starting allocation until its first decision takes effect.
    const double original = (cpu ? c.container.original.cpu : c.container.original.memory) / u;
    std::map<std::string, PolicyLines> lines;
    for (const std::string& p : policies) {
        const auto it = c.replays.find(p);
        if (it == c.replays.end() || it->second.allocations.size() < n) continue;
        const auto& a = it->second.allocations;
        const auto request = [&](std::size_t i) {
            return (cpu ? a[i].request.cpu : a[i].request.memory) / u;
        };
        PolicyLines& l = lines[p];
        l.request = bucket_max(t.starts, n, request);
        if (!cpu && distinct_memory_limit(it->second))
            l.limit =
                bucket_max(t.starts, n, [&](std::size_t i) { return policy::oom_line(a[i]) / u; });
        std::size_t first = 0;
        while (first < n && request(first) == original) ++first;
        for (std::size_t i = first; i < n; ++i) l.decided.push_back(request(i));
    }
    return lines;
}

// The top of the value axis: the usage, the policies' decisions but their rare spikes (the 99th
// percentile), and the starting allocation when it is not far above the rest, all at most
// kAxisHeadroom times the usage's peak.
double axis_top(const std::vector<double>& usage, const std::map<std::string, PolicyLines>& lines,
                double original) {
    const double peak = *std::max_element(usage.begin(), usage.end());
    double wanted = peak;
    for (const auto& [p, l] : lines) {
        if (!l.decided.empty()) wanted = std::max(wanted, model::quantile(l.decided, 0.99));
        if (!l.limit.empty()) wanted = std::max(wanted, model::quantile(l.limit, 0.99));
    }
    if (!lines.empty() && original <= 1.5 * wanted) wanted = std::max(wanted, original);
    if (peak > 0) wanted = std::min(wanted, kAxisHeadroom * peak);
    return nice_ceiling(wanted * 1.05, 5);
}

// An upward triangle on the top edge where a line leaves the plot, so that a clipped line does
// not read as one that stops; one per stretch above the axis (none closer than 10 px).
void mark_clipped(Svg& svg, const Scale& x, const TimeAxis& t, const std::vector<double>& values,
                  double top, const std::string& policy, const std::string& what) {
    const std::string colour = policy_style(policy).colour;
    double last = -1e9;
    for (std::size_t b = 0; b < values.size(); ++b) {
        if (values[b] <= top || (b > 0 && values[b - 1] > top)) continue;
        double highest = values[b];
        for (std::size_t e = b; e < values.size() && values[e] > top; ++e)
            highest = std::max(highest, values[e]);
        const double p = x(t.xs[b]);
        if (p - last < 10) continue;
        last = p;
        const double y = svg.top();
        svg.polygon({{p - 5, y + 8}, {p + 5, y + 8}, {p, y}},
                    Style().fill(colour).stroke("#fff").width(0.8).css("clipped").policy(policy),
                    policy + " " + what + " above the axis from " + readable(t.xs[b]) + " " +
                        t.name() + ": up to " + readable(highest));
    }
}

std::string cross(double cx, double cy, double r) {
    std::string h;
    for (const double d : {-1.0, 1.0})
        h += "<line x1=\"" + px(cx - r) + "\" y1=\"" + px(cy - d * r) + "\" x2=\"" + px(cx + r) +
             "\" y2=\"" + px(cy + d * r) + "\" stroke=\"#c62828\" stroke-width=\"2\"/>";
    return h;
}

// A ringed cross on the killed policy's line at the sample of each OOM kill.
void mark_oom_kills(Svg& svg, const Scale& x, const Scale& y, const TimeAxis& t,
                    const ContainerResult& c, const std::string& policy, bool cpu) {
    const auto it = c.replays.find(policy);
    if (it == c.replays.end()) return;
    const Replay& r = it->second;
    const Container& k = c.container;
    const std::string colour = policy_style(policy).colour;
    for (const std::size_t i : r.oom_kills) {
        if (i >= r.allocations.size() || i >= k.usage.size() || i >= k.timestamps.size()) continue;
        const policy::Allocation& a = r.allocations[i];
        const double value = (cpu ? a.request.cpu : policy::oom_line(a)) / unit(cpu);
        const double cx = x(t.at(k.timestamps[i])),
                     cy = std::clamp(y(value), svg.top(), svg.bottom());
        const std::string title = policy + ": OOM kill at " + readable(t.at(k.timestamps[i])) +
                                  " " + t.name() + ", memory " +
                                  readable(k.usage[i].memory / kGiB) + " GiB over its limit " +
                                  readable(policy::oom_line(a) / kGiB) + " GiB";
        svg.raw("<g class=\"oom-kill\" data-policy=\"" + escape(policy) + "\"><title>" +
                escape(title) + "</title><circle cx=\"" + px(cx) + "\" cy=\"" + px(cy) +
                "\" r=\"5.5\" fill=\"#fff\" stroke=\"" + colour + "\" stroke-width=\"2\"/>" +
                cross(cx, cy, 3) + "</g>\n");
    }
}

// The execution's phases as bands behind everything.
void draw_phase_bands(Svg& svg, const Scale& x, const TimeAxis& t, const Container& k,
                      std::size_t n) {
    const auto phases = bucket_phase(t.starts, k.known_phases, n);
    for (std::size_t b = 0; b < phases.size();) {
        std::size_t e = b + 1;
        while (e < phases.size() && phases[e] == phases[b]) ++e;
        if (phases[b] >= 0) {
            const double from = t.xs[b], to = e < t.xs.size() ? t.xs[e] : t.end;
            svg.rect(x(from), svg.top(), x(to) - x(from), svg.bottom() - svg.top(),
                     Style().fill(phase_colour(phases[b])).opacity(0.33),
                     "phase " + std::to_string(phases[b]) + ": " + readable(from) + " to " +
                         readable(to) + " " + t.name());
        }
        b = e;
    }
}

// What the axis cuts off, in words.
std::string off_scale(const std::map<std::string, PolicyLines>& lines,
                      const std::vector<std::string>& policies, double original, double top) {
    std::string off;
    if (original > top && !lines.empty()) off = "the starting allocation " + readable(original);
    for (const std::string& p : policies) {
        const auto it = lines.find(p);
        if (it == lines.end()) continue;
        double m = it->second.decided.empty()
                       ? 0
                       : *std::max_element(it->second.decided.begin(), it->second.decided.end());
        if (!it->second.limit.empty())
            m = std::max(m, *std::max_element(it->second.limit.begin(), it->second.limit.end()));
        if (m > top) off += (off.empty() ? "" : ", ") + p + " up to " + readable(m);
    }
    return off;
}

std::string timeline_chart(const ContainerResult& c, const std::vector<std::string>& policies,
                           bool cpu, const std::string& id) {
    const Container& k = c.container;
    const std::size_t n = std::min(k.usage.size(), k.timestamps.size());
    const std::string title = std::string(resource_name(cpu)) + " of " + k.id;
    if (n == 0) {
        Svg svg(id, 1300, 250, 64, 14, 16, 40, title);
        svg.text(svg.width() / 2, svg.height() / 2, "no samples", "middle", "note");
        return svg.finish();
    }
    const TimeAxis t = time_axis(k, n);
    const double u = unit(cpu);
    const auto usage = bucket_max(
        t.starts, n, [&](std::size_t i) { return (cpu ? k.usage[i].cpu : k.usage[i].memory) / u; });
    const double original = (cpu ? k.original.cpu : k.original.memory) / u;
    const auto lines = policy_lines(c, policies, cpu, t, n);
    const double top = axis_top(usage, lines, original);

    // The axis top goes on the element for tests and tools to read.
    Svg svg(id, 1300, 250, 64, 14, 16, 40, title,
            " data-y-max=\"" + printf_string("%.6g", top) + "\"");
    const Scale x = svg.x(0, t.end), y = svg.y(0, top);
    svg.axes({x, std::string(t.minutes ? "minutes" : "hours") + " since the execution started", 10,
              nullptr},
             {y, std::string(resource_name(cpu)) + " (" + unit_name(cpu) + ")", 5, nullptr});
    svg.begin_clip();
    draw_phase_bands(svg, x, t, k, n);
    svg.path(step_path(t.xs, t.end, usage, x, y, true),
             Style().fill("#5f6b76").stroke("#4a545d").width(0.6).opacity(0.45), "usage");
    const auto order = drawing_order(policies);
    for (const std::string& p : order) {
        const auto it = lines.find(p);
        if (it == lines.end() || it->second.limit.empty()) continue;
        const PolicyStyle s = policy_style(p);
        svg.path(step_path(t.xs, t.end, it->second.limit, x, y, false),
                 Style().stroke(s.colour).width(1.2).opacity(0.75).dash("1 3").policy(p),
                 p + " memory limit");
    }
    for (const std::string& p : order) {
        const auto it = lines.find(p);
        if (it == lines.end()) continue;
        const PolicyStyle s = policy_style(p);
        svg.path(step_path(t.xs, t.end, it->second.request, x, y, false),
                 Style()
                     .stroke(s.colour)
                     .width(s.width)
                     .opacity(emphasised(p) ? 1 : 0.8)
                     .dash(s.dash)
                     .policy(p),
                 p + " request");
    }
    svg.end_clip();
    for (const std::string& p : order) {
        const auto it = lines.find(p);
        if (it == lines.end()) continue;
        mark_clipped(svg, x, t, it->second.request, top, p, "request");
        if (!it->second.limit.empty())
            mark_clipped(svg, x, t, it->second.limit, top, p, "memory limit");
    }
    for (const std::string& p : order) mark_oom_kills(svg, x, y, t, c, p, cpu);
    const std::string off = off_scale(lines, policies, original, top);
    if (!off.empty())
        svg.text(svg.right() - 4, svg.top() + 12, "off scale: " + off + " " + unit_name(cpu), "end",
                 "note");
    return svg.finish();
}

// The keys of the time plots beyond the policies: usage, kills, clipping, limits, phases.
std::string timeline_keys(const Report& r, std::size_t shown, int phases) {
    bool limits = false;
    for (std::size_t i = 0; i < shown; ++i)
        for (const auto& [p, replay] : r.containers[i].replays)
            if (has(r, p) && distinct_memory_limit(replay)) limits = true;
    std::string h =
        "<span class=\"ph\"><i class=\"band\" "
        "style=\"background:#5f6b76;opacity:.45\"></i>usage</span>"
        "<span class=\"ph\"><span class=\"oomkey\">⊗</span>OOM kill (on the killed policy's "
        "line)</span>"
        "<span class=\"ph\"><span class=\"clipkey\">▲</span>line above the axis (clipped)</span>";
    if (limits)
        h += "<span class=\"ph\"><i class=\"sw\" style=\"border-top:2px dotted #555\"></i>memory "
             "limit</span>";
    return h + phase_legend(phases);
}

std::string timeline_section(const Report& r, int phases) {
    std::ostringstream o;
    const std::size_t shown = std::min(kMaxContainers, r.containers.size());
    o << "<section>\n<h2>Usage against allocation over time</h2>\n<p>Usage (grey area) and each "
         "policy's request in "
      << "force at each sample (lines), with the execution's phases (with the whole trace known) "
         "as coloured bands";
    if (r.containers.size() > shown)
        o << "; the first " << shown << " of " << r.containers.size() << " " << held_out_prefix(r)
          << "executions";
    o << ". Each OOM kill is a ringed cross on the killed policy's line (on the memory plot its "
         "memory limit, on the CPU "
      << "plot its CPU request); a dotted line is a memory limit where it differs from the "
         "request. The value axis goes "
      << "up to at most " << fixed(kAxisHeadroom, 0)
      << " times the usage's peak, so that usage stays readable: a line "
      << "above it leaves the plot at a triangle and the plot names how high it goes. Long series "
         "keep each bucket's "
      << "maximum (at most " << kMaxPoints
      << " points a line). Every causal policy starts from the allocation the "
      << "execution ran with. Click a policy to hide it.";
    if (r.split && r.folds.size() > 1)
        o << " The bands show the phases of each execution's own fold's model (what <i>oracle</i> "
             "was told); each fold "
          << "numbers its phases independently, so a colour means the same phase only within one "
             "fold.";
    o << "</p>\n" << policy_legend(r.policies, timeline_keys(r, shown, phases));
    for (std::size_t i = 0; i < shown; ++i) {
        const ContainerResult& c = r.containers[i];
        o << "<div class=\"container\"><h3>" << escape(c.container.id)
          << " <span class=\"small\">fold " << c.fold << ", " << count(c.container.usage.size())
          << " samples";
        if (const auto ph = c.replays.find("phase"), vp = c.replays.find("vpa");
            ph != c.replays.end() && vp != c.replays.end()) {
            const Score &a = ph->second.score, &b = vp->second.score;
            if (b.cpu.allocated > 0 && b.memory.allocated > 0)
                o << "; phase against vpa: CPU "
                  << signed_percent(a.cpu.allocated / b.cpu.allocated - 1) << ", memory "
                  << signed_percent(a.memory.allocated / b.memory.allocated - 1);
        }
        o << "</span></h3>\n"
          << timeline_chart(c, r.policies, true, "tl-cpu-" + std::to_string(i))
          << timeline_chart(c, r.policies, false, "tl-mem-" + std::to_string(i)) << "</div>\n";
    }
    o << "</section>\n";
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// 5. Phases: box plots of the held-out samples by phase, and the model's statistics

struct Box {
    std::size_t n = 0;
    double p5 = 0, p25 = 0, p50 = 0, p75 = 0, p95 = 0;
};

Box box_of(const std::vector<double>& values) {
    Box b;
    b.n = values.size();
    if (values.empty()) return b;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    b.p5 = model::quantile(v, 0.05);
    b.p25 = model::quantile(v, 0.25);
    b.p50 = model::quantile(v, 0.5);
    b.p75 = model::quantile(v, 0.75);
    b.p95 = model::quantile(v, 0.95);
    return b;
}

// The index of `column` among the statistics' usage columns, or -1.
int usage_column(const model::PhaseStatistics& s, const std::string& column) {
    const auto it = std::find(s.usage_columns.begin(), s.usage_columns.end(), column);
    return it == s.usage_columns.end() ? -1 : static_cast<int>(it - s.usage_columns.begin());
}

// `marks`: per phase, what the phase policy allocates before its margin (NaN: none).
std::string box_chart(const std::vector<Box>& boxes, const std::vector<double>& marks, bool cpu,
                      const std::string& id) {
    Svg svg(id, 640, 340, 64, 16, 16, 56, std::string(resource_name(cpu)) + " by phase");
    double top = 0;
    for (const Box& b : boxes)
        if (b.n) top = std::max(top, b.p95);
    for (const double m : marks)
        if (std::isfinite(m)) top = std::max(top, m);
    top = nice_ceiling(top * 1.05, 5);
    const int k = static_cast<int>(boxes.size());
    const Scale y = svg.y(0, top);
    // Categories: an x axis without ticks; the phases are labelled below.
    svg.axes({svg.x(0, 0), "phase (samples)", 0, nullptr},
             {y, std::string(resource_name(cpu)) + " (" + unit_name(cpu) + ")", 5, nullptr});
    const double slot = (svg.right() - svg.left()) / std::max(1, k);
    for (int p = 0; p < k; ++p) {
        const Box& b = boxes[static_cast<std::size_t>(p)];
        const double cx = svg.left() + slot * (p + 0.5), w = std::min(56.0, slot * 0.5);
        svg.text(cx, svg.bottom() + 16, "phase " + std::to_string(p), "middle");
        svg.text(cx, svg.bottom() + 30, "(" + count(b.n) + ")", "middle", "note");
        if (b.n == 0) continue;
        const std::string colour = phase_colour(p), dark = "#333";
        const std::string tip = "phase " + std::to_string(p) + ", " + count(b.n) + " samples: p5 " +
                                readable(b.p5) + ", p25 " + readable(b.p25) + ", median " +
                                readable(b.p50) + ", p75 " + readable(b.p75) + ", p95 " +
                                readable(b.p95) + " " + unit_name(cpu);
        svg.line(cx, y(b.p5), cx, y(b.p25), Style().stroke(dark).width(1.2));
        svg.line(cx, y(b.p75), cx, y(b.p95), Style().stroke(dark).width(1.2));
        svg.line(cx - w / 4, y(b.p5), cx + w / 4, y(b.p5), Style().stroke(dark).width(1.2));
        svg.line(cx - w / 4, y(b.p95), cx + w / 4, y(b.p95), Style().stroke(dark).width(1.2));
        svg.rect(cx - w / 2, y(b.p75), w, std::max(1.0, y(b.p25) - y(b.p75)),
                 Style().fill(colour).stroke(dark).width(1.2), tip);
        svg.line(cx - w / 2, y(b.p50), cx + w / 2, y(b.p50), Style().stroke(dark).width(2.4));
        const double m =
            p < static_cast<int>(marks.size()) ? marks[static_cast<std::size_t>(p)] : std::nan("");
        if (std::isfinite(m)) {
            svg.line(cx - w / 2 - 8, y(m), cx + w / 2 + 8, y(m),
                     Style().stroke(policy_style("phase").colour).width(2).dash("4 2"));
        }
    }
    return svg.finish();
}

std::string phases_section(const Report& r, int phases) {
    // Each fold trained its own model, and k-means numbers phases arbitrarily: phase 2 of one fold
    // need not be phase 2 of another. So the samples of every fold are labelled with the model the
    // report keeps (the last fold's, whose statistics the table shows).
    const bool relabel = r.model && r.split && r.folds.size() > 1;
    const int last_fold = static_cast<int>(r.folds.size()) - 1;
    std::vector<std::vector<double>> cpu(static_cast<std::size_t>(phases)),
        memory(static_cast<std::size_t>(phases));
    for (const ContainerResult& c : r.containers) {
        const Container& k = c.container;
        std::vector<int> labels = k.known_phases;
        if (relabel && c.fold != last_fold) {
            if (k.features.cols() != static_cast<Eigen::Index>(r.model->features.size()) ||
                k.features.rows() != static_cast<Eigen::Index>(k.usage.size()))
                continue;
            labels = model::predict_phases(*r.model, k.features).phases;
        }
        for (std::size_t i = 0; i < k.usage.size() && i < labels.size(); ++i) {
            const int p = labels[i];
            if (p < 0 || p >= phases) continue;
            cpu[static_cast<std::size_t>(p)].push_back(k.usage[i].cpu);
            memory[static_cast<std::size_t>(p)].push_back(k.usage[i].memory / kGiB);
        }
    }
    std::vector<Box> cpu_boxes, memory_boxes;
    for (int p = 0; p < phases; ++p) {
        cpu_boxes.push_back(box_of(cpu[static_cast<std::size_t>(p)]));
        memory_boxes.push_back(box_of(memory[static_cast<std::size_t>(p)]));
    }

    // The model's statistics: what `phase` allocates for each phase before its margin.
    const model::PhaseStatistics* stats =
        r.model && r.model->statistics ? &*r.model->statistics : nullptr;
    const policy::PhaseOptions& po = r.options.settings.phase;
    const int cpu_col = stats ? usage_column(*stats, po.cpu_column) : -1;
    const int mem_col = stats ? usage_column(*stats, po.memory_column) : -1;
    const auto pick = [](const model::Summary& s, double q) {
        return q >= 1 ? s.max : q >= 0.99 ? s.p99 : q >= 0.95 ? s.p95 : q >= 0.9 ? s.p90 : s.p50;
    };
    const auto q_name = [](double q) {
        return q >= 1 ? std::string("max") : "p" + fixed(100 * q, 0);
    };
    std::vector<double> cpu_marks(static_cast<std::size_t>(phases), std::nan("")),
        mem_marks = cpu_marks;
    if (stats) {
        for (int p = 0; p < phases && p < static_cast<int>(stats->phases.size()); ++p) {
            const auto& usage = stats->phases[static_cast<std::size_t>(p)].usage;
            if (cpu_col >= 0 && cpu_col < static_cast<int>(usage.size()))
                cpu_marks[static_cast<std::size_t>(p)] =
                    pick(usage[static_cast<std::size_t>(cpu_col)], po.cpu_quantile);
            if (mem_col >= 0 && mem_col < static_cast<int>(usage.size()))
                mem_marks[static_cast<std::size_t>(p)] =
                    pick(usage[static_cast<std::size_t>(mem_col)], po.memory_quantile) / kGiB;
        }
    }

    std::ostringstream o;
    o << "<section>\n<h2>Phases</h2>\n<p>CPU and memory of the " << held_out_prefix(r)
      << "samples, grouped by their phase (with the whole "
      << "trace known): boxes from the 25th to the 75th percentile, a thick line at the median, "
         "whiskers from the 5th to "
      << "the 95th percentile; the number of samples below each. ";
    if (relabel)
        o << "Each fold's model numbers its phases its own way, so every sample here is labelled "
             "by the last fold's model "
          << "(the one in the table), which trained on the other folds' executions: this describes "
             "the phases, it scores nothing. ";
    if (stats)
        o << "The dashed blue line is what the phase policy allocates for the phase before its "
             "margin: the model's "
          << q_name(po.cpu_quantile) << " of CPU and " << q_name(po.memory_quantile)
          << " of memory, from its training executions.";
    o << "</p>\n<div class=\"row\">" << box_chart(cpu_boxes, cpu_marks, true, "box-cpu")
      << box_chart(memory_boxes, mem_marks, false, "box-mem") << "</div>\n";

    if (stats) {
        std::size_t total = 0;
        for (const auto& s : stats->phases) total += s.samples;
        o << "<table class=\"detail\"><thead><tr><th>phase</th><th>training "
             "samples</th><th>share</th><th>samples in the boxes</th>"
          << "<th>CPU p50</th><th>CPU p95<br>(cores)</th><th>memory p50</th><th>memory "
             "p99<br>(GiB)</th><th>median visit</th></tr></thead><tbody>\n";
        for (std::size_t p = 0; p < stats->phases.size(); ++p) {
            const model::PhaseStats& s = stats->phases[p];
            const auto col = [&](int c, auto f) {
                return c >= 0 && c < static_cast<int>(s.usage.size())
                           ? f(s.usage[static_cast<std::size_t>(c)])
                           : std::nan("");
            };
            o << "<tr><td class=\"name\"><i class=\"band\" style=\"background:"
              << phase_colour(static_cast<int>(p)) << "\"></i>phase " << p << "</td><td>"
              << count(s.samples) << "</td><td>"
              << percent(total ? static_cast<double>(s.samples) / total : std::nan(""))
              << "</td><td>" << count(p < cpu.size() ? cpu[p].size() : 0) << "</td><td>"
              << readable(col(cpu_col, [](const model::Summary& x) { return x.p50; }))
              << "</td><td>"
              << readable(col(cpu_col, [](const model::Summary& x) { return x.p95; }))
              << "</td><td>"
              << readable(col(mem_col, [](const model::Summary& x) { return x.p50 / kGiB; }))
              << "</td><td>"
              << readable(col(mem_col, [](const model::Summary& x) { return x.p99 / kGiB; }))
              << "</td><td>" << readable(s.visit_samples.p50) << " samples"
              << (s.visit_seconds.count ? " (" + duration(s.visit_seconds.p50) + ")" : "")
              << "</td></tr>\n";
        }
        o << "</tbody></table>\n";
        if (!stats->sequences.empty()) {
            o << "<p class=\"small\">Most common phase sequences in training: ";
            for (std::size_t i = 0; i < stats->sequences.size() && i < 3; ++i) {
                const auto& q = stats->sequences[i];
                o << (i ? "; " : "");
                for (std::size_t j = 0; j < q.phases.size() && j < 16; ++j)
                    o << (j ? "→" : "") << q.phases[j];
                if (q.phases.size() > 16) o << "→…";
                o << " (" << q.executions << (q.executions == 1 ? " execution)" : " executions)");
            }
            o << ".</p>\n";
        }
    } else {
        o << "<p class=\"small\">The phase model carries no phase statistics.</p>\n";
    }
    o << "</section>\n";
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// The page

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#222;
background:#fafafa;margin:0}
main{max-width:1320px;margin:0 auto;padding:20px 16px 40px}
h1{font-size:26px;margin:8px 0 10px}h2{font-size:20px;margin:34px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 2px;font-family:ui-monospace,Menlo,Consolas,monospace}
.lead{font-size:15px;max-width:1100px}.key{font-size:18px;max-width:1100px}
.cards{display:flex;gap:14px;flex-wrap:wrap;margin:12px 0}
.card{background:#fff;border:1px solid #ddd;border-radius:8px;padding:10px 16px;min-width:180px}
.big{font-size:28px;font-weight:600}.good{color:#1a7f37}.bad{color:#c62828}.dim{color:#aaa}
.small,.notes{font-size:13px;color:#555}
table{border-collapse:collapse;background:#fff;font-variant-numeric:tabular-nums;margin:8px 0}
th,td{border-bottom:1px solid #e6e6e6;padding:4px 7px;text-align:right;white-space:nowrap}
th{font-weight:600;font-size:12px;color:#444;vertical-align:bottom;white-space:normal}
table.summary{font-size:13.5px}.scroll{overflow-x:auto}
th.group{text-align:center;border-bottom:2px solid #bbb}.first{border-left:2px solid #ddd}
td.name{text-align:left;font-weight:600}tr.em td{background:#f2f6fd}
.tag{font-size:11px;font-weight:400;color:#777;border:1px solid #ccc;border-radius:3px;
padding:0 3px}
.sw{display:inline-block;width:24px;height:0;vertical-align:middle;margin-right:6px}
.band{display:inline-block;width:14px;height:12px;vertical-align:middle;margin-right:5px;
border-radius:2px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:6px 0;font-size:13px;align-items:center}
.lg{cursor:pointer;user-select:none}.lg.em{font-weight:600}.lg.off{opacity:.35;
text-decoration:line-through}
.ph{color:#444}
.row{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e2e2e2;border-radius:4px;display:block;margin:4px 0;
max-width:100%;height:auto}
svg text{font-size:11px;fill:#444}svg .axis-title{font-size:12px;fill:#333}svg .note{font-size:11px;
fill:#777}
svg .label{font-size:12px;font-weight:600}
svg .note,svg .label{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.hidden{display:none}
.report-notes{background:#fff8e1;border:1px solid #f0d58c;border-radius:6px;padding:6px 14px;
margin:10px 0;max-width:1100px}
.report-notes ul{margin:4px 0;padding-left:20px}
h2.risk{margin-top:18px}
.oomkey{color:#c62828;font-size:16px;font-weight:700;margin-right:4px}.clipkey{font-size:11px;
margin-right:4px}
details{margin:10px 0}summary{cursor:pointer;color:#333}
code{font-size:12.5px}
)";

// Legend toggles: clicking a policy hides or shows its lines and dots in every chart.
constexpr const char* kScript = R"(
document.querySelectorAll('.lg').forEach(function(item){item.addEventListener('click',function(){
var p=item.getAttribute('data-policy'),off=!item.classList.contains('off');
document.querySelectorAll('[data-policy]').forEach(function(e){
if(e.getAttribute('data-policy')!==p)return;
if(e.classList.contains('lg'))e.classList.toggle('off',off);else e.classList.toggle('hidden',off);
});});});
)";

}  // namespace

std::string report_html(const Report& report) {
    int phases = report.model ? report.model->phases() : 0;
    for (const ContainerResult& c : report.containers)
        for (const int p : c.container.known_phases) phases = std::max(phases, p + 1);

    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>phasescale simulation report</title>\n<style>" << kStyle
      << "</style>\n</head>\n<body>\n<main>\n"
      << headline_section(report) << summary_section(report) << tradeoff_section(report)
      << timeline_section(report, phases) << phases_section(report, phases) << "</main>\n<script>"
      << kScript << "</script>\n</body>\n</html>\n";
    return o.str();
}

}  // namespace phasescale::sim
