// [local] tests: the client against a scripted local HTTP server (what it sends, timeouts,
// unreachable servers, answers that are not Prometheus'), and the replay exporter binary itself.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <sstream>

#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>

#include "prom_support.hpp"

using namespace phasescale::prom;
using namespace prom_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const char* kEmptyVector = R"({"status":"success","data":{"resultType":"vector","result":[]}})";

std::string vector_of(const std::string& ns,
                      const std::vector<std::pair<std::string, std::string>>& pods) {
    std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
    for (std::size_t i = 0; i < pods.size(); ++i) {
        if (i) out += ",";
        out += R"({"metric":{"namespace":")" + ns + R"(","pod":")" + pods[i].first +
               R"(","container":"main"},"value":[1712345678,")" + pods[i].second + R"("]})";
    }
    return out + "]}}";
}

// The decoded value of one form field.
std::string form_field(const std::string& body, const std::string& key) {
    std::string value;
    std::size_t pos = 0;
    while (pos <= body.size()) {
        std::size_t amp = body.find('&', pos);
        std::string pair =
            body.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
        if (pair.rfind(key + "=", 0) == 0) {
            std::string enc = pair.substr(key.size() + 1);
            for (std::size_t i = 0; i < enc.size(); ++i) {
                if (enc[i] == '%' && i + 2 < enc.size()) {
                    value.push_back(
                        static_cast<char>(std::stoi(enc.substr(i + 1, 2), nullptr, 16)));
                    i += 2;
                } else {
                    value.push_back(enc[i] == '+' ? ' ' : enc[i]);
                }
            }
            return value;
        }
        if (amp == std::string::npos) break;
        pos = amp + 1;
    }
    return "<absent>";
}

}  // namespace

TEST_CASE("the client POSTs form-encoded queries with the bearer token under the URL's prefix",
          "[local]") {
    ScriptedHttpServer server([](const SeenRequest&) {
        return ScriptedResponse{200, vector_of("n", {{"a", "1.5"}})};
    });
    std::vector<std::string> seen_endpoints;
    ClientConfig c;
    c.url = server.url() + "/prom/";
    c.bearer_token = "s3cret";
    c.observer = [&](const RequestRecord& r) {
        seen_endpoints.emplace_back(r.endpoint);
        CHECK(r.outcome == Outcome::Ok);
        CHECK(r.http_status == 200);
    };
    Client client(c);
    const std::string promql = R"(up{job="x y"} + 1)";
    QueryResult r = client.query(promql, TimePoint(1712345678123ms));
    REQUIRE(r.vector.size() == 1);
    CHECK(r.vector[0].sample.value == 1.5);
    client.query_range(promql, TimePoint(1000s), TimePoint(1060s), 15s, QueryOptions{5s, 2500ms});

    auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/prom/api/v1/query");
    CHECK(requests[0].header("Authorization") == "Bearer s3cret");
    CHECK_THAT(requests[0].header("Content-Type"), StartsWith("application/x-www-form-urlencoded"));
    CHECK(requests[0].header("User-Agent") == "phasescale");
    CHECK(requests[0].body == "query=up%7Bjob%3D%22x%20y%22%7D%20%2B%201&time=1712345678.123");
    CHECK(form_field(requests[0].body, "query") == promql);
    CHECK(requests[1].target == "/prom/api/v1/query_range");
    CHECK(form_field(requests[1].body, "query") == promql);
    CHECK(form_field(requests[1].body, "start") == "1000");
    CHECK(form_field(requests[1].body, "end") == "1060");
    CHECK(form_field(requests[1].body, "step") == "15");
    CHECK(form_field(requests[1].body, "timeout") == "2.5");
    CHECK(seen_endpoints == std::vector<std::string>{"query", "query_range"});
    CHECK(client.stats().requests == 2);
    CHECK(client.stats().errors == 0);
}

TEST_CASE("a bearer token file is read again when it changes", "[local]") {
    ScriptedHttpServer server([](const SeenRequest&) {
        return ScriptedResponse{200, kEmptyVector};
    });
    TempDir dir;
    const std::string file = dir.write("token", "first-token\n");
    ClientConfig c;
    c.url = server.url();
    c.bearer_token_file = file;
    Client client(c);
    client.query("up");
    dir.write("token", "second-token\n");
    // Not every file system tells apart two writes within its timestamp granularity.
    std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) + 2s);
    client.query("up");
    auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].header("Authorization") == "Bearer first-token");
    CHECK(requests[1].header("Authorization") == "Bearer second-token");
}

