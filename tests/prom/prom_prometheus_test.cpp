// [prometheus] tests: the client against a real Prometheus server (Debian's `prometheus`) that
// scrapes replay exporters every second. They share one environment, started by the first test
// that needs it and stopped when the test binary ends (or killed with it):
//   - exporter "prom-it":    pods trainer-a (1.5 cores, 1 GiB) and trainer-b (0.25 cores, 256 MiB),
//                            both labelled app=trainer (kube_pod_labels, as kube-state-metrics)
//   - exporter "prom-other": the same trace, pods named by their ids 101 and 202
//   - exporter "prom-ended": pod "short" that ends 3 s after the start
//   - exporter "prom-rec":   pods train-0 (owned by Job train), solo (no owner) and web-5d4f-x
//                            (ReplicaSet web-5d4f of Deployment web), labelled team=vision,
//                            with kube-state-metrics' and cAdvisor's series from a file that the
//                            `phasescale recommend` test rewrites (RecommendState)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>
#include <phasescale/control/decision.hpp>
#include <phasescale/control/tracker.hpp>
#include <phasescale/model/pretrained.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>

#include "prom_support.hpp"

using namespace phasescale::prom;
using namespace prom_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

constexpr double kSpeed = 30;  // trace seconds per wall second
constexpr double kCpuA = 1.5, kCpuB = 0.25;
constexpr double kMemA = 1073741824, kMemB = 268435456;
constexpr double kShortMem = 5000000;
// rate() over a perfectly linear counter is exact but for the few milliseconds between the
// scrape's timestamp and the exporter's reading of its clock.
constexpr double kCpuTolerance = 0.05;
// Samples each series must have before the tests start, so that every rate() window and range
// below lies within scraped data.
constexpr int kSamplesBeforeTests = 10;

const std::chrono::milliseconds kStartTimeout = 20s;
const std::chrono::milliseconds kDataTimeout = 40s;

std::string prometheus_binary() {
    const char* env = std::getenv("PHASESCALE_PROMETHEUS");
    return env != nullptr && *env != '\0' ? env : "prometheus";
}

bool on_path(const std::string& binary) {
    if (binary.find('/') != std::string::npos) return std::filesystem::exists(binary);
    const char* path = std::getenv("PATH");
    std::string p = path != nullptr ? path : "";
    std::size_t pos = 0;
    while (pos <= p.size()) {
        std::size_t colon = p.find(':', pos);
        std::string dir =
            p.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
        if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / binary))
            return true;
        if (colon == std::string::npos) break;
        pos = colon + 1;
    }
    return false;
}

// Starts a server on a free port, again on another port if the first was taken meanwhile.
// `ready` is polled until it says yes or the process ends.
std::unique_ptr<ChildProcess> start_server(
    const std::string& what, const std::function<std::vector<std::string>(int)>& argv_for,
    const std::filesystem::path& log, int& port, const std::function<bool(int)>& ready) {
    std::string last_log;
    int exit_code = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        port = free_port();
        auto p = std::make_unique<ChildProcess>(argv_for(port), log);
        bool ok = wait_until([&] { return ready(port) || !p->running(); }, kStartTimeout);
        if (ok && p->running()) return p;
        last_log = p->log_tail();
        if (!ok)
            FAIL(what << " not ready within " << kStartTimeout.count() << " ms; its log:\n"
                      << last_log);
        exit_code = p->exit_code();
        if (last_log.find("address already in use") == std::string::npos) break;
    }
    FAIL(what << " exited with code " << exit_code << " before it was ready; its log:\n"
              << last_log);
    return nullptr;
}

std::string trace_csv() {
    std::string csv = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    // Two hours of trace: four minutes of wall time, far longer than the tests.
    for (int t = 0; t <= 7200; t += 30) {
        csv += std::to_string(1700000000 + t) + ",101," + std::to_string(kCpuA) + ",1073741824\n";
        csv += std::to_string(1700000000 + t) + ",202," + std::to_string(kCpuB) + ",268435456\n";
    }
    return csv;
}

// Epochs of a training container: 5 minutes heavy, 5 light, for two hours (4 wall minutes).
std::string recommend_trace_csv() {
    std::string csv = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    for (int t = 0; t <= 7200; t += 30) {
        const bool heavy = (t / 300) % 2 == 0;
        csv += std::to_string(1700000000 + t) + ",101," +
               (heavy ? "1.5,3221225472\n" : "0.3,1073741824\n");
        csv += std::to_string(1700000000 + t) + ",202,0.25,268435456\n";
        csv += std::to_string(1700000000 + t) + ",303,0.5,1610612736\n";
    }
    return csv;
}

struct PromEnv {
    TempDir dir{"phasescale-prom-it"};
    int prometheus_port = 0;
    std::unique_ptr<ChildProcess> prometheus;
    std::vector<int> exporter_ports;
    std::vector<std::unique_ptr<ChildProcess>> exporters;
    std::string url;

