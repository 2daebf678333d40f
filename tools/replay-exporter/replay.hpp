// The replay behind phasescale-replay-exporter: executions of a resource trace played back as
// cAdvisor-style series for Prometheus, and as the kubelet's resource metrics for metrics-server,
// with trace time compressed by a speed factor. No HTTP here, so that the arithmetic can be
// tested alone.
//
// Sample k of an execution (at trace time t_k) holds from t_k to t_{k+1}; the last sample holds
// for the interval before it (1 s for an execution of one sample). An execution is "running"
// from its start until its last sample's interval ends; then its series disappear, unless the
// replay loops.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phasescale::replay {

struct Options {
    std::vector<std::string> traces;
    std::string ns;
    std::string container = "main";
    double speed = 1;  // trace seconds per wall second
    bool loop = false;
    // "start": every execution starts when the replay starts; "trace": executions keep their
    // offsets from the earliest timestamp of all the traces.
    std::string align = "start";
    std::string id_column = "pod.id";
    std::string time_column = "timestamp";
    std::string cpu_column = "cpu.usage.cores";
    std::string memory_column = "mem.working.set";
    // Pod name of an execution, by its id or by "#INDEX" (0-based, in trace order); unmapped
    // executions use their id.
    std::map<std::string, std::string> pod_map;
};

// One execution to replay, times relative to its first sample.
struct PodTrace {
    std::string pod;
    std::string source;           // "FILE: id ID", for messages
    double start = 0;             // trace seconds after the replay's start
    std::vector<double> offsets;  // sample times relative to the first, non-decreasing, [0] == 0
    std::vector<double> cpu;      // cores
    std::vector<double> memory;   // bytes
};

// A trace sample as served: sample `index` of a pod's execution, from `trace_time` (seconds of
// trace time after the replay's start; wall seconds = trace_time / speed) until `end`, when the
// next one starts (or the execution ends).
struct ServedSample {
    double trace_time = 0;
    std::size_t index = 0;
    double end = 0;
};

struct PodState {
    std::string pod;
    double cpu_seconds =
        0;  // counter: CPU seconds used in wall time (its rate is the trace's cores)
    double memory_bytes = 0;   // gauge
    double start_seconds = 0;  // wall seconds after the replay's start when this pod started
};

class Replay {
public:
    // Throws std::invalid_argument for a bad speed, no executions, empty or mismatched samples,
    // or two executions on one pod name.
    Replay(std::vector<PodTrace> pods, std::string ns, std::string container, double speed,
           bool loop);

    // Reads the traces (phasescale::model::read_trace) and applies pod_map and align. Throws
    // InputError for a bad trace, std::invalid_argument for a bad option or a pod_map key that
    // names no execution.
    static Replay from_options(const Options& options);

    // The running pods `wall_seconds` after the replay started.
    std::vector<PodState> at(double wall_seconds) const;
    // The /metrics text at that time (Prometheus text exposition format 0.0.4).
    std::string exposition(double wall_seconds) const;
    // The kubelet's /metrics/resource text (what metrics-server scrapes) at `now_ms`, wall
    // milliseconds since the epoch, for a replay that started at `started_ms`: the running pods'
    // container_* and pod_* series, node_* sums standing for the node, resource_scrape_error 0.
    // The same values as exposition((now_ms - started_ms) / 1000.0), stamped now_ms, as the
    // kubelet stamps its samples; container_start_time_seconds is when the pod's replay started.
    std::string kubelet_exposition(std::int64_t started_ms, std::int64_t now_ms) const;

    // Also serve kube_pod_labels{namespace, pod, <label>="<value>"...} 1 for every running pod, as
    // kube-state-metrics does; `labels` are its label names already (label_app, ...).
    void set_pod_labels(std::map<std::string, std::string> labels) {
        pod_labels_ = std::move(labels);
    }

    // The samples pod `i` (of pods()) is served from trace time `from` until `to`, looping if
    // the replay does; the one in force at `from` first, with its own start time.
    std::vector<ServedSample> served(std::size_t i, double from, double to) const;

    const std::vector<PodTrace>& pods() const { return pods_; }
    const std::string& ns() const { return ns_; }
    double speed() const { return speed_; }
    // Trace seconds after which no execution runs any more (infinite when looping).
    double end() const;

private:
    // Execution i at `wall_seconds`: whether it runs, and the CPU seconds it used so far (all of
    // its runs' once it ended, none before it started).
    struct Sample {
        bool running = false;
        double cpu_seconds = 0;
        double memory_bytes = 0;
    };
    Sample sample(std::size_t i, double wall_seconds) const;

    // Every execution sampled once at `wall_seconds`: the running pods, and the CPU seconds of
    // all of them, ended ones included (the node's counter, which must never go down).
    struct Snapshot {
        std::vector<PodState> running;
        double cpu_seconds_all = 0;
    };
    Snapshot snapshot(double wall_seconds) const;

    struct Prepared {
        double duration = 0;             // trace seconds the execution runs
        std::vector<double> cumulative;  // core-seconds at each offset
        double total = 0;                // core-seconds of one run
    };
    std::vector<PodTrace> pods_;
    std::vector<Prepared> prepared_;
    std::string ns_;
    std::string container_;
    double speed_;
    bool loop_;
    std::map<std::string, std::string> pod_labels_;
};

// "id=pod,id2=pod2" -> map; throws std::invalid_argument naming the bad entry.
std::map<std::string, std::string> parse_pod_map(std::string_view text);
// "HOST:PORT" (HOST may be [IPv6]) -> (host, port); throws std::invalid_argument naming `flag`.
std::pair<std::string, int> parse_listen(std::string_view text, std::string_view flag = "--listen");
// Escapes a label value for the text exposition format.
std::string escape_exposition_label(std::string_view value);
// The shortest text that reads back as the same double ("NaN", "+Inf", "-Inf" for those).
std::string format_exposition_value(double value);

}  // namespace phasescale::replay