TEST_CASE("a server that does not answer in time gives a TransportError that says so", "[local]") {
    ScriptedHttpServer server([](const SeenRequest&) {
        return ScriptedResponse{200, kEmptyVector, "application/json", 10s};
    });
    std::vector<Outcome> outcomes;
    ClientConfig c;
    c.url = server.url();
    c.timeout = 5s;
    c.observer = [&](const RequestRecord& r) { outcomes.push_back(r.outcome); };
    Client client(c);
    const auto started = std::chrono::steady_clock::now();
    try {
        client.query("up", {}, QueryOptions{200ms, {}});
        FAIL("no timeout");
    } catch (const TransportError& e) {
        CHECK(e.timed_out());
        CHECK(e.query() == "up");
        CHECK_THAT(std::string(e.what()),
                   Contains("no answer within 0.2 s") && Contains(server.url()));
    }
    CHECK(std::chrono::steady_clock::now() - started < 5s);
    CHECK(outcomes == std::vector<Outcome>{Outcome::Timeout});
    CHECK(client.stats().timeouts == 1);
    CHECK(client.stats().errors == 1);
}

TEST_CASE("queries with ever different waits share a few connections", "[local]") {
    // The operator cuts each query's wait to what is left of its tick, so no two waits are
    // alike; each must not cost a connection (and a pool) of its own. Waits are rounded down
    // to 1, 2 or 5 times a power of ten: these 40 (4000 ms down to 2557 ms) take 2000 ms.
    test_support::FakeHttpServer server([](const SeenRequest&,
                                           const test_support::HttpExchange& send) {
        send(test_support::FakeHttpServer::response(200, kEmptyVector));  // keeps the connection
    });
    ClientConfig c;
    c.url = server.url();
    c.timeout = 5s;
    Client client(c);
    for (int i = 0; i < 40; ++i)
        client.query("up", {}, QueryOptions{std::chrono::milliseconds(4000 - 37 * i), {}});
    CHECK(server.requests().size() == 40);
    // One pool; cpprest may open a second connection before the first is back in it.
    CHECK(server.connections() <= 4);
}

TEST_CASE("an unreachable server gives a TransportError naming it", "[local]") {
    ClientConfig c;
    c.url = "http://127.0.0.1:" + std::to_string(free_port());
    c.timeout = 5s;
    Client client(c);
    try {
        client.query("up");
        FAIL("no error");
    } catch (const TransportError& e) {
        CHECK_FALSE(e.timed_out());
        CHECK(e.url() == c.url);
        CHECK_THAT(std::string(e.what()), Contains(c.url) && Contains("query: up"));
    }
    CHECK(client.stats().errors == 1);
}

TEST_CASE("answers that are not Prometheus' are reported as such", "[local]") {
    int next = 0;
    ScriptedHttpServer server([&next](const SeenRequest&) {
        switch (next++) {
            case 0: return ScriptedResponse{502, "<html>Bad Gateway</html>", "text/html"};
            case 1: return ScriptedResponse{200, "hello", "text/plain"};
            default:
                return ScriptedResponse{422, R"({"status":"error","errorType":"execution",)"
                                             R"("error":"many-to-many matching not allowed"})"};
        }
    });
    std::vector<Outcome> outcomes;
    ClientConfig c;
    c.url = server.url();
    c.observer = [&](const RequestRecord& r) { outcomes.push_back(r.outcome); };
    Client client(c);
    try {
        client.query("up");
        FAIL("no error");
    } catch (const QueryError& e) {
        CHECK(e.http_status() == 502);
        CHECK(e.error_type().empty());
        CHECK_THAT(e.error_message(), Contains("Bad Gateway"));
    }
    try {
        client.query("up");
        FAIL("no error");
    } catch (const QueryError& e) {
        CHECK(e.http_status() == 200);
        CHECK(e.error_type() == "bad_response");
        CHECK_THAT(e.error_message(), Contains("hello"));
    }
    try {
        client.query("a * on() b");
        FAIL("no error");
    } catch (const QueryError& e) {
        CHECK(e.http_status() == 422);
        CHECK(e.error_type() == "execution");
        CHECK_THAT(std::string(e.what()), Contains("many-to-many") && Contains("a * on() b"));
    }
    CHECK(outcomes ==
          std::vector<Outcome>{Outcome::ApiError, Outcome::BadResponse, Outcome::ApiError});
}