    PromEnv() {
        const std::string binary = prometheus_binary();
        if (!on_path(binary)) {
            FAIL("the Prometheus server ("
                 << binary
                 << ") is not installed: install the Debian package "
                    "`prometheus` (scripts/install-deps.sh does) or set PHASESCALE_PROMETHEUS");
        }
        // The exporters' ports first: Prometheus' configuration names them.
        for (int i = 0; i < 4; ++i) exporter_ports.push_back(free_port());
        std::string targets;
        for (int p : exporter_ports)
            targets += (targets.empty() ? "" : ", ") + ("'127.0.0.1:" + std::to_string(p) + "'");
        const std::string config = dir.write("prometheus.yml",
                                             "global:\n"
                                             "  scrape_interval: 1s\n"
                                             "  scrape_timeout: 900ms\n"
                                             "  evaluation_interval: 1s\n"
                                             "scrape_configs:\n"
                                             "  - job_name: replay\n"
                                             "    honor_labels: true\n"
                                             "    static_configs:\n"
                                             "      - targets: [" +
                                                 targets + "]\n");
        prometheus = start_server(
            "prometheus",
            [&](int port) {
                return std::vector<std::string>{
                    binary, "--config.file=" + config,
                    "--storage.tsdb.path=" + (dir.path() / "data").string(),
                    "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"};
            },
            dir.path() / "prometheus.log", prometheus_port,
            [](int port) { return http_get(port, "/-/ready").status == 200; });
        url = "http://127.0.0.1:" + std::to_string(prometheus_port);

        // Started once Prometheus scrapes their addresses (its target discovery sends the first
        // targets after a few seconds), so that it sees them from their first second.
        wait_for_targets();
        const std::string csv = dir.write("trace.csv", trace_csv());
        const std::string short_csv =
            dir.write("short.csv",
                      "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
                      "1700000000,short,0.5,5000000\n1700000045,short,0.5,5000000\n");
        const std::string rec_csv = dir.write("recommend.csv", recommend_trace_csv());
        write_recommend_state(0, false);
        const std::vector<std::vector<std::string>> extra{
            {"--trace", csv, "--namespace", "prom-it", "--pod-map", "101=trainer-a,202=trainer-b",
             "--pod-label", "app=trainer"},
            {"--trace", csv, "--namespace", "prom-other"},
            {"--trace", short_csv, "--namespace", "prom-ended"},
            {"--trace", rec_csv, "--namespace", "prom-rec", "--pod-map",
             "101=train-0,202=solo,303=web-5d4f-x", "--pod-label", "team=vision", "--extra-metrics",
             recommend_state_path()}};
        for (std::size_t i = 0; i < extra.size(); ++i) {
            std::vector<std::string> argv{PHASESCALE_REPLAY_EXPORTER, "--speed",
                                          std::to_string(kSpeed), "--listen",
                                          "127.0.0.1:" + std::to_string(exporter_ports[i])};
            argv.insert(argv.end(), extra[i].begin(), extra[i].end());
            exporters.push_back(std::make_unique<ChildProcess>(
                argv, dir.path() / ("exporter" + std::to_string(i) + ".log")));
        }
        for (std::size_t i = 0; i < exporters.size(); ++i) {
            auto& e = *exporters[i];
            const int port = exporter_ports[i];
            bool up =
                wait_until([&] { return http_get(port, "/metrics").status == 200 || !e.running(); },
                           kStartTimeout);
            if (!up || !e.running()) {
                FAIL("replay exporter " << i << " (port " << port << ") did not start; its log:\n"
                                        << e.log_tail());
            }
        }
        wait_for_data();
    }

    std::string recommend_state_path() const { return (dir.path() / "recommend.prom").string(); }

    // kube-state-metrics' and cAdvisor's series of namespace prom-rec after `seconds` of CFS
    // counting: train-0 throttled in a quarter of its periods (0.5 CPU-seconds a second) and
    // restarted twice more after `oom_kills` (its last termination OOMKilled); the others never.
    // Renamed into place, so that a scrape never reads half of it.
    void write_recommend_state(double seconds, bool oom_kills) const {
        auto series = [](const std::string& name, const std::string& pod, const std::string& more,
                         double value) {
            return name + "{namespace=\"prom-rec\",pod=\"" + pod + "\"" + more + "} " +
                   std::to_string(value) + "\n";
        };
        const std::string main = ",container=\"main\"";
        std::string text;
        for (const auto& [pod, cpu, memory, cpu_limit, memory_limit] :
             {std::tuple{"train-0", 2.0, 4294967296.0, 4.0, 8589934592.0},
              std::tuple{"solo", 0.5, 1073741824.0, 0.0, 0.0},
              std::tuple{"web-5d4f-x", 1.0, 2147483648.0, 1.0, 2147483648.0}}) {
            text += series("kube_pod_container_resource_requests", pod,
                           main + ",resource=\"cpu\",unit=\"core\"", cpu);
            text += series("kube_pod_container_resource_requests", pod,
                           main + ",resource=\"memory\",unit=\"byte\"", memory);
            if (cpu_limit > 0)
                text += series("kube_pod_container_resource_limits", pod,
                               main + ",resource=\"cpu\",unit=\"core\"", cpu_limit);
            if (memory_limit > 0)
                text += series("kube_pod_container_resource_limits", pod,
                               main + ",resource=\"memory\",unit=\"byte\"", memory_limit);
            const bool train = std::string(pod) == "train-0";
            text += series("kube_pod_container_status_restarts_total", pod, main,
                           train ? (oom_kills ? 7 : 5) : 0);
            if (train)
                text += series("kube_pod_container_status_last_terminated_reason", pod,
                               main + ",reason=\"OOMKilled\"", 1);
            text += series("container_cpu_cfs_periods_total", pod, main, 100 * seconds);
            text += series("container_cpu_cfs_throttled_periods_total", pod, main,
                           train ? 25 * seconds : 0);
            text += series("container_cpu_cfs_throttled_seconds_total", pod, main,
                           train ? 0.5 * seconds : 0);
        }
        text += series("kube_pod_owner", "train-0",
                       ",owner_kind=\"Job\",owner_name=\"train\",owner_is_controller=\"true\"", 1);
        text += series(
            "kube_pod_owner", "solo",
            ",owner_kind=\"<none>\",owner_name=\"<none>\",owner_is_controller=\"<none>\"", 1);
        text += series(
            "kube_pod_owner", "web-5d4f-x",
            ",owner_kind=\"ReplicaSet\",owner_name=\"web-5d4f\",owner_is_controller=\"true\"", 1);
        text +=
            "kube_replicaset_owner{namespace=\"prom-rec\",replicaset=\"web-5d4f\","
            "owner_kind=\"Deployment\",owner_name=\"web\",owner_is_controller=\"true\"} 1\n";
        const std::string temporary = recommend_state_path() + ".new";
        test_support::write_file(temporary, text);
        std::filesystem::rename(temporary, recommend_state_path());
    }

