#include "replay.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <phasescale/model/trace.hpp>

namespace phasescale::replay {

namespace {

// The hold time of the last sample of an execution that has only one.
constexpr double kSingleSampleInterval = 1.0;

}  // namespace

Replay::Replay(std::vector<PodTrace> pods, std::string ns, std::string container, double speed,
               bool loop)
    : pods_(std::move(pods)),
      ns_(std::move(ns)),
      container_(std::move(container)),
      speed_(speed),
      loop_(loop) {
    if (!(speed_ > 0) || !std::isfinite(speed_))
        throw std::invalid_argument("--speed must be a positive number");
    if (ns_.empty()) throw std::invalid_argument("--namespace must not be empty");
    if (container_.empty()) throw std::invalid_argument("--container must not be empty");
    if (pods_.empty()) throw std::invalid_argument("the traces hold no execution");
    std::map<std::string, std::string> owner;
    for (const auto& p : pods_) {
        if (p.pod.empty()) throw std::invalid_argument(p.source + ": empty pod name");
        auto [it, added] = owner.emplace(p.pod, p.source);
        if (!added) {
            throw std::invalid_argument(
                "executions " + it->second + " and " + p.source + " both map to pod " + p.pod +
                " (give them distinct names with --pod-map, by id or by #INDEX)");
        }
        const std::size_t n = p.offsets.size();
        if (n == 0 || p.cpu.size() != n || p.memory.size() != n) {
            throw std::invalid_argument(p.source + ": no samples, or columns of different lengths");
        }
        Prepared prep;
        prep.cumulative.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            if (!std::isfinite(p.cpu[k]) || p.cpu[k] < 0) {
                throw std::invalid_argument(p.source + ": sample " + std::to_string(k + 1) +
                                            ": CPU cores must be a finite number >= 0");
            }
            if (!std::isfinite(p.memory[k])) {
                throw std::invalid_argument(p.source + ": sample " + std::to_string(k + 1) +
                                            ": memory is not finite");
            }
            if (k > 0 && p.offsets[k] < p.offsets[k - 1]) {
                throw std::invalid_argument(p.source + ": time goes backwards at sample " +
                                            std::to_string(k + 1));
            }
            if (k > 0)
                prep.cumulative[k] =
                    prep.cumulative[k - 1] + p.cpu[k - 1] * (p.offsets[k] - p.offsets[k - 1]);
        }
        double last_interval = kSingleSampleInterval;
        for (std::size_t k = n - 1; k > 0; --k) {
            if (p.offsets[k] > p.offsets[k - 1]) {
                last_interval = p.offsets[k] - p.offsets[k - 1];
                break;
            }
        }
        prep.duration = p.offsets.back() + last_interval;
        prep.total = prep.cumulative.back() + p.cpu.back() * last_interval;
        prepared_.push_back(std::move(prep));
    }
}

Replay Replay::from_options(const Options& o) {
    if (o.traces.empty()) throw std::invalid_argument("no trace given (--trace FILE.csv[,...])");
    if (o.align != "start" && o.align != "trace")
        throw std::invalid_argument("--align must be start or trace");
    model::TraceOptions to;
    to.id_column = o.id_column;
    to.time_column = o.time_column;
    to.columns = {o.cpu_column, o.memory_column};
    model::Trace trace = model::read_trace(o.traces, to);
    const std::size_t cpu_col = trace.column_index(o.cpu_column);
    const std::size_t mem_col = trace.column_index(o.memory_column);

    double earliest = std::numeric_limits<double>::infinity();
    for (const auto& e : trace.executions) {
        if (!e.timestamps.empty()) earliest = std::min(earliest, e.timestamps.front());
    }
    std::set<std::string> used;
    std::vector<PodTrace> pods;
    for (std::size_t i = 0; i < trace.executions.size(); ++i) {
        const auto& e = trace.executions[i];
        if (e.timestamps.empty()) continue;
        PodTrace p;
        const std::string index_key = "#" + std::to_string(i);
        if (auto it = o.pod_map.find(index_key); it != o.pod_map.end()) {
            p.pod = it->second;
            used.insert(index_key);
        } else if (auto it2 = o.pod_map.find(e.id); it2 != o.pod_map.end()) {
            p.pod = it2->second;
            used.insert(e.id);
        } else {
            p.pod = e.id;
        }
        p.source = e.source + ": " + o.id_column + " " + e.id + " (#" + std::to_string(i) + ")";
        p.start = o.align == "trace" ? e.timestamps.front() - earliest : 0.0;
        const auto n = e.timestamps.size();
        p.offsets.resize(n);
        p.cpu.resize(n);
        p.memory.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            p.offsets[k] = e.timestamps[k] - e.timestamps.front();
            p.cpu[k] = e.values(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(cpu_col));
            p.memory[k] =
                e.values(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(mem_col));
        }
        pods.push_back(std::move(p));
    }
    for (const auto& [key, pod] : o.pod_map) {
        if (!used.count(key)) {
            throw std::invalid_argument(
                "--pod-map " + key + "=" + pod + ": no execution has " +
                (key.starts_with("#") ? "that index" : o.id_column + " " + key));
        }
    }
    return Replay(std::move(pods), o.ns, o.container, o.speed, o.loop);
}