TEST_CASE("read_features makes one query per feature and namespace and keeps going past failures",
          "[local]") {
    ScriptedHttpServer server([](const SeenRequest& req) {
        const std::string body = req.body;
        const bool cpu = body.find("container_cpu_usage_seconds_total") != std::string::npos;
        if (body.find("%22broken%22") != std::string::npos) {
            return ScriptedResponse{
                503, R"({"status":"error","errorType":"timeout","error":"query timed out"})"};
        }
        if (body.find("%22ns-a%22") != std::string::npos) {
            // A series of another namespace in the answer is not ns-a's.
            return ScriptedResponse{200, cpu ? vector_of("ns-a", {{"p1", "1.5"}, {"p2", "0.5"}})
                                             : vector_of("ns-a", {{"p1", "1000"}, {"p3", "3000"}})};
        }
        return ScriptedResponse{
            200, cpu ? vector_of("ns-x", {{"q", "9"}}) : vector_of("ns-b", {{"q", "2000"}})};
    });
    ClientConfig c;
    c.url = server.url();
    Client client(c);
    FeatureSnapshot snap = read_features(client, FeatureQueries(), {"ns-a", "ns-b", "broken"}, 60s);
    CHECK(snap.queries == 6);
    CHECK(server.requests().size() == 6);
    CHECK(snap.features == std::vector<std::string>{"cpu.usage.cores", "mem.working.set"});
    REQUIRE(snap.failures.size() == 2);
    CHECK(snap.failures[0].ns == "broken");
    CHECK(snap.failures[0].feature == "cpu.usage.cores");
    CHECK(snap.failures[0].timed_out);
    // The message is ours; the reply's own words are kept apart, for a debug log only.
    CHECK_THAT(snap.failures[0].message,
               Contains("HTTP 503 timeout") && !Contains("query timed out"));
    CHECK_THAT(snap.failures[0].reply, Contains("query timed out"));
    REQUIRE(snap.values.size() == 4);
    CHECK(snap.values.at({"ns-a", "p1", "main"}) == std::vector<double>{1.5, 1000});
    CHECK(snap.values.at({"ns-a", "p2", "main"})[0] == 0.5);
    CHECK(std::isnan(snap.values.at({"ns-a", "p2", "main"})[1]));
    CHECK(std::isnan(snap.values.at({"ns-a", "p3", "main"})[0]));
    CHECK(snap.values.at({"ns-b", "q", "main"})[1] == 2000);
    CHECK(snap.values.count({"ns-x", "q", "main"}) == 0);
}