    void wait_for_targets() {
        ClientConfig config;
        config.url = url;
        config.timeout = 5s;
        Client client(config);
        std::string last = "no answer yet";
        bool ok = wait_until(
            [&] {
                try {
                    auto r = client.query(R"(up{job="replay"})");
                    last = std::to_string(r.vector.size()) + " targets";
                    return r.vector.size() == exporter_ports.size();
                } catch (const std::exception& e) {
                    last = e.what();
                    return false;
                }
            },
            kDataTimeout, 100ms);
        if (!ok) {
            FAIL("Prometheus does not scrape the exporters' addresses within "
                 << kDataTimeout.count() << " ms; last: " << last << "\nprometheus log:\n"
                 << prometheus->log_tail());
        }
    }

    // Until Prometheus holds kSamplesBeforeTests samples of every long-running series.
    void wait_for_data() {
        ClientConfig config;
        config.url = url;
        config.timeout = 5s;
        Client client(config);
        const std::string q =
            R"(count_over_time()"
            R"(container_memory_working_set_bytes{namespace=~"prom-it|prom-other"}[1m]))";
        std::string last = "no answer yet";
        bool ok = wait_until(
            [&] {
                try {
                    auto r = client.query(q);
                    last = std::to_string(r.vector.size()) + " series";
                    if (r.vector.size() != 4) return false;
                    for (const auto& s : r.vector) {
                        last += ", " + s.metric.at("pod") + ": " + std::to_string(s.sample.value);
                        if (s.sample.value < kSamplesBeforeTests) return false;
                    }
                    return true;
                } catch (const std::exception& e) {
                    last = e.what();
                    return false;
                }
            },
            kDataTimeout, 250ms);
        if (!ok) {
            FAIL("Prometheus has not scraped "
                 << kSamplesBeforeTests << " samples of the 4 replayed pods within "
                 << kDataTimeout.count() << " ms; last: " << last << "\nprometheus log:\n"
                 << prometheus->log_tail());
        }
    }
};

// The shared environment; a failed start is reported by every test that needs it.
PromEnv& env() {
    static std::unique_ptr<PromEnv> instance;
    static std::string failure;
    if (instance) return *instance;
    if (!failure.empty()) FAIL("the Prometheus environment did not start: " << failure);
    try {
        instance = std::make_unique<PromEnv>();
    } catch (const std::exception& e) {
        failure = e.what();
        throw;
    } catch (...) {
        failure = "see the first test's failure";
        throw;
    }
    return *instance;
}

Client client_for(const PromEnv& e, RequestObserver observer = {}) {
    ClientConfig c;
    c.url = e.url;
    c.timeout = 10s;
    c.bearer_token = "ignored-by-prometheus";
    c.observer = std::move(observer);
    return Client(c);
}

std::map<std::string, InstantSeries> by_pod(const std::vector<InstantSeries>& v) {
    std::map<std::string, InstantSeries> out;
    for (const auto& s : v) out[s.metric.at("pod")] = s;
    return out;
}

}  // namespace

TEST_CASE("instant queries return the replayed CPU rate and memory", "[prometheus]") {
    PromEnv& e = env();
    Client client = client_for(e);

    auto mem = by_pod(
        client.query(R"(container_memory_working_set_bytes{namespace="prom-it"})").as_vector());
    REQUIRE(mem.size() == 2);
    CHECK(mem.at("trainer-a").sample.value == kMemA);
    CHECK(mem.at("trainer-b").sample.value == kMemB);
    CHECK(mem.at("trainer-a").metric.at("container") == "main");
    CHECK(mem.at("trainer-a").metric.at("__name__") == "container_memory_working_set_bytes");
    CHECK(mem.at("trainer-a").metric.at("job") == "replay");

    auto cpu =
        by_pod(client.query(R"(rate(container_cpu_usage_seconds_total{namespace="prom-it"}[4s]))")
                   .as_vector());
    REQUIRE(cpu.size() == 2);
    CHECK(cpu.at("trainer-a").sample.value == Approx(kCpuA).epsilon(kCpuTolerance));
    CHECK(cpu.at("trainer-b").sample.value == Approx(kCpuB).epsilon(kCpuTolerance));

    // At an explicit time, one second ago.
    const auto at = std::chrono::system_clock::now() - 1s;
    auto past = client.query(
        R"(container_memory_working_set_bytes{namespace="prom-it", pod="trainer-b"})", at);
    REQUIRE(past.vector.size() == 1);
    CHECK(past.vector[0].sample.value == kMemB);
    CHECK(past.vector[0].sample.time ==
          Approx(std::chrono::duration<double>(at.time_since_epoch()).count()).margin(0.001));

    auto scalar = client.query("1 / 0");
    CHECK(scalar.type == ResultType::Scalar);
    CHECK(std::isinf(scalar.scalar.value));
}