double Replay::end() const {
    if (loop_) return std::numeric_limits<double>::infinity();
    double end = 0;
    for (std::size_t i = 0; i < pods_.size(); ++i)
        end = std::max(end, pods_[i].start + prepared_[i].duration);
    return end;
}

Replay::Sample Replay::sample(std::size_t i, double wall_seconds) const {
    const PodTrace& p = pods_[i];
    const Prepared& prep = prepared_[i];
    double local = std::max(0.0, wall_seconds) * speed_ - p.start;
    if (local < 0) return {};
    double cycles = 0;
    if (loop_) {
        cycles = std::floor(local / prep.duration);
        local -= cycles * prep.duration;
    } else if (local >= prep.duration) {
        return {false, prep.total / speed_, 0};
    }
    auto it = std::upper_bound(p.offsets.begin(), p.offsets.end(), local);
    const auto k =
        static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, (it - p.offsets.begin()) - 1));
    const double core_seconds =
        cycles * prep.total + prep.cumulative[k] + p.cpu[k] * (local - p.offsets[k]);
    return {true, core_seconds / speed_, p.memory[k]};
}

Replay::Snapshot Replay::snapshot(double wall_seconds) const {
    Snapshot out;
    for (std::size_t i = 0; i < pods_.size(); ++i) {
        const Sample s = sample(i, wall_seconds);
        out.cpu_seconds_all += s.cpu_seconds;
        if (s.running) {
            out.running.push_back(
                {pods_[i].pod, s.cpu_seconds, s.memory_bytes, pods_[i].start / speed_});
        }
    }
    return out;
}

std::vector<PodState> Replay::at(double wall_seconds) const {
    return snapshot(wall_seconds).running;
}

std::vector<ServedSample> Replay::served(std::size_t i, double from, double to) const {
    const PodTrace& p = pods_.at(i);
    const Prepared& prep = prepared_.at(i);
    std::vector<ServedSample> out;
    for (double cycle = 0;; cycle += prep.duration) {
        const double begin = p.start + cycle;
        if (begin >= to) break;
        for (std::size_t k = 0; k < p.offsets.size(); ++k) {
            const double t = begin + p.offsets[k];
            const double next =
                k + 1 < p.offsets.size() ? begin + p.offsets[k + 1] : begin + prep.duration;
            if (t >= to) break;
            if (next > from) out.push_back({t, k, next});
        }
        if (!loop_) break;
    }
    return out;
}

std::string Replay::exposition(double wall_seconds) const {
    const auto states = at(wall_seconds);
    const std::string common = "namespace=\"" + escape_exposition_label(ns_) + "\",pod=\"";
    const std::string tail = "\",container=\"" + escape_exposition_label(container_) + "\"}";
    std::string out;
    out +=
        "# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds "
        "(replayed trace).\n";
    out += "# TYPE container_cpu_usage_seconds_total counter\n";
    for (const auto& s : states) {
        out += "container_cpu_usage_seconds_total{" + common + escape_exposition_label(s.pod) +
               tail + " " + format_exposition_value(s.cpu_seconds) + "\n";
    }
    out +=
        "# HELP container_memory_working_set_bytes Current working set in bytes (replayed "
        "trace).\n";
    out += "# TYPE container_memory_working_set_bytes gauge\n";
    for (const auto& s : states) {
        out += "container_memory_working_set_bytes{" + common + escape_exposition_label(s.pod) +
               tail + " " + format_exposition_value(s.memory_bytes) + "\n";
    }
    if (!pod_labels_.empty()) {
        std::string labels;
        for (const auto& [name, value] : pod_labels_)
            labels += "," + name + "=\"" + escape_exposition_label(value) + "\"";
        out +=
            "# HELP kube_pod_labels Kubernetes labels converted to Prometheus labels (as "
            "kube-state-metrics).\n";
        out += "# TYPE kube_pod_labels gauge\n";
        for (const auto& s : states)
            out += "kube_pod_labels{namespace=\"" + escape_exposition_label(ns_) + "\",pod=\"" +
                   escape_exposition_label(s.pod) + "\"" + labels + "} 1\n";
    }
    out +=
        "# HELP phasescale_replay_trace_seconds Trace seconds replayed since the exporter "
        "started.\n";
    out += "# TYPE phasescale_replay_trace_seconds gauge\n";
    out += "phasescale_replay_trace_seconds " +
           format_exposition_value(std::max(0.0, wall_seconds) * speed_) + "\n";
    out += "# HELP phasescale_replay_pods_running Executions whose series are served now.\n";
    out += "# TYPE phasescale_replay_pods_running gauge\n";
    out += "phasescale_replay_pods_running " + std::to_string(states.size()) + "\n";
    return out;
}

