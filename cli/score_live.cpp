// phasescale score-live: what pods of a live (test) cluster were allocated while a replay
// exporter served them a trace, scored by the simulator's own accounting (sim::Scorer), and how
// a live VerticalPodAutoscaler's recommendations compare with the simulator's VPA recommender
// (tests/vpa-compare/README.md).

#include "command.hpp"

#include <phasescale/control/quantity.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/policy/vpa.hpp>
#include <phasescale/sim/replay.hpp>
#include <phasescale/sim/report.hpp>

#include <replay.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phasescale::cli {
namespace {

using nlohmann::json;

struct ScoreLiveArgs {
    replay::Options replay;  // as the exporter was started
    double start = 0;        // unix time of the exporter's trace time 0
    std::string pods;        // pod watch events, JSON lines
    std::optional<double> from, to;
    std::string json_out;
    std::string served_trace;  // where to write the samples a VPA of the pods would get
    double resolution = 15;
    std::string vpa;        // VPA watch events, JSON lines
    std::string vpa_input;  // the samples the live VPA got, for the simulator's recommender
    double lag = 30;
};

// One observation of a pod: its spec's allocation and, once the node reports it, the status's.
struct PodEvent {
    double t = 0;
    std::string type, uid;
    std::optional<policy::Allocation> spec;
    std::optional<policy::Amount> status_requests;
};

// line 0: somewhere in the file.
[[noreturn]] void bad_line(const std::string& file, std::size_t line, const std::string& what) {
    throw UsageError(file + (line ? ":" + std::to_string(line) : "") + ": " + what);
}

double quantity(const json& j, const char* key, const std::string& file, std::size_t line) {
    if (!j.is_object() || !j.contains(key)) bad_line(file, line, std::string("no ") + key);
    const auto v = control::quantity_of(j.at(key));
    if (!v) bad_line(file, line, std::string("bad quantity for ") + key);
    return *v;
}

policy::Amount amount(const json& j, const std::string& file, std::size_t line) {
    return {quantity(j, "cpu", file, line), quantity(j, "memory", file, line)};
}

std::vector<json> read_json_lines(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw UsageError(path + ": cannot open");
    std::vector<json> out;
    std::string text;
    for (std::size_t line = 1; std::getline(in, text); ++line) {
        if (text.empty()) continue;
        try {
            out.push_back(json::parse(text));
        } catch (const json::exception& e) {
            bad_line(path, line, e.what());
        }
        if (!out.back().contains("t") || !out.back().at("t").is_number())
            bad_line(path, line, "no time \"t\"");
    }
    return out;
}

// The recorder's lines: {"t", "type", "pod", "uid", "requests", "limits", "status_requests"}.
std::map<std::string, std::vector<PodEvent>> read_pod_events(const std::string& path) {
    std::map<std::string, std::vector<PodEvent>> pods;
    std::size_t line = 0;
    for (const json& j : read_json_lines(path)) {
        ++line;
        for (const char* key : {"type", "pod", "uid"})
            if (!j.contains(key) || !j.at(key).is_string())
                bad_line(path, line, std::string("no ") + key + " (a string)");
        PodEvent e;
        e.t = j.at("t").get<double>();
        e.type = j.at("type").get<std::string>();
        e.uid = j.at("uid").get<std::string>();
        if (e.type != "DELETED") {
            e.spec = policy::Allocation{amount(j.value("requests", json()), path, line),
                                        amount(j.value("limits", json()), path, line)};
            if (j.contains("status_requests") && !j.at("status_requests").is_null())
                e.status_requests = amount(j.at("status_requests"), path, line);
        }
        pods[j.at("pod").get<std::string>()].push_back(std::move(e));
    }
    for (auto& [pod, events] : pods)
        std::stable_sort(events.begin(), events.end(),
                         [](const PodEvent& a, const PodEvent& b) { return a.t < b.t; });
    return pods;
}

bool same_requests(const policy::Amount& a, const policy::Amount& b) {
    return a.cpu == b.cpu && a.memory == b.memory;
}

// What the watch saw of one pod: resizes (spec changes of one UID), those the node then
// reported in the container's status, re-creations (a new UID) and deletions, in [from, to].
struct PodChanges {
    std::size_t resizes = 0, resizes_in_status = 0, recreations = 0, deletions = 0;
};

PodChanges changes_of(const std::vector<PodEvent>& events, double from, double to) {
    PodChanges c;
    const PodEvent* last = nullptr;  // the last event of a live pod
    for (std::size_t i = 0; i < events.size(); ++i) {
        const PodEvent& e = events[i];
        const bool inside = e.t >= from && e.t <= to;
        if (e.type == "DELETED") {
            c.deletions += inside;
            last = nullptr;
            continue;
        }
        if (last && last->uid != e.uid) c.recreations += inside;
        if (last && last->uid == e.uid && !same_requests(last->spec->request, e.spec->request) &&
            inside) {
            ++c.resizes;
            for (std::size_t k = i; k < events.size() && events[k].uid == e.uid; ++k)
                if (events[k].status_requests &&
                    same_requests(*events[k].status_requests, e.spec->request)) {
                    ++c.resizes_in_status;
                    break;
                }
        }
        last = &e;
    }
    return c;
}

// The spec in force at unix time t: the last event at or before it; none while no pod exists.
std::optional<policy::Allocation> in_force(const std::vector<PodEvent>& events, double t) {
    std::optional<policy::Allocation> a;
    for (const PodEvent& e : events) {
        if (e.t > t) break;
        a = e.type == "DELETED" ? std::nullopt : e.spec;
    }
    return a;
}

struct PodResult {
    sim::Score score;
    PodChanges changes;
    std::size_t samples_without_pod = 0;
};

// Scores the samples served to pod `i` in the window, each for the part of its interval inside
// the window, against the spec in force when it began (or the window did).
PodResult score_pod(const replay::Replay& r, std::size_t i, const std::vector<PodEvent>& events,
                    const ScoreLiveArgs& a) {
    const replay::PodTrace& p = r.pods()[i];
    const double speed = r.speed(), from = (*a.from - a.start) * speed,
                 to = (*a.to - a.start) * speed;
    std::optional<sim::Scorer> scorer;
    PodResult out;
    for (const replay::ServedSample& s : r.served(i, from, to)) {
        const double begin = std::max(s.trace_time, from), end = std::min(s.end, to);
        const auto alloc = in_force(events, a.start + begin / speed);
        if (!alloc) {
            ++out.samples_without_pod;
            continue;
        }
        if (!scorer) scorer.emplace(*alloc);
        scorer->add(begin, {p.cpu[s.index], p.memory[s.index]}, *alloc, end - begin);
    }
    if (scorer) out.score = scorer->score();
    out.changes = changes_of(events, *a.from, *a.to);
    // Resizes as the watch saw them: spec changes, not only those that outlived a sample.
    out.score.resizes = out.changes.resizes;
    return out;
}

json changes_json(const PodChanges& c) {
    return {{"resizes", c.resizes},
            {"resizes_in_status", c.resizes_in_status},
            {"recreations", c.recreations},
            {"deletions", c.deletions}};
}

// ------------------------------------------------------------------ the aggregate trace

// The column of an aggregate trace that says whose sample a row is (the pod's index).
constexpr const char* kContainerColumn = "container";

// The CPU cores pod `i` used on average over trace time [a, b], and its memory at b.
policy::Amount scraped(const replay::Replay& r, std::size_t i, double a, double b) {
    const replay::PodTrace& p = r.pods()[i];
    const auto served = r.served(i, a, b);
    double core_seconds = 0;
    for (std::size_t k = 0; k < served.size(); ++k) {
        const double begin = std::max(a, served[k].trace_time);
        const double end = k + 1 < served.size() ? served[k + 1].trace_time : b;
        core_seconds += p.cpu[served[k].index] * std::max(0.0, end - begin);
    }
    const double memory = served.empty() ? 0 : p.memory[served.back().index];
    return {b > a ? core_seconds / (b - a) : 0, memory};
}

// What metrics-server reports every `resolution` wall seconds for all the pods, as one
// execution "aggregate" in unix time, each row naming its pod (kContainerColumn): the samples a
// VPA's aggregate state of the workload gets. Pods of one scrape are a millisecond apart, so
// that the rows stay in time order.
void write_served_trace(const replay::Replay& r, const ScoreLiveArgs& a) {
    OutputFile out(a.served_trace);
    std::fprintf(out.stream(), "pod.id,timestamp,cpu.usage.cores,mem.working.set,%s\n",
                 kContainerColumn);
    const double speed = r.speed();
    for (double w = *a.from + a.resolution; w <= *a.to; w += a.resolution) {
        for (std::size_t i = 0; i < r.pods().size(); ++i) {
            const double b = (w - a.start) * speed;
            const policy::Amount u = scraped(r, i, b - a.resolution * speed, b);
            std::fprintf(out.stream(), "aggregate,%.3f,%.6f,%.0f,%zu\n", w + 0.001 * i, u.cpu,
                         u.memory, i);
        }
    }
    out.commit();
}

// ------------------------------------------------------------------ VPA fidelity

// A recommendation at time t: target, lowerBound, upperBound (the order of kKeys).
struct Target {
    double t = 0;
    std::array<policy::Amount, 3> values;
};
constexpr std::array<const char*, 3> kKeys = {"target", "lowerBound", "upperBound"};

int bucket_distance(const policy::ExponentialBuckets& b, double x, double y) {
    return std::abs(b.find(x) - b.find(y));
}

// The targets of the simulator's VPA recommender (policy::VpaRecommender, what `simulate
// --policy vpa` runs, at its v1.8.1 defaults) after each sample of a trace of one execution, as
// the live recommender got the samples: no OOM kill (KWOK has none), no request in play. With a
// column kContainerColumn each sample is that container's (one aggregate state of all pods,
// a ContainerState per pod, as upstream's).
std::vector<Target> simulated_targets(const std::string& path) {
    model::TraceOptions options;
    options.columns = {"cpu.usage.cores", "mem.working.set"};
    const std::vector<std::string> header = model::read_header(path);
    const bool by_container =
        std::find(header.begin(), header.end(), kContainerColumn) != header.end();
    if (by_container) options.columns.push_back(kContainerColumn);
    const model::Trace trace = model::read_trace({path}, options);
    if (trace.executions.size() != 1)
        throw UsageError(path + ": want one execution (the VPA's aggregate), not " +
                         std::to_string(trace.executions.size()));
    const model::Execution& e = trace.executions.front();
    policy::VpaRecommender vpa;
    std::vector<Target> out;
    for (std::size_t k = 0; k < e.timestamps.size(); ++k) {
        policy::Sample s;
        s.timestamp = e.timestamps[k];
        s.usage = {e.values(static_cast<Eigen::Index>(k), 0),
                   e.values(static_cast<Eigen::Index>(k), 1)};
        if (by_container)
            vpa.select_container(
                static_cast<std::size_t>(e.values(static_cast<Eigen::Index>(k), 2)));
        vpa.observe(s);
        if (const auto r = vpa.recommendation())
            out.push_back({s.timestamp, {r->target, r->lower_bound, r->upper_bound}});
    }
    if (out.empty()) throw UsageError(path + ": no sample");
    return out;
}

// For every simulated target after a scrape (after the live VPA's first recommendation, up to
// `lag` seconds before the end), the distance in VPA histogram buckets to the nearest live target
// in force within `lag` seconds after it (the live recommender takes a sample in at its next loop).
json fidelity(const std::vector<json>& live_lines, const std::vector<Target>& simulated,
              const ScoreLiveArgs& a) {
    std::vector<Target> live;
    json last;
    for (const json& j : live_lines) {
        if (!j.contains("target") || j.at("target").is_null()) continue;
        Target t{j.at("t").get<double>(), {}};
        for (std::size_t v = 0; v < kKeys.size(); ++v)
            t.values[v] = amount(j.at(kKeys[v]), a.vpa, 0);
        live.push_back(t);
        last = j;
    }
    json out = {{"records", live.size()}, {"lag_seconds", a.lag}};
    if (live.empty()) return out;
    out["last"] = last;
    struct Stat {
        int max = 0;
        double sum = 0;
        std::size_t n = 0, within_one = 0;
        void add(int d) {
            max = std::max(max, d);
            sum += d;
            ++n;
            within_one += d <= 1;
        }
        json to_json() const {
            return {{"compared", n},
                    {"max_buckets", max},
                    {"mean_buckets", n ? sum / n : 0.0},
                    {"within_one_bucket_share", n ? static_cast<double>(within_one) / n : 1.0}};
        }
    };
    std::array<Stat, 3> cpu, memory;
    std::size_t l = 0;
    for (std::size_t i = 0; i < simulated.size(); ++i) {
        const Target& s = simulated[i];
        // The pods of one scrape come in together (a millisecond apart): their last sample.
        if (i + 1 < simulated.size() && simulated[i + 1].t - s.t < 0.5) continue;
        if (s.t < live.front().t || s.t > *a.to - a.lag) continue;
        while (l + 1 < live.size() && live[l + 1].t <= s.t) ++l;
        for (std::size_t v = 0; v < kKeys.size(); ++v) {
            int dc = std::numeric_limits<int>::max(), dm = dc;
            for (std::size_t k = l; k < live.size() && (k == l || live[k].t <= s.t + a.lag); ++k) {
                dc = std::min(dc, bucket_distance(policy::vpa_cpu_buckets(), live[k].values[v].cpu,
                                                  s.values[v].cpu));
                dm = std::min(dm, bucket_distance(policy::vpa_memory_buckets(),
                                                  live[k].values[v].memory, s.values[v].memory));
            }
            cpu[v].add(dc);
            memory[v].add(dm);
        }
    }
    // The target's keys at the top (the checks read them), each bound's under its name.
    out["cpu"] = cpu[0].to_json();
    out["memory"] = memory[0].to_json();
    for (std::size_t v = 1; v < kKeys.size(); ++v)
        out[kKeys[v]] = {{"cpu", cpu[v].to_json()}, {"memory", memory[v].to_json()}};
    return out;
}

// The live VPA's bounds over time: a pod whose request is outside [lowerBound, upperBound]
// (CPU or memory) is one the v1.8.1 updater updates, young or not.
struct Bounds {
    double t = 0;
    policy::Amount lower, upper;
};

std::vector<Bounds> read_bounds(const std::vector<json>& live_lines, const std::string& file) {
    std::vector<Bounds> out;
    for (const json& j : live_lines)
        if (j.contains("lowerBound") && !j.at("lowerBound").is_null() && j.contains("upperBound") &&
            !j.at("upperBound").is_null())
            out.push_back({j.at("t").get<double>(), amount(j.at("lowerBound"), file, 0),
                           amount(j.at("upperBound"), file, 0)});
    return out;
}

bool outside(const policy::Amount& request, const Bounds& b) {
    return request.cpu < b.lower.cpu || request.cpu > b.upper.cpu ||
           request.memory < b.lower.memory || request.memory > b.upper.memory;
}

// Whether the pod's request was outside `record`'s bounds at any time from `since` to the record.
bool outside_since(const std::vector<PodEvent>& events, const Bounds& record, double since) {
    const auto outside_at = [&](double t) {
        const auto alloc = in_force(events, t);
        return alloc && outside(alloc->request, record);
    };
    if (outside_at(since) || outside_at(record.t)) return true;
    for (const PodEvent& e : events)
        if (e.t > since && e.t < record.t && outside_at(e.t)) return true;
    return false;
}

// Seconds (on a 1 s grid) of the window the pod's request was outside the bounds in force, the
// longest such stretch, and at how many of the bounds' records within the window the request was
// outside the bounds just recorded at some time since the record before (the recommender wrote
// them then at the earliest): the updater can act within a second of the recommender's write,
// between two grid points, and before the recorder's watch delivers the write.
json outside_bounds(const std::vector<PodEvent>& events, const std::vector<Bounds>& bounds,
                    const ScoreLiveArgs& a) {
    double total = 0, longest = 0, stretch = 0;
    std::size_t b = 0;
    for (double t = *a.from; t < *a.to; t += 1) {
        while (b < bounds.size() && bounds[b].t <= t) ++b;
        const auto alloc = in_force(events, t);
        const bool out = b > 0 && alloc && outside(alloc->request, bounds[b - 1]);
        stretch = out ? stretch + 1 : 0;
        total += out;
        longest = std::max(longest, stretch);
    }
    std::size_t at_records = 0;
    for (std::size_t k = 0; k < bounds.size(); ++k) {
        const Bounds& record = bounds[k];
        if (record.t < *a.from || record.t >= *a.to) continue;
        at_records += outside_since(events, record, k > 0 ? bounds[k - 1].t : record.t);
    }
    return {{"seconds", total}, {"longest_seconds", longest}, {"at_records", at_records}};
}

// ------------------------------------------------------------------ the command

void print_table(const std::string& ns, const sim::Score& s, const PodChanges& c,
                 std::size_t pods) {
    std::printf("%-16s %5s %12s %12s %10s %12s %9s %8s %8s %11s\n", "namespace", "pods",
                "cpu_core_h", "mem_GiB_h", "cpu_fulfil", "cpu_short_h", "oom_kills", "resizes",
                "in_status", "recreations");
    std::printf("%-16s %5zu %12.4f %12.4f %10.4f %12.4f %9zu %8zu %8zu %11zu\n", ns.c_str(), pods,
                s.cpu.allocated / 3600, s.memory.allocated / 3600 / (1024.0 * 1024 * 1024),
                s.cpu.fulfilment(), s.cpu.shortfall / 3600, s.oom_kills, c.resizes,
                c.resizes_in_status, c.recreations + c.deletions);
}

int run_score_live(ScoreLiveArgs& a) {
    const replay::Replay r = replay::Replay::from_options(a.replay);
    const auto events = read_pod_events(a.pods);
    double first = std::numeric_limits<double>::infinity(), last = -first;
    for (const auto& [pod, ev] : events) {
        first = std::min(first, ev.front().t);
        last = std::max(last, ev.back().t);
    }
    if (!a.from) a.from = std::max(a.start, first);
    if (!a.to) a.to = last;
    if (!(*a.to > *a.from)) throw UsageError("the window --from .. --to is empty");

    json pods = json::object();
    sim::Score total;
    PodChanges changes;
    for (std::size_t i = 0; i < r.pods().size(); ++i) {
        const std::string& name = r.pods()[i].pod;
        const auto it = events.find(name);
        if (it == events.end()) throw UsageError("pod " + name + ": the watch never saw it");
        const PodResult p = score_pod(r, i, it->second, a);
        total.add(p.score);
        changes.resizes += p.changes.resizes;
        changes.resizes_in_status += p.changes.resizes_in_status;
        changes.recreations += p.changes.recreations;
        changes.deletions += p.changes.deletions;
        json j = changes_json(p.changes);
        j["score"] = sim::score_json(p.score);
        j["samples_without_pod"] = p.samples_without_pod;
        pods[name] = j;
    }
    json report = {
        {"namespace", a.replay.ns},
        {"speed", r.speed()},
        {"window", {{"from", *a.from}, {"to", *a.to}, {"wall_seconds", *a.to - *a.from}}},
        {"pods", pods},
        {"total", changes_json(changes)}};
    report["total"]["score"] = sim::score_json(total);
    report["total"]["pods"] = r.pods().size();
    if (!a.served_trace.empty()) write_served_trace(r, a);
    if (!a.vpa.empty()) {
        if (a.vpa_input.empty()) throw UsageError("--vpa needs --vpa-input");
        const std::vector<json> live = read_json_lines(a.vpa);
        report["vpa"] = fidelity(live, simulated_targets(a.vpa_input), a);
        const std::vector<Bounds> bounds = read_bounds(live, a.vpa);
        for (const auto& p : r.pods())
            report["pods"][p.pod]["outside_vpa_bounds"] =
                outside_bounds(events.at(p.pod), bounds, a);
    }
    if (!a.json_out.empty()) {
        OutputFile out(a.json_out);
        std::fprintf(out.stream(), "%s\n", report.dump(2).c_str());
        out.commit();
    }
    print_table(a.replay.ns, total, changes, r.pods().size());
    return 0;
}

}  // namespace