TEST_CASE("range queries return matrices of the replayed values", "[prometheus]") {
    PromEnv& e = env();
    Client client = client_for(e);
    const auto end =
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now() - 1s);
    const auto start = end - 4s;

    auto mem = client.query_range(R"(container_memory_working_set_bytes{namespace="prom-it"})",
                                  start, end, 1s);
    REQUIRE(mem.type == ResultType::Matrix);
    REQUIRE(mem.matrix.size() == 2);
    for (const auto& s : mem.matrix) {
        INFO("pod " << s.metric.at("pod"));
        const double want = s.metric.at("pod") == "trainer-a" ? kMemA : kMemB;
        REQUIRE(s.samples.size() == 5);
        for (std::size_t i = 0; i < s.samples.size(); ++i) {
            CHECK(s.samples[i].value == want);
            CHECK(s.samples[i].time ==
                  Approx(std::chrono::duration<double>(
                             (start + static_cast<long>(i) * 1s).time_since_epoch())
                             .count()));
        }
    }

    auto cpu = client.query_range(
        R"(rate(container_cpu_usage_seconds_total{namespace="prom-it"}[3s]))", end - 2s, end, 1s);
    REQUIRE(cpu.matrix.size() == 2);
    for (const auto& s : cpu.matrix) {
        INFO("pod " << s.metric.at("pod"));
        const double want = s.metric.at("pod") == "trainer-a" ? kCpuA : kCpuB;
        REQUIRE(s.samples.size() == 3);
        for (const auto& sample : s.samples)
            CHECK(sample.value == Approx(want).epsilon(kCpuTolerance));
    }
}

TEST_CASE("batched feature queries: one query per feature and namespace, one series per pod",
          "[prometheus]") {
    PromEnv& e = env();
    int observed = 0;
    Client client = client_for(e, [&](const RequestRecord& r) {
        ++observed;
        CHECK(r.outcome == Outcome::Ok);
    });
    const auto window = 4s;  // 4 scrapes of 1 s, as the operator's (policy::rate_window)
    FeatureSnapshot snap =
        read_features(client, FeatureQueries(), {"prom-it", "prom-other"}, window);
    CHECK(snap.queries == 4);
    CHECK(observed == 4);
    CHECK(client.stats().requests == 4);
    CHECK(snap.failures.empty());
    for (const auto& f : snap.failures) WARN(f.message);

    std::set<ContainerKey> keys;
    for (const auto& [key, values] : snap.values) keys.insert(key);
    const std::set<ContainerKey> want{{"prom-it", "trainer-a", "main"},
                                      {"prom-it", "trainer-b", "main"},
                                      {"prom-other", "101", "main"},
                                      {"prom-other", "202", "main"}};
    REQUIRE(keys == want);
    for (const auto& [key, values] : snap.values) {
        INFO(key.ns << "/" << key.pod);
        const bool a = key.pod == "trainer-a" || key.pod == "101";
        REQUIRE(values.size() == 2);
        CHECK(values[0] == Approx(a ? kCpuA : kCpuB).epsilon(kCpuTolerance));
        CHECK(values[1] == (a ? kMemA : kMemB));
    }

    // The same as history, for a restarted operator.
    const auto end = std::chrono::system_clock::now() - 1s;
    FeatureHistory hist =
        read_feature_history(client, FeatureQueries(), {"prom-it"}, window, end - 3s, end, 1s);
    CHECK(hist.queries == 2);
    CHECK(hist.failures.empty());
    REQUIRE(hist.series.size() == 2);
    for (const auto& [key, per_feature] : hist.series) {
        INFO(key.pod);
        REQUIRE(per_feature.size() == 2);
        CHECK(per_feature[0].size() == 4);
        REQUIRE(per_feature[1].size() == 4);
        CHECK(per_feature[1][0].value == (key.pod == "trainer-a" ? kMemA : kMemB));
    }
}

TEST_CASE("Prometheus' errors surface with errorType, message, status and query", "[prometheus]") {
    PromEnv& e = env();
    Client client = client_for(e);
    const std::string bad =
        R"(sum(rate(container_cpu_usage_seconds_total{namespace="prom-it"}[4s]))";
    try {
        client.query(bad);
        FAIL("bad PromQL was accepted");
    } catch (const QueryError& err) {
        CHECK(err.error_type() == "bad_data");
        CHECK(err.http_status() == 400);
        CHECK_THAT(err.error_message(), Contains("parse error"));
        CHECK(err.query() == bad);
        CHECK_THAT(std::string(err.what()), Contains("bad_data") && Contains("parse error") &&
                                                Contains(bad) && Contains(e.url));
    }
    try {
        const auto now = std::chrono::system_clock::now();
        client.query_range("up", now - 24h * 365, now, 1s);
        FAIL("too many points were accepted");
    } catch (const QueryError& err) {
        CHECK(err.error_type() == "bad_data");
        CHECK_THAT(err.error_message(), Contains("11,000 points"));
    }
    try {
        // Past its deadline before it starts: Prometheus' own evaluation timeout.
        client.query("up", {}, QueryOptions{{}, 1us});
        FAIL("no timeout");
    } catch (const QueryError& err) {
        CHECK(err.error_type() == "timeout");
        CHECK(err.http_status() == 503);
        CHECK_THAT(err.error_message(), Contains("timed out"));
    }
    CHECK(client.stats().errors == 3);
    CHECK(client.stats().timeouts == 0);  // the server's timeout, not a client-side one
}