TEST_CASE("read_feature_history asks long ranges in chunks Prometheus accepts, and joins them",
          "[local]") {
    // Answers each range query with one sample at its start and one at its end.
    ScriptedHttpServer server([](const SeenRequest& req) {
        auto param = [&](const std::string& name) {
            const auto at = req.body.find(name + "=");
            const auto end = req.body.find('&', at);
            return req.body.substr(at + name.size() + 1, end == std::string::npos
                                                             ? std::string::npos
                                                             : end - at - name.size() - 1);
        };
        const std::string start = param("start"), end = param("end");
        return ScriptedResponse{
            200,
            R"({"status":"success","data":{"resultType":"matrix",)"
            R"("result":[{"metric":{"namespace":"ns","pod":"p","container":"main"},"values":[[)" +
                start + R"(,"1"],[)" + end + R"(,"2"]]}]}})"};
    });
    ClientConfig c;
    c.url = server.url();
    Client client(c);
    const TimePoint start{std::chrono::seconds(1'700'000'000)};
    // 25,001 steps of 1 s: chunks of kMaxPointsPerQuery steps, the last one shorter.
    const TimePoint end = start + std::chrono::seconds(25'000);
    FeatureHistory h = read_feature_history(client, FeatureQueries(), {"ns"}, 60s, start, end, 1s);
    CHECK(h.failures.empty());
    CHECK(h.queries == 6);  // 3 chunks x 2 features
    REQUIRE(server.requests().size() == 6);
    const auto& samples = h.series.at({"ns", "p", "main"})[0];
    REQUIRE(samples.size() == 6);
    const double t0 = 1'700'000'000;
    const std::vector<double> want{t0,          t0 + 9'999,  t0 + 10'000,
                                   t0 + 19'999, t0 + 20'000, t0 + 25'000};
    for (std::size_t i = 0; i < samples.size(); ++i) CHECK(samples[i].time == want[i]);
}

// ----------------------------------------------------------------------- the exporter binary

namespace {

struct Run {
    int code;
    std::string output;
};

Run run_exporter(const std::vector<std::string>& args) {
    TempDir dir;
    std::vector<std::string> argv{PHASESCALE_REPLAY_EXPORTER};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess p(argv, dir.path() / "log");
    int code = p.wait(10s);
    return {code, p.log_tail()};
}

}  // namespace

TEST_CASE("the exporter explains itself and refuses bad arguments clearly", "[local]") {
    Run help = run_exporter({"--help"});
    CHECK(help.code == 0);
    CHECK_THAT(help.output, Contains("container_cpu_usage_seconds_total") && Contains("--speed") &&
                                Contains("--pod-map") && Contains("--loop"));

    TempDir dir;
    const std::string csv = dir.write(
        "t.csv", "timestamp,pod.id,cpu.usage.cores,mem.working.set\n0,1,1,10\n30,1,1,10\n");
    Run missing = run_exporter({"--trace", (dir.path() / "nope.csv").string(), "--namespace", "n"});
    CHECK(missing.code != 0);
    CHECK_THAT(missing.output, Contains("nope.csv"));

    Run no_ns = run_exporter({"--trace", csv});
    CHECK(no_ns.code != 0);
    CHECK_THAT(no_ns.output, Contains("--namespace"));

    Run bad_map = run_exporter({"--trace", csv, "--namespace", "n", "--pod-map", "2=x", "--listen",
                                "127.0.0.1:" + std::to_string(free_port())});
    CHECK(bad_map.code == 1);
    CHECK_THAT(bad_map.output, Contains("--pod-map 2=x") && Contains("no execution"));

    Run bad_speed = run_exporter({"--trace", csv, "--namespace", "n", "--speed", "-1"});
    CHECK(bad_speed.code == 1);
    CHECK_THAT(bad_speed.output, Contains("--speed"));

    const std::string bad_csv = dir.write("bad.csv", "timestamp,pod.id,cpu.usage.cores\n0,1,1\n");
    Run bad_trace = run_exporter({"--trace", bad_csv, "--namespace", "n"});
    CHECK(bad_trace.code == 1);
    CHECK_THAT(bad_trace.output, Contains("bad.csv") && Contains("mem.working.set"));

    ScriptedHttpServer busy([](const SeenRequest&) { return ScriptedResponse{}; });
    Run in_use = run_exporter({"--trace", csv, "--namespace", "n", "--listen",
                               "127.0.0.1:" + std::to_string(busy.port())});
    CHECK(in_use.code == 1);
    CHECK_THAT(in_use.output,
               Contains("cannot listen on 127.0.0.1:" + std::to_string(busy.port())));
}

TEST_CASE("the exporter serves the trace's pods, ends them, and stops on SIGTERM", "[local]") {
    TempDir dir;
    // Two executions; at 60 trace s per wall s, "quick" runs 1 wall s, "slow" 10.
    const std::string csv = dir.write("t.csv",
                                      "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
                                      "0,q,2,1000\n30,q,2,1000\n"
                                      "0,s,0.5,4096\n300,s,0.5,4096\n");
    const int port = free_port();
    ChildProcess exporter({PHASESCALE_REPLAY_EXPORTER, "--trace", csv, "--namespace", "ns-1",
                           "--speed", "60", "--listen", "127.0.0.1:" + std::to_string(port),
                           "--pod-map", "q=quick,s=slow", "--container", "trainer"},
                          dir.path() / "exporter.log");
    HttpResult first;
    bool up = wait_until(
        [&] { return (first = http_get(port, "/metrics")).status == 200 || !exporter.running(); },
        10s);
    INFO("exporter log:\n" << exporter.log_tail());
    REQUIRE(up);
    REQUIRE(first.status == 200);
    CHECK_THAT(first.body,
               Contains(R"(container_memory_working_set_bytes{namespace="ns-1",pod="slow",)"
                        R"(container="trainer"} 4096)"));
    CHECK_THAT(first.body,
               Contains(R"(container_cpu_usage_seconds_total{namespace="ns-1",pod="slow",)"
                        R"(container="trainer"} )"));
    CHECK_THAT(exporter.log_tail(),
               Contains("listening on http://127.0.0.1:" + std::to_string(port) + "/metrics"));

    HttpResult later;
    bool quick_gone = wait_until(
        [&] {
            later = http_get(port, "/metrics");
            return later.status == 200 && later.body.find("pod=\"quick\"") == std::string::npos;
        },
        10s);
    CHECK(quick_gone);
    CHECK_THAT(later.body, Contains("pod=\"slow\""));
    CHECK(http_get(port, "/nope").status == 404);
    CHECK(http_get(port, "/healthz").status == 200);

    kill(exporter.pid(), SIGTERM);
    CHECK(exporter.wait(10s) == 0);
}

namespace {

// GET https://127.0.0.1:PORT/PATH with curl, trusting only `ca` (the test CA): the body, or
// "curl failed (CODE): ..." with curl's message.
std::string curl_https(int port, const std::string& path, const std::filesystem::path& ca) {
    TempDir dir;
    const auto body = dir.path() / "body";
    ChildProcess curl(
        {"curl", "--silent", "--show-error", "--fail", "--max-time", "5", "--cacert", ca.string(),
         "--output", body.string(), "https://127.0.0.1:" + std::to_string(port) + path},
        dir.path() / "log");
    const int code = curl.wait(10s);
    if (code != 0) return "curl failed (" + std::to_string(code) + "): " + curl.log_tail();
    return read_file(body);
}

}  // namespace

TEST_CASE("the exporter serves the kubelet's resource metrics over HTTPS", "[local]") {
    TempDir dir;
    write_test_certificates(dir.path());
    const std::string csv = dir.write("t.csv",
                                      "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
                                      "0,q,2,1000\n30,q,2,1000\n"
                                      "0,s,0.5,4096\n300,s,0.5,4096\n");
    const int port = free_port(), kubelet_port = free_port();
    ChildProcess exporter(
        {PHASESCALE_REPLAY_EXPORTER, "--trace", csv, "--namespace", "ns-1", "--speed", "60",
         "--listen", "127.0.0.1:" + std::to_string(port), "--pod-map", "q=quick,s=slow",
         "--container", "trainer", "--kubelet-listen", "127.0.0.1:" + std::to_string(kubelet_port),
         "--kubelet-tls-cert", (dir.path() / "server.crt").string(), "--kubelet-tls-key",
         (dir.path() / "server.key").string()},
        dir.path() / "exporter.log");
    const auto wall_ms = [] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    };
    const auto started = wall_ms();
    REQUIRE(wait_until([&] { return http_get(port, "/healthz").status == 200; }, 10s));
    INFO("exporter log:\n" << exporter.log_tail());
    CHECK_THAT(exporter.log_tail(), Contains("kubelet resource metrics on https://127.0.0.1:" +
                                             std::to_string(kubelet_port) + "/metrics/resource"));

    const std::string first = curl_https(kubelet_port, "/metrics/resource", dir.path() / "ca.crt");
    const auto first_seen = wall_ms();
    INFO("first answer:\n" << first);
    const std::string slow_cpu =
        R"(container_cpu_usage_seconds_total{container="trainer",namespace="ns-1",pod="slow"} )";
    const auto line = first.find(slow_cpu);
    REQUIRE(line != std::string::npos);
    CHECK_THAT(
        first,
        Contains(R"(container_memory_working_set_bytes{container="trainer",namespace="ns-1",)"
                 R"(pod="slow"} 4096 )") &&
            Contains(R"(pod_memory_working_set_bytes{namespace="ns-1",pod="slow"} 4096 )") &&
            Contains("node_cpu_usage_seconds_total ") && Contains("resource_scrape_error 0"));
    // Stamped with the scrape's wall clock in milliseconds.
    std::istringstream sample(first.substr(line + slow_cpu.size()));
    double cpu = 0;
    long long stamp = 0;
    sample >> cpu >> stamp;
    CHECK(stamp >= started - 1000);
    CHECK(stamp <= first_seen);
    CHECK(cpu >= 0);

    // "quick" runs one wall second: then it is gone, as on /metrics.
    std::string later;
    CHECK(wait_until(
        [&] {
            later = curl_https(kubelet_port, "/metrics/resource", dir.path() / "ca.crt");
            return later.find("pod=\"quick\"") == std::string::npos;
        },
        10s));
    CHECK_THAT(later, Contains("pod=\"slow\"") && !Contains("curl failed"));
    CHECK(curl_https(kubelet_port, "/healthz", dir.path() / "ca.crt") == "ok\n");
    CHECK_THAT(curl_https(kubelet_port, "/metrics", dir.path() / "ca.crt"),
               Contains("curl failed (22)"));  // 404: only the kubelet's path is served there
    CHECK(http_get(kubelet_port, "/metrics/resource").status == 0);  // HTTPS only
    CHECK(http_get(port, "/metrics").status == 200);                 // /metrics is as it was

    kill(exporter.pid(), SIGTERM);
    CHECK(exporter.wait(10s) == 0);
}

TEST_CASE("the exporter refuses bad kubelet endpoint flags clearly", "[local]") {
    TempDir dir, other;
    write_test_certificates(dir.path());
    write_test_certificates(other.path());
    const std::string csv = dir.write(
        "t.csv", "timestamp,pod.id,cpu.usage.cores,mem.working.set\n0,1,1,10\n30,1,1,10\n");
    const std::string crt = (dir.path() / "server.crt").string();
    const std::string key = (dir.path() / "server.key").string();
    const std::vector<std::string> base{
        "--trace", csv, "--namespace", "n", "--listen", "127.0.0.1:" + std::to_string(free_port())};
    const auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return run_exporter(args);
    };
    const std::string kubelet = "127.0.0.1:" + std::to_string(free_port());

    Run help = run_exporter({"--help"});
    CHECK_THAT(help.output, Contains("--kubelet-listen") && Contains("--kubelet-tls-cert") &&
                                Contains("/metrics/resource") && Contains("node_cpu_usage"));

    Run no_tls = run({"--kubelet-listen", kubelet});
    CHECK(no_tls.code == 1);
    CHECK_THAT(no_tls.output,
               Contains("--kubelet-listen needs --kubelet-tls-cert and --kubelet-tls-key"));
    Run no_key = run({"--kubelet-listen", kubelet, "--kubelet-tls-cert", crt});
    CHECK(no_key.code == 1);
    CHECK_THAT(no_key.output, Contains("--kubelet-tls-key"));

    Run no_listen = run({"--kubelet-tls-cert", crt, "--kubelet-tls-key", key});
    CHECK(no_listen.code == 1);
    CHECK_THAT(no_listen.output, Contains("are for --kubelet-listen"));

    Run bad_address =
        run({"--kubelet-listen", "127.0.0.1", "--kubelet-tls-cert", crt, "--kubelet-tls-key", key});
    CHECK(bad_address.code == 1);
    CHECK_THAT(bad_address.output,
               Contains("--kubelet-listen \"127.0.0.1\"") && Contains("HOST:PORT"));

    Run missing = run({"--kubelet-listen", kubelet, "--kubelet-tls-cert",
                       (dir.path() / "nope.crt").string(), "--kubelet-tls-key", key});
    CHECK(missing.code != 0);
    CHECK_THAT(missing.output, Contains("--kubelet-tls-cert") && Contains("nope.crt"));

    Run not_pem =
        run({"--kubelet-listen", kubelet, "--kubelet-tls-cert", csv, "--kubelet-tls-key", key});
    CHECK(not_pem.code == 1);
    CHECK_THAT(not_pem.output, Contains("--kubelet-tls-cert " + csv + ": not a PEM certificate"));

    Run wrong_key = run({"--kubelet-listen", kubelet, "--kubelet-tls-cert", crt,
                         "--kubelet-tls-key", (other.path() / "server.key").string()});
    CHECK(wrong_key.code == 1);
    CHECK_THAT(wrong_key.output,
               Contains("--kubelet-tls-key") && Contains("not the PEM private key of " + crt));

    ScriptedHttpServer busy([](const SeenRequest&) { return ScriptedResponse{}; });
    const std::string busy_address = "127.0.0.1:" + std::to_string(busy.port());
    Run in_use = run(
        {"--kubelet-listen", busy_address, "--kubelet-tls-cert", crt, "--kubelet-tls-key", key});
    CHECK(in_use.code == 1);
    CHECK_THAT(in_use.output, Contains("cannot listen on " + busy_address));
}