std::string Replay::kubelet_exposition(std::int64_t started_ms, std::int64_t now_ms) const {
    const double wall_seconds = static_cast<double>(now_ms - started_ms) / 1000.0;
    Snapshot now = snapshot(wall_seconds);
    auto& states = now.running;
    // The kubelet (Prometheus' Go client) sorts series by their labels' values: here, by pod.
    std::sort(states.begin(), states.end(),
              [](const PodState& a, const PodState& b) { return a.pod < b.pod; });
    const std::string stamp = " " + std::to_string(now_ms) + "\n";
    const std::string ns = escape_exposition_label(ns_);
    const auto container_labels = [&](const PodState& s) {
        return "{container=\"" + escape_exposition_label(container_) + "\",namespace=\"" + ns +
               "\",pod=\"" + escape_exposition_label(s.pod) + "\"}";
    };
    const auto pod_labels = [&](const PodState& s) {
        return "{namespace=\"" + ns + "\",pod=\"" + escape_exposition_label(s.pod) + "\"}";
    };
    const auto family = [](const char* name, const char* type, const char* help) {
        return std::string("# HELP ") + name + " [STABLE] " + help + "\n# TYPE " + name + " " +
               type + "\n";
    };
    double node_memory = 0;
    for (const auto& s : states) node_memory += s.memory_bytes;
    const double started = static_cast<double>(started_ms) / 1000.0;

    std::string out;
    out += family("container_cpu_usage_seconds_total", "counter",
                  "Cumulative cpu time consumed by the container in core-seconds");
    for (const auto& s : states)
        out += "container_cpu_usage_seconds_total" + container_labels(s) + " " +
               format_exposition_value(s.cpu_seconds) + stamp;
    out += family("container_memory_working_set_bytes", "gauge",
                  "Current working set of the container in bytes");
    for (const auto& s : states)
        out += "container_memory_working_set_bytes" + container_labels(s) + " " +
               format_exposition_value(s.memory_bytes) + stamp;
    out += family("container_start_time_seconds", "gauge",
                  "Start time of the container since unix epoch in seconds");
    for (const auto& s : states)  // the kubelet stamps no time on this one
        out += "container_start_time_seconds" + container_labels(s) + " " +
               format_exposition_value(started + s.start_seconds) + "\n";
    out += family("node_cpu_usage_seconds_total", "counter",
                  "Cumulative cpu time consumed by the node in core-seconds");
    out += "node_cpu_usage_seconds_total " + format_exposition_value(now.cpu_seconds_all) + stamp;
    out += family("node_memory_working_set_bytes", "gauge",
                  "Current working set of the node in bytes");
    out += "node_memory_working_set_bytes " + format_exposition_value(node_memory) + stamp;
    out += family("pod_cpu_usage_seconds_total", "counter",
                  "Cumulative cpu time consumed by the pod in core-seconds");
    for (const auto& s : states)
        out += "pod_cpu_usage_seconds_total" + pod_labels(s) + " " +
               format_exposition_value(s.cpu_seconds) + stamp;
    out +=
        family("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes");
    for (const auto& s : states)
        out += "pod_memory_working_set_bytes" + pod_labels(s) + " " +
               format_exposition_value(s.memory_bytes) + stamp;
    out += family("resource_scrape_error", "gauge",
                  "1 if there was an error while getting container metrics, 0 otherwise");
    out += "resource_scrape_error 0\n";
    return out;
}

std::map<std::string, std::string> parse_pod_map(std::string_view text) {
    std::map<std::string, std::string> out;
    while (!text.empty()) {
        auto comma = text.find(',');
        std::string_view entry = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (entry.empty()) continue;
        auto eq = entry.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
            throw std::invalid_argument("--pod-map entry \"" + std::string(entry) +
                                        "\" is not ID=POD");
        }
        auto [it, added] =
            out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
        if (!added) throw std::invalid_argument("--pod-map maps " + it->first + " twice");
    }
    return out;
}

std::pair<std::string, int> parse_listen(std::string_view text, std::string_view flag) {
    auto colon = text.rfind(':');
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument(std::string(flag) + " \"" + std::string(text) + "\": " + why +
                                     " (expected HOST:PORT)");
    };
    if (colon == std::string_view::npos || colon == 0) throw bad("no host or port");
    std::string host(text.substr(0, colon));
    if (host.front() == '[' && host.back() != ']') throw bad("unclosed [");
    std::string_view port_text = text.substr(colon + 1);
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
        port < 1 || port > 65535) {
        throw bad("port must be 1-65535");
    }
    return {host, port};
}

std::string escape_exposition_label(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.push_back(c);
    }
    return out;
}

std::string format_exposition_value(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, end);
}

}  // namespace phasescale::replay