TEST_CASE("an ended execution's series disappear from Prometheus", "[prometheus]") {
    PromEnv& e = env();
    Client client = client_for(e);
    const std::string now_q = R"(container_memory_working_set_bytes{namespace="prom-ended"})";
    const std::string past_q =
        R"(max_over_time(container_memory_working_set_bytes{namespace="prom-ended"}[5m]))";
    std::string last;
    bool gone = wait_until(
        [&] {
            auto now = client.query(now_q).vector.size();
            auto past = client.query(past_q).vector;
            last = std::to_string(now) + " series now, " + std::to_string(past.size()) +
                   " in the last 5 min";
            return now == 0 && past.size() == 1;
        },
        20s, 250ms);
    INFO(last);
    REQUIRE(gone);
    auto past = client.query(past_q).vector;
    CHECK(past[0].metric.at("pod") == "short");
    CHECK(past[0].sample.value == kShortMem);
    auto metrics = http_get(e.exporter_ports[2], "/metrics");
    REQUIRE(metrics.status == 200);
    CHECK_THAT(metrics.body, !Contains("pod=\"short\""));
    CHECK_THAT(metrics.body, Contains("phasescale_replay_pods_running 0"));
}

TEST_CASE("TLS: certificates are verified, against a CA file, unless told not to", "[prometheus]") {
    const std::string binary = prometheus_binary();
    if (!on_path(binary)) FAIL("the Prometheus server (" << binary << ") is not installed");
    TempDir dir{"phasescale-prom-tls"};
    write_test_certificates(dir.path());
    const std::string web = dir.write(
        "web.yml", "tls_server_config:\n  cert_file: " + (dir.path() / "server.crt").string() +
                       "\n  key_file: " + (dir.path() / "server.key").string() + "\n");
    const std::string config = dir.write("prometheus.yml", "global:\n  scrape_interval: 1m\n");
    ClientConfig insecure;
    insecure.insecure_skip_tls_verify = true;
    insecure.timeout = 2s;
    int port = 0;
    auto server = start_server(
        "prometheus (TLS)",
        [&](int p) {
            return std::vector<std::string>{binary,
                                            "--config.file=" + config,
                                            "--web.config.file=" + web,
                                            "--storage.tsdb.path=" + (dir.path() / "data").string(),
                                            "--web.listen-address=127.0.0.1:" + std::to_string(p),
                                            "--log.level=warn"};
        },
        dir.path() / "prometheus.log", port,
        [&](int p) {
            insecure.url = "https://127.0.0.1:" + std::to_string(p);
            try {
                Client(insecure).query("vector(1)");
                return true;
            } catch (const Error&) {
                return false;
            }
        });
    const std::string url = "https://127.0.0.1:" + std::to_string(port);
    INFO("prometheus log:\n" << server->log_tail());

    // Verified by default: the test CA is unknown.
    ClientConfig strict;
    strict.url = url;
    strict.timeout = 5s;
    try {
        Client(strict).query("vector(1)");
        FAIL("an unknown certificate was accepted");
    } catch (const TransportError& err) {
        CHECK_FALSE(err.timed_out());
        CHECK_THAT(std::string(err.what()), Contains(url));
    }

    ClientConfig with_ca = strict;
    with_ca.ca_file = (dir.path() / "ca.crt").string();
    auto r = Client(with_ca).query("vector(2)");
    REQUIRE(r.vector.size() == 1);
    CHECK(r.vector[0].sample.value == 2);

    insecure.url = url;
    CHECK(Client(insecure).query("vector(3)").vector.at(0).sample.value == 3);

    // A CA that did not sign the server's certificate does not help.
    TempDir other;
    write_test_certificates(other.path());
    ClientConfig wrong_ca = strict;
    wrong_ca.ca_file = (other.path() / "ca.crt").string();
    CHECK_THROWS_AS(Client(wrong_ca).query("vector(1)"), TransportError);
}

namespace {

// Runs `phasescale ARGS...` to its end; returns its exit code, its output in `log`.
int run_cli(const PromEnv& e, std::vector<std::string> args, std::string& log) {
    args.insert(args.begin(), PHASESCALE_CLI);
    const auto log_path = e.dir.path() / "cli.log";
    ChildProcess cli(args, log_path);
    const int code = cli.wait(60s);
    log = read_file(log_path);
    return code;
}

struct CsvRow {
    double time = 0;
    std::string id;
    double cpu = 0, memory = 0;
};

std::vector<CsvRow> read_csv(const std::string& path, std::string& header) {
    std::ifstream in(path);
    std::getline(in, header);
    std::vector<CsvRow> rows;
    for (std::string line; std::getline(in, line);) {
        std::stringstream fields(line);
        CsvRow r;
        std::string t, cpu, memory;
        std::getline(fields, t, ',');
        std::getline(fields, r.id, ',');
        std::getline(fields, cpu, ',');
        std::getline(fields, memory, ',');
        r.time = std::stod(t);
        r.cpu = std::stod(cpu);
        r.memory = std::stod(memory);
        rows.push_back(r);
    }
    return rows;
}

}  // namespace