Command add_score_live_command(CLI::App& parent) {
    auto args = std::make_shared<ScoreLiveArgs>();
    CLI::App* app = parent.add_subcommand(
        "score-live",
        "Score the requests and limits that pods of a live cluster had while "
        "phasescale-replay-exporter served them a trace, with the simulator's accounting "
        "(allocation integrated over trace time, CPU shortfall and fulfilment, OOM kills: memory "
        "usage over the limit), from a recording of the pods (JSON lines of a watch: t, type, "
        "pod, uid, requests, limits, status_requests); count resizes (spec changes of one UID), "
        "those the node reported in the status, re-creations and deletions. Optionally write the "
        "samples a VPA of these pods sees (--served-trace) and compare a live VPA's targets with "
        "the simulator's VPA recommender (that of `simulate --policy vpa`) on them (--vpa, "
        "--vpa-input), and say how long each pod's request "
        "was outside the VPA's [lowerBound, upperBound]. Prints a table; --json the report");
    ScoreLiveArgs& a = *args;
    app->add_option("--trace", a.replay.traces, "The trace(s) the exporter replays")
        ->required()
        ->delimiter(',');
    app->add_option("--namespace", a.replay.ns, "The exporter's --namespace")->required();
    app->add_option("--speed", a.replay.speed, "The exporter's --speed")->required();
    app->add_flag("--loop", a.replay.loop, "The exporter loops (--loop)");
    app->add_option_function<std::string>(
        "--pod-map", [&a](const std::string& m) { a.replay.pod_map = replay::parse_pod_map(m); },
        "The exporter's --pod-map");
    app->add_option("--start", a.start,
                    "Unix time of the exporter's trace time 0 (its phasescale_replay_trace_seconds "
                    "= (now - start) x speed)")
        ->required();
    app->add_option("--pods", a.pods, "The pods' watch, JSON lines")->required();
    app->add_option("--from", a.from,
                    "Unix time the scored window starts (default: --start or "
                    "the first event, the later)");
    app->add_option("--to", a.to, "Unix time it ends (default: the last event)");
    app->add_option("--json", a.json_out, "Where to write the JSON report");
    app->add_option("--served-trace", a.served_trace,
                    "Where to write what metrics-server reports every --resolution seconds for "
                    "all the pods, as one execution in unix time (CSV, for simulate)");
    app->add_option("--resolution", a.resolution, "metrics-server's --metric-resolution, s")
        ->check(positive());
    app->add_option("--vpa", a.vpa,
                    "The live VPA's watch, JSON lines: t, target, lowerBound, upperBound");
    app->add_option("--vpa-input", a.vpa_input,
                    "The samples the live VPA got, as a trace of one execution (e.g. "
                    "--served-trace's): the simulator's VPA recommender replays them for --vpa");
    app->add_option("--lag", a.lag,
                    "Seconds the live recommendation may lag the simulated one (a scrape and a "
                    "recommender loop)")
        ->check(non_negative());
    return {app, [args] { return run_score_live(*args); }};
}

}  // namespace phasescale::cli