TEST_CASE(
    "phasescale export-trace writes the replayed containers as a trace, selected by pod labels",
    "[prometheus]") {
    PromEnv& e = env();
    const std::string out = (e.dir.path() / "exported.csv").string();
    const std::vector<std::string> common{
        "export-trace", "--prometheus", e.url,    "--namespace", "prom-it",
        "--since",      "4s",           "--step", "1s",          "--scrape-interval",
        "1s",           "--out",        out};
    for (const char* selector : {"", "app=trainer", "app in (trainer, other),!canary"}) {
        INFO("selector " << selector);
        std::vector<std::string> args = common;
        if (*selector != '\0') args.insert(args.end(), {"--selector", selector});
        std::string log;
        REQUIRE(run_cli(e, args, log) == 0);
        CHECK_THAT(log, Contains("exported 2 containers"));
        std::string header;
        const std::vector<CsvRow> rows = read_csv(out, header);
        CHECK(header == "timestamp,pod.id,cpu.usage.cores,mem.working.set");
        std::map<std::string, std::vector<CsvRow>> by_id;
        for (const CsvRow& r : rows) by_id[r.id].push_back(r);
        REQUIRE(by_id.size() == 2);
        for (const auto& [id, list] : by_id) {
            INFO(id);
            const bool a = id == "prom-it/trainer-a/main";
            CHECK((a || id == "prom-it/trainer-b/main"));
            // 5 steps in 4 s, ending a scrape interval back; the environment holds 10 s of data,
            // so every rate() window lies within it.
            CHECK(list.size() == 5);
            for (std::size_t i = 0; i < list.size(); ++i) {
                INFO("row " << i << " of " << list.size() << " at " << std::fixed << list[i].time);
                if (i > 0) CHECK(list[i].time - list[i - 1].time == 1);
                CHECK(list[i].memory == (a ? kMemA : kMemB));
                CHECK(list[i].cpu == Approx(a ? kCpuA : kCpuB).epsilon(kCpuTolerance));
            }
        }
    }

    std::string log;
    // Labels no pod has; a namespace without kube_pod_labels: nothing to export, said so.
    CHECK(run_cli(e,
                  {"export-trace", "--prometheus", e.url, "--namespace", "prom-it", "--selector",
                   "app=other", "--since", "6s", "--step", "1s", "--out", out},
                  log) == 1);
    CHECK_THAT(
        log,
        Contains("no samples of containers in namespace prom-it whose pods match \"app=other\""));
    CHECK(run_cli(e,
                  {"export-trace", "--prometheus", e.url, "--namespace", "prom-other", "--selector",
                   "app=trainer", "--since", "6s", "--step", "1s", "--out", out},
                  log) == 1);
    // Bad input is a usage error that names the flag.
    CHECK(run_cli(e,
                  {"export-trace", "--prometheus", e.url, "--namespace", "prom-it", "--since",
                   "6 days", "--out", out},
                  log) == 2);
    CHECK_THAT(log, Contains("--since: '6 days' is not a duration"));
    CHECK(run_cli(e,
                  {"export-trace", "--prometheus", e.url, "--namespace", "prom-it", "--selector",
                   "app in trainer", "--out", out},
                  log) == 2);
    CHECK_THAT(log, Contains("--selector"));
    CHECK(run_cli(e,
                  {"export-trace", "--prometheus", "http://127.0.0.1:1", "--namespace", "prom-it",
                   "--since", "6s", "--step", "1s", "--out", out},
                  log) == 1);
    CHECK_THAT(log, Contains("query failed"));
}

TEST_CASE("phasescale train --prometheus trains a model on the replayed history", "[prometheus]") {
    PromEnv& e = env();
    const std::string model = (e.dir.path() / "from-prometheus.model.json").string();
    std::string log;
    REQUIRE(
        run_cli(
            e, {"train",       "--prometheus", e.url, "--namespace", "prom-it", "--selector",
                "app=trainer", "--since",      "8s",  "--step",      "1s",      "--scrape-interval",
                "1s",          "--history",    "2",   "--hidden",    "4",       "--phases",
                "2",           "--epochs",     "3",   "--out",       model},
            log) == 0);
    CHECK_THAT(log, Contains("from 2 executions"));
    // --container picks containers by the name Prometheus gives them (NAMESPACE/POD/CONTAINER).
    const std::vector<std::string> small{"train",
                                         "--prometheus",
                                         e.url,
                                         "--namespace",
                                         "prom-it",
                                         "--since",
                                         "8s",
                                         "--step",
                                         "1s",
                                         "--scrape-interval",
                                         "1s",
                                         "--history",
                                         "2",
                                         "--hidden",
                                         "4",
                                         "--phases",
                                         "2",
                                         "--epochs",
                                         "3",
                                         "--out",
                                         e.dir.path() / "main.model.json"};
    std::vector<std::string> main_only = small, sidecar = small;
    main_only.insert(main_only.end(), {"--container", "main"});
    CHECK(run_cli(e, main_only, log) == 0);
    CHECK_THAT(log, Contains("from 2 executions"));
    sidecar.insert(sidecar.end(), {"--container", "sidecar"});
    CHECK(run_cli(e, sidecar, log) == 1);
    CHECK_THAT(log, Contains("--container sidecar: no execution of the trace is in that "
                             "container; its containers: main"));
    const std::string text = read_file(model);
    CHECK_THAT(text, Contains("prometheus " + e.url +
                              " namespace prom-it selector app=trainer since 8s step 1s"));
    // Trace files and Prometheus are alternatives.
    CHECK(run_cli(e,
                  {"train", "--prometheus", e.url, "--namespace", "prom-it", "--trace", model,
                   "--out", model},
                  log) == 2);
    CHECK(run_cli(e, {"train", "--out", model}, log) == 2);
    CHECK_THAT(log, Contains("give --trace FILE[,FILE...] or --prometheus URL"));
}

namespace {

// Rewrites prom-rec's state file every 200 ms while it lives: the CFS counters grow with time.
class RecommendState {
public:
    explicit RecommendState(const PromEnv& e)
        : env_(e), started_(std::chrono::steady_clock::now()) {
        thread_ = std::thread([this] {
            while (!stop_) {
                // Whole milliseconds: the counters' text is then exact, and so is their ratio.
                const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - started_);
                env_.write_recommend_state(static_cast<double>(ms.count()) / 1000, oom_kills_);
                std::this_thread::sleep_for(200ms);
            }
        });
    }
    ~RecommendState() {
        stop_ = true;
        thread_.join();
    }
    void kill_twice() { oom_kills_ = true; }

private:
    const PromEnv& env_;
    std::chrono::steady_clock::time_point started_;
    std::atomic<bool> stop_{false}, oom_kills_{false};
    std::thread thread_;
};

// The oracle: the history recommend read, replayed through the operator's tracker and bounds as
// the reconciler runs them, each target in force at the next sample; per container id, the
// target at each phase's latest sample.
std::map<std::string, std::map<std::string, phasescale::control::ContainerResources>>
policy_targets(const std::string& history,
               const std::map<std::string, phasescale::control::ContainerResources>& current) {
    namespace control = phasescale::control;
    namespace model = phasescale::model;
    const auto phase_model =
        std::make_shared<const model::PhaseModel>(model::resolve_model(model::kDefaultModelName));
    const model::Trace trace =
        model::read_trace({history}, model::TraceOptions{.columns = phase_model->features});
    const control::AutoscalerSpec spec;
    std::map<std::string, std::map<std::string, control::ContainerResources>> out;
    for (const model::Execution& e : trace.executions) {
        control::ContainerResources sized = current.at(e.id);
        control::ContainerTracker tracker(phase_model, spec);
        for (Eigen::Index r = 0; r < e.values.rows(); ++r) {
            control::TrackerInput in;
            in.timestamp = e.timestamps[static_cast<std::size_t>(r)];
            in.features = {e.values(r, 0), e.values(r, 1)};
            in.usage = {e.values(r, 0), e.values(r, 1)};
            in.allocated = {sized.requests.cpu.value_or(0), sized.requests.memory.value_or(0)};
            in.limits = {sized.limits.cpu.value_or(0), sized.limits.memory.value_or(0)};
            const control::TrackerStep step = tracker.step(in);
            if (!step.recommendation) continue;
            sized = control::target_for(sized, *step.recommendation, spec.policy_for("main"),
                                        spec.min_change)
                        .wanted;
            out[e.id][control::phase_name(*phase_model, step.phase)] = sized;
        }
    }
    return out;
}

std::optional<double> number(const nlohmann::json& j) {
    return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

}  // namespace

TEST_CASE("the default throttled queries read cAdvisor's CFS counters", "[prometheus]") {
    PromEnv& e = env();
    // train-0 throttled in a quarter of its CFS periods, for 0.5 CPU-seconds a second.
    RecommendState state(e);
    Client client = client_for(e);
    const auto window = 4s;  // 4 scrapes of 1 s
    auto column = [](const FeatureSnapshot& snap, const std::string& pod, std::size_t f) {
        const auto it = snap.values.find({"prom-rec", pod, "main"});
        return it == snap.values.end() || it->second.size() != 5 ? std::nan("") : it->second[f];
    };
    auto share = [&](const FeatureSnapshot& snap, const std::string& pod) {
        return column(snap, pod, 2);
    };
    FeatureQueries queries;  // as the operator asks
    queries.set_template(kThrottledFeature, kDefaultThrottledTemplate);
    queries.set_template(kThrottledCoresFeature, kDefaultThrottledCoresTemplate);
    queries.set_template("cfs.periods",  // to compare the seconds' rate with
                         R"(sum by (namespace, pod, container) (irate()"
                         R"(container_cpu_cfs_periods_total{namespace="{namespace}"}[{window}])))");
    FeatureSnapshot snap;
    // Until Prometheus has scraped the growing counters over a whole window.
    const bool counted = wait_until(
        [&] {
            snap = read_features(client, queries, {"prom-rec"}, window);
            return share(snap, "train-0") > 0 && std::isfinite(share(snap, "solo"));
        },
        kDataTimeout, 250ms);
    REQUIRE(counted);
    CHECK(snap.failures.empty());
    CHECK(share(snap, "train-0") == Approx(0.25).margin(0.01));
    CHECK(share(snap, "solo") == 0);  // counted, never throttled
    // A rate, where the share is a ratio: the counters are rewritten every 200 ms or so and read
    // by a scrape as they were last written, so the seconds between two scrapes 1 s apart are
    // not known here (0.1-0.4 of 0.5 seen on a busy machine). Beside the periods' rate, read at
    // the same instant from the same writes: 0.5 s for 100 periods a second.
    CHECK(column(snap, "train-0", 3) / column(snap, "train-0", 4) == Approx(0.5 / 100));
    CHECK(column(snap, "solo", 3) == 0);
}

TEST_CASE("phasescale recommend: what the policy gives on the history, beside requests and risks",
          "[prometheus]") {
    namespace control = phasescale::control;
    PromEnv& e = env();
    RecommendState state(e);
    Client client = client_for(e);
    auto value_is = [&](const std::string& promql, double want) {
        return wait_until(
            [&] {
                const auto r = client.query(promql).vector;
                return r.size() == 1 && r[0].sample.value == want;
            },
            kDataTimeout, 250ms);
    };
    // Five scrapes of the growing CFS counters, then two OOM kills, scraped.
    REQUIRE(wait_until(
        [&] {
            const auto r =
                client
                    .query(R"(count_over_time(container_cpu_cfs_periods_total{pod="train-0"}[1m]))")
                    .vector;
            return r.size() == 1 && r[0].sample.value >= 5;
        },
        kDataTimeout, 250ms));
    state.kill_twice();
    REQUIRE(value_is(R"(kube_pod_container_status_restarts_total{pod="train-0"})", 7));
    std::this_thread::sleep_for(2500ms);  // the report's instant queries look a scrape back

    const std::string out = (e.dir.path() / "recommend.json").string();
    const std::string history = (e.dir.path() / "recommend-history.csv").string();
    const std::vector<std::string> common{"recommend", "--prometheus",      e.url, "--namespace",
                                          "prom-rec",  "--window",          "20s", "--step",
                                          "1s",        "--scrape-interval", "1s"};
    auto with = [&](std::vector<std::string> more) {
        std::vector<std::string> args = common;
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    std::string log;
    REQUIRE(run_cli(e, with({"-o", "json", "--out", out, "--history-out", history}), log) == 0);
    INFO(log);
    CHECK_THAT(log, !Contains("warning"));  // every series it reads is served
    const nlohmann::json report = nlohmann::json::parse(read_file(out));
    REQUIRE(report["containers"].size() == 3);

    const std::map<std::string, control::ContainerResources> served{
        {"prom-rec/train-0/main", {"main", {2.0, 4294967296.0}, {4.0, 8589934592.0}}},
        {"prom-rec/solo/main", {"main", {0.5, 1073741824.0}, {}}},
        {"prom-rec/web-5d4f-x/main", {"main", {1.0, 2147483648.0}, {1.0, 2147483648.0}}}};
    const std::map<std::string, std::string> workloads{
        {"Job/train", "train-0"}, {"Pod/solo", "solo"}, {"Deployment/web", "web-5d4f-x"}};
    const auto expected = policy_targets(history, served);
    for (const nlohmann::json& c : report["containers"]) {
        INFO(c.dump(2));
        REQUIRE(workloads.count(c["workload"].get<std::string>()) == 1);
        const bool train = c["workload"] == "Job/train";
        const std::string pod = workloads.at(c["workload"].get<std::string>());
        CHECK(c["pods"] == nlohmann::json::array({pod}));
        const std::string id = "prom-rec/" + pod + "/main";
        const control::ContainerResources& now = served.at(id);
        CHECK(number(c["current"]["requests"]["cpu"]) == now.requests.cpu);
        CHECK(number(c["current"]["requests"]["memory"]) == now.requests.memory);
        CHECK(number(c["current"]["limits"]["cpu"]) == now.limits.cpu);
        CHECK(number(c["current"]["limits"]["memory"]) == now.limits.memory);

        // Each phase's recommendation is the policy's, to the bit; overall the largest.
        REQUIRE(expected.count(id) == 1);
        const auto& phases = expected.at(id);
        std::size_t recommended = 0;
        double largest_cpu = 0, largest_memory = 0;
        for (const nlohmann::json& p : c["phases"]) {
            if (p["requests"]["cpu"].is_null()) continue;
            ++recommended;
            const auto it = phases.find(p["phase"].get<std::string>());
            REQUIRE(it != phases.end());
            CHECK(number(p["requests"]["cpu"]) == it->second.requests.cpu);
            CHECK(number(p["requests"]["memory"]) == it->second.requests.memory);
            CHECK(number(p["limits"]["cpu"]) == it->second.limits.cpu);
            CHECK(number(p["limits"]["memory"]) == it->second.limits.memory);
            largest_cpu = std::max(largest_cpu, *it->second.requests.cpu);
            largest_memory = std::max(largest_memory, *it->second.requests.memory);
        }
        REQUIRE(recommended > 0);
        CHECK(recommended == phases.size());
        CHECK(c["recommended"]["requests"]["cpu"] == largest_cpu);
        CHECK(c["recommended"]["requests"]["memory"] == largest_memory);

        // The risks served: two OOM kills and a quarter of the periods throttled for train-0.
        CHECK(c["risk"]["oom_kills"] == (train ? 2 : 0));
        CHECK(c["risk"]["cpu_throttled_share"].get<double>() ==
              Approx(train ? 0.25 : 0).margin(1e-9));
    }

    // The other renderings of the same report.
    const std::string table = (e.dir.path() / "recommend.txt").string();
    REQUIRE(run_cli(e, with({"--out", table}), log) == 0);
    const std::string text = read_file(table);
    CHECK_THAT(text, Contains("prom-rec   Job/train"));
    CHECK_THAT(text, Contains("prom-rec   Deployment/web"));
    CHECK_THAT(text, Contains("2 -> "));
    CHECK_THAT(text, Contains("25%"));
    for (const char* format : {"yaml", "csv"}) {
        INFO(format);
        REQUIRE(run_cli(e, with({"-o", format, "--out", table}), log) == 0);
        CHECK_THAT(read_file(table), Contains("Job/train"));
    }

    // Pods by label (kube_pod_labels), and clear failures.
    REQUIRE(run_cli(e, with({"--selector", "team=vision", "-o", "json", "--out", out}), log) == 0);
    CHECK(nlohmann::json::parse(read_file(out))["containers"].size() == 3);
    CHECK(run_cli(e, with({"--selector", "team=nlp"}), log) == 1);
    CHECK_THAT(log, Contains("no samples of containers in namespace prom-rec whose pods match"));
    CHECK(run_cli(e, with({"--selector", "team in nlp"}), log) == 2);
    CHECK_THAT(log, Contains("--selector"));
    CHECK(run_cli(
              e,
              {"recommend", "--prometheus", e.url, "--namespace", "prom-rec", "--window", "a week"},
              log) == 2);
    CHECK_THAT(log, Contains("--window: 'a week' is not a duration"));
    CHECK(run_cli(e, with({"-o", "xml"}), log) == 2);
    CHECK(run_cli(e,
                  {"recommend", "--prometheus", "http://127.0.0.1:1", "--namespace", "prom-rec",
                   "--window", "20s", "--step", "1s"},
                  log) == 1);
    CHECK_THAT(log, Contains("query failed"));
}
