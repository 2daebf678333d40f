// [unit] tests of the Prometheus client and the replay: answer parsing, query building, feature
// queries, the replay's arithmetic. No server, no network.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>
#include <phasescale/prom/pod_selector.hpp>
#include <phasescale/prom/result.hpp>

#include "prom_support.hpp"
#include "replay.hpp"

using namespace phasescale::prom;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

QueryError query_error_of(std::string_view body, int status = 0) {
    try {
        parse_response(body, "up", "http://prom:9090", status);
    } catch (const QueryError& e) {
        return e;
    }
    FAIL("parse_response did not throw for: " << body);
    throw;  // unreachable
}

}  // namespace

TEST_CASE("parse_response reads an instant vector with labels and special values", "[unit]") {
    const char* body = R"({"status":"success","data":{"resultType":"vector","result":[
        {"metric":{"__name__":"up","job":"a"},"value":[1712345678.123,"1"]},
        {"metric":{"pod":"p"},"value":[1712345678.123,"NaN"]},
        {"metric":{},"value":[1712345678,"+Inf"]},
        {"metric":{},"value":[1712345678,"-Inf"]},
        {"metric":{},"value":[1712345678,"1.5e-3"]}]}})";
    QueryResult r = parse_response(body);
    REQUIRE(r.type == ResultType::Vector);
    REQUIRE(r.vector.size() == 5);
    CHECK(r.vector[0].metric.at("__name__") == "up");
    CHECK(r.vector[0].metric.at("job") == "a");
    CHECK(r.vector[0].sample.time == Approx(1712345678.123));
    CHECK(r.vector[0].sample.value == 1.0);
    CHECK(std::isnan(r.vector[1].sample.value));
    CHECK(r.vector[2].sample.value == std::numeric_limits<double>::infinity());
    CHECK(r.vector[3].sample.value == -std::numeric_limits<double>::infinity());
    CHECK(r.vector[4].sample.value == Approx(0.0015));
    CHECK(r.as_vector().size() == 5);
    CHECK_THROWS_AS(r.as_matrix(), QueryError);
    CHECK(r.warnings.empty());
}

TEST_CASE("parse_response reads a range matrix, a scalar, a string and warnings", "[unit]") {
    QueryResult m = parse_response(
        R"({"status":"success","warnings":["too many samples"],"data":{"resultType":"matrix",
        "result":[{"metric":{"pod":"a"},"values":[[10,"1"],[11,"2"],[12,"NaN"]]},
        {"metric":{"pod":"b"},"values":[]}]}})");
    REQUIRE(m.type == ResultType::Matrix);
    REQUIRE(m.matrix.size() == 2);
    REQUIRE(m.matrix[0].samples.size() == 3);
    CHECK(m.matrix[0].samples[1].time == 11);
    CHECK(m.matrix[0].samples[1].value == 2);
    CHECK(std::isnan(m.matrix[0].samples[2].value));
    CHECK(m.matrix[1].samples.empty());
    CHECK(m.warnings == std::vector<std::string>{"too many samples"});

    QueryResult s = parse_response(
        R"({"status":"success","data":{"resultType":"scalar","result":[5.5,"+Inf"]}})");
    REQUIRE(s.type == ResultType::Scalar);
    CHECK(s.scalar.time == 5.5);
    CHECK(std::isinf(s.scalar.value));

    QueryResult t = parse_response(
        R"({"status":"success","data":{"resultType":"string","result":[7,"hello"]}})");
    REQUIRE(t.type == ResultType::String);
    CHECK(t.string_value == "hello");
    CHECK(t.scalar.time == 7);
}

TEST_CASE("parse_response skips native histograms", "[unit]") {
    QueryResult r = parse_response(R"({"status":"success","data":{"resultType":"vector","result":[
        {"metric":{"a":"1"},"histogram":[1,{"count":"1","sum":"1"}]},
        {"metric":{"a":"2"},"value":[1,"3"]}]}})");
    REQUIRE(r.vector.size() == 1);
    CHECK(r.vector[0].metric.at("a") == "2");
}

TEST_CASE("parse_response turns API errors into QueryError with errorType and message", "[unit]") {
    QueryError e = query_error_of(
        R"({"status":"error","errorType":"bad_data",)"
        R"("error":"invalid parameter \"query\": 1:5: parse error: unclosed left parenthesis"})",
        400);
    CHECK(e.error_type() == "bad_data");
    CHECK(e.http_status() == 400);
    CHECK_THAT(e.error_message(), Contains("unclosed left parenthesis"));
    CHECK(e.query() == "up");
    CHECK_THAT(std::string(e.what()), Contains("HTTP 400 bad_data") && Contains("query: up") &&
                                          Contains("http://prom:9090") &&
                                          Contains("unclosed left parenthesis"));

    QueryError t = query_error_of(
        R"({"status":"error","errorType":"timeout","error":"query timed out in query queue"})",
        503);
    CHECK(t.error_type() == "timeout");
    CHECK(t.http_status() == 503);
}

TEST_CASE("parse_response rejects malformed answers as bad_response", "[unit]") {
    CHECK(query_error_of("not json", 200).error_type() == "bad_response");
    CHECK(query_error_of("", 200).error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":"success"})").error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":"success","data":{"resultType":"vector","result":{}}})")
              .error_type() == "bad_response");
    CHECK(query_error_of(
              R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},)"
              R"("value":[1,2]}]}})")
              .error_type() == "bad_response");
    auto bad_value = query_error_of(
        R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,)"
        R"("abc"]}]}})");
    CHECK(bad_value.error_type() == "bad_response");
    CHECK_THAT(bad_value.error_message(), Contains("\"abc\""));
    CHECK(query_error_of(
              R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},)"
              R"("value":[1,"2"]}]}})")
              .error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":"success","data":{"resultType":"histogram","result":[]}})")
              .error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":"weird"})").error_type() == "bad_response");
    // A status that is not a string threw json::type_error (a seed of tests/fuzz/prom_response
    // now).
    CHECK(query_error_of(R"({"status":1})").error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":["success"],"data":{}})").error_type() == "bad_response");
    CHECK(query_error_of(R"({"status":null})", 502).http_status() == 502);
}

TEST_CASE("parse_response reports an HTTP error without a Prometheus body plainly", "[unit]") {
    QueryError e = query_error_of("<html>502 Bad Gateway</html>", 502);
    CHECK(e.http_status() == 502);
    CHECK(e.error_type().empty());
    CHECK_THAT(e.error_message(), Contains("502 Bad Gateway"));
}

TEST_CASE("parse_value reads Prometheus' numbers", "[unit]") {
    CHECK(parse_value("0") == 0);
    CHECK(parse_value("-2.5") == -2.5);
    CHECK(parse_value("+3") == 3);
    CHECK(parse_value("1e9") == 1e9);
    CHECK(parse_value("1073741824") == 1073741824.0);
    CHECK(std::isnan(parse_value("NaN")));
    CHECK(parse_value("+Inf") == std::numeric_limits<double>::infinity());
    CHECK(parse_value("-Inf") == -std::numeric_limits<double>::infinity());
    CHECK_THROWS_AS(parse_value(""), std::invalid_argument);
    CHECK_THROWS_AS(parse_value("1x"), std::invalid_argument);
    CHECK_THROWS_AS(parse_value("x"), std::invalid_argument);
}

TEST_CASE("form encoding and time formats", "[unit]") {
    CHECK(form_encode("up") == "up");
    CHECK(form_encode("a-b_c.d~e") == "a-b_c.d~e");
    CHECK(form_encode(R"(rate(x{a="b c"}[5m]))") == "rate%28x%7Ba%3D%22b%20c%22%7D%5B5m%5D%29");
    CHECK(form_encode("+&=%/") == "%2B%26%3D%25%2F");
    CHECK(form_encode("\xc3\xa9") == "%C3%A9");
    CHECK(format_seconds(15s) == "15");
    CHECK(format_seconds(500ms) == "0.5");
    CHECK(format_seconds(1us) == "0.000001");
    CHECK(format_seconds(1250ms) == "1.25");
    CHECK(format_time(TimePoint(1712345678123ms)) == "1712345678.123");
    CHECK(format_time(TimePoint(1712345678000ms)) == "1712345678");
}

TEST_CASE("the client rejects unusable configurations", "[unit]") {
    CHECK_THROWS_AS(Client(ClientConfig{}), ConfigError);
    ClientConfig c;
    c.url = "ftp://prom:9090";
    CHECK_THROWS_WITH(Client(c), Contains("http://"));
    c.url = "http://prom:9090";
    c.bearer_token_file = "/nonexistent/token";
    CHECK_THROWS_WITH(Client(c), Contains("/nonexistent/token"));
    c.bearer_token_file.clear();
    c.ca_file = "/nonexistent/ca.crt";
    CHECK_THROWS_WITH(Client(c), Contains("/nonexistent/ca.crt"));
    c.ca_file.clear();
    c.timeout = 0ms;
    CHECK_THROWS_AS(Client(c), ConfigError);
    c.timeout = 1s;
    Client ok(c);
    CHECK(ok.stats().requests == 0);
    CHECK_THROWS_AS(ok.query_range("up", TimePoint(10s), TimePoint(20s), 0ms), QueryError);
    CHECK_THROWS_AS(ok.query_range("up", TimePoint(20s), TimePoint(10s), 1s), QueryError);
}

TEST_CASE("the default feature queries, per namespace, with the window of the tick", "[unit]") {
    FeatureQueries q;
    REQUIRE(q.features() == std::vector<std::string>{"cpu.usage.cores", "mem.working.set"});
    CHECK(promql_duration(60s) == "60s");
    CHECK(promql_duration(1500ms) == "1500ms");
    CHECK_THROWS_AS(promql_duration(0ms), ConfigError);
    CHECK(q.render("cpu.usage.cores", "team-a", 60s) ==
          R"(sum by (namespace, pod, container) (irate()"
          R"(container_cpu_usage_seconds_total{namespace="team-a", container!="", )"
          R"(container!="POD"}[60s])))");
    CHECK(q.render("mem.working.set", "team-a", 60s) ==
          R"(max by (namespace, pod, container) ()"
          R"(container_memory_working_set_bytes{namespace="team-a", container!="", )"
          R"(container!="POD"}))");
    q.set_template(kThrottledFeature, kDefaultThrottledTemplate);  // as the operator does
    CHECK(q.render("cpu.throttled.share", "team-a", 60s) ==
          R"(sum by (namespace, pod, container) (irate()"
          R"(container_cpu_cfs_throttled_periods_total{namespace="team-a", container!="", )"
          R"(container!="POD"}[60s])) / sum by (namespace, pod, container) (irate()"
          R"(container_cpu_cfs_periods_total{namespace="team-a", container!="", )"
          R"(container!="POD"}[60s])))");
    q.set_template(kThrottledCoresFeature, kDefaultThrottledCoresTemplate);
    CHECK(q.render("cpu.throttled.cores", "team-a", 60s) ==
          R"(sum by (namespace, pod, container) (irate()"
          R"(container_cpu_cfs_throttled_seconds_total{namespace="team-a", container!="", )"
          R"(container!="POD"}[60s])))");
    CHECK_THROWS_AS(q.render("gpu", "team-a", 60s), ConfigError);
}

TEST_CASE("label values are escaped for PromQL", "[unit]") {
    CHECK(escape_label_value("plain-ns") == "plain-ns");
    CHECK(escape_label_value(R"(a"b\c)") == R"(a\"b\\c)");
    CHECK(escape_label_value("a\nb\tc") == R"(a\nb\tc)");
    FeatureQueries q;
    CHECK_THAT(q.render("mem.working.set", "x\"}) or vector(1", 1s),
               Contains(R"(namespace="x\"}) or vector(1")"));
}

TEST_CASE("feature query templates can be overridden and are checked", "[unit]") {
    FeatureQueries q;
    q.set_template(
        "mem.working.set",
        R"(max by (namespace, pod, container) (container_memory_rss{namespace="{namespace}"}))");
    q.set_template("disk.io",
                   R"(sum by (namespace, pod, container) (rate()"
                   R"(container_fs_reads_bytes_total{namespace="{namespace}"}[{window}])))");
    CHECK(q.features() ==
          std::vector<std::string>{"cpu.usage.cores", "mem.working.set", "disk.io"});
    CHECK(q.render("mem.working.set", "n", 1s) ==
          R"(max by (namespace, pod, container) (container_memory_rss{namespace="n"}))");
    CHECK(q.render("disk.io", "n", 30s) ==
          R"(sum by (namespace, pod, container) (rate()"
          R"(container_fs_reads_bytes_total{namespace="n"}[30s])))");
    CHECK_THROWS_WITH(q.set_template("x", "sum(container_memory_rss)"), Contains("{namespace}"));
    CHECK_THROWS_WITH(q.set_template("x", R"(m{namespace="{namespace}"}[{range}])"),
                      Contains("{range}"));
    CHECK_THROWS_WITH(q.set_template("x", R"(m{namespace="{namespace}"}[{window])"),
                      Contains("unclosed"));
    // PromQL's own braces are no placeholders: label matchers, regex repeats.
    CHECK_NOTHROW(
        q.set_template("y", R"(m{namespace="{namespace}", pod=~"w-[0-9]{2,3}", job != "x"})"));
    CHECK_THROWS_AS(FeatureQueries(std::vector<FeatureQuery>{}), ConfigError);
    FeatureQueries only(std::vector<FeatureQuery>{{"cpu", R"(x{namespace="{namespace}"})"}});
    CHECK(only.features() == std::vector<std::string>{"cpu"});
}

TEST_CASE("query results become values by (namespace, pod, container)", "[unit]") {
    QueryResult r = parse_response(R"({"status":"success","data":{"resultType":"vector","result":[
        {"metric":{"namespace":"n","pod":"a","container":"main"},"value":[1,"1.5"]},
        {"metric":{"namespace":"n","pod":"b","container":"main"},"value":[1,"0.25"]},
        {"metric":{"namespace":"n","pod":"c","container":"main"},"value":[1,"NaN"]},
        {"metric":{"namespace":"n","pod":"d"},"value":[1,"7"]}]}})");
    auto values = container_values(r);
    REQUIRE(values.size() == 2);
    CHECK(values.at({"n", "a", "main"}) == 1.5);
    CHECK(values.at({"n", "b", "main"}) == 0.25);

    QueryResult m = parse_response(R"({"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"namespace":"n","pod":"a","container":"main"},
        "values":[[1,"1"],[2,"NaN"],[3,"3"]]}]}})");
    auto series = container_series(m);
    REQUIRE(series.size() == 1);
    const auto& s = series.at({"n", "a", "main"});
    REQUIRE(s.size() == 2);
    CHECK(s[1].time == 3);
    CHECK_THROWS_AS(container_values(m), QueryError);
    CHECK_THROWS_AS(container_series(r), QueryError);
}

// ------------------------------------------------------------------------------------- replay

namespace {

using phasescale::replay::PodTrace;
using phasescale::replay::Replay;

PodTrace pod(std::string name, std::vector<double> offsets, std::vector<double> cpu,
             std::vector<double> mem) {
    PodTrace p;
    p.pod = std::move(name);
    p.source = "test: " + p.pod;
    p.offsets = std::move(offsets);
    p.cpu = std::move(cpu);
    p.memory = std::move(mem);
    return p;
}

}  // namespace

TEST_CASE("replay: the CPU counter's rate in wall time is the trace's cores", "[unit]") {
    // 0.5 cores for 60 trace s, then 2 cores for 60 trace s (the last sample holds one interval).
    Replay r({pod("a", {0, 60}, {0.5, 2.0}, {100, 200})}, "ns", "main", 30.0, false);
    CHECK(r.end() == 120);
    auto at = [&](double wall) {
        auto s = r.at(wall);
        REQUIRE(s.size() == 1);
        return s[0];
    };
    CHECK(at(0).cpu_seconds == 0);
    CHECK(at(1).cpu_seconds == Approx(0.5));  // 1 wall s at 0.5 cores
    CHECK(at(2).cpu_seconds == Approx(1.0));
    CHECK(at(3).cpu_seconds == Approx(1.0 + 2.0));  // then 2 cores
    CHECK(at(1).memory_bytes == 100);
    CHECK(at(2.01).memory_bytes == 200);
    CHECK(at(3.99).cpu_seconds == Approx(1.0 + 2.0 * 1.99));
    CHECK(r.at(4.0).empty());  // ended: its series are gone
    CHECK(r.at(100).empty());
}

TEST_CASE("replay: looping keeps the counter monotonic", "[unit]") {
    Replay r({pod("a", {0, 10}, {1.0, 3.0}, {5, 6})}, "ns", "main", 10.0, true);
    // One run: 20 trace s = 2 wall s, 40 core-seconds of trace = 4 CPU seconds of wall time.
    auto s = r.at(2.5);
    REQUIRE(s.size() == 1);
    CHECK(s[0].cpu_seconds == Approx(4.0 + 0.5));
    CHECK(s[0].memory_bytes == 5);
    CHECK(r.at(41.5)[0].cpu_seconds == Approx(20 * 4.0 + 1.0 + 0.5 * 3.0));
    CHECK(std::isinf(r.end()));
}

TEST_CASE("replay: the samples served in a window of trace time, looping", "[unit]") {
    // One run lasts 20 trace s: sample 0 over [0, 10), sample 1 over [10, 20).
    Replay r({pod("a", {0, 10}, {1.0, 3.0}, {5, 6})}, "ns", "main", 10.0, true);
    auto times = [](const std::vector<phasescale::replay::ServedSample>& s) {
        std::vector<std::pair<double, std::size_t>> out;
        for (const auto& x : s) out.emplace_back(x.trace_time, x.index);
        return out;
    };
    using Got = std::vector<std::pair<double, std::size_t>>;
    CHECK(times(r.served(0, 5, 35)) == Got{{0, 0}, {10, 1}, {20, 0}, {30, 1}});
    CHECK(times(r.served(0, 10, 20)) == Got{{10, 1}});
    Replay once({pod("a", {0, 10}, {1.0, 3.0}, {5, 6})}, "ns", "main", 10.0, false);
    CHECK(times(once.served(0, 0, 100)) == Got{{0, 0}, {10, 1}});
    CHECK(once.served(0, 0, 100).back().end == 20);  // the last sample holds for the one before
}

TEST_CASE("replay: executions with offsets start later", "[unit]") {
    PodTrace late = pod("late", {0}, {1.0}, {7});
    late.start = 30;
    Replay r({pod("early", {0, 30}, {1.0, 1.0}, {1, 1}), late}, "ns", "main", 30.0, false);
    CHECK(r.at(0.5).size() == 1);
    auto s = r.at(1.01);
    REQUIRE(s.size() == 2);
    CHECK(s[1].pod == "late");
    CHECK(s[1].cpu_seconds == Approx(0.01).margin(1e-9));
    CHECK(r.at(1.5).size() == 1);   // late ran trace s [30, 31)
    CHECK(r.at(1.99).size() == 1);  // early runs trace s [0, 60)
    CHECK(r.at(2.0).empty());
}

TEST_CASE("replay: the exposition text", "[unit]") {
    Replay r({pod("a\"b", {0, 30}, {1.0, 1.0}, {1073741824, 1073741824})}, "ns", "c", 30.0, false);
    std::string text = r.exposition(1.0);
    CHECK_THAT(text, Contains("# TYPE container_cpu_usage_seconds_total counter\n"));
    CHECK_THAT(text, Contains("# TYPE container_memory_working_set_bytes gauge\n"));
    CHECK_THAT(text, Contains("container_cpu_usage_seconds_total{namespace=\"ns\",pod=\"a\\\"b\","
                              "container=\"c\"} 1\n"));
    CHECK_THAT(text, Contains("container_memory_working_set_bytes{namespace=\"ns\",pod=\"a\\\"b\","
                              "container=\"c\"} 1073741824\n"));
    CHECK_THAT(text, Contains("phasescale_replay_trace_seconds 30\n"));
    CHECK_THAT(text, Contains("phasescale_replay_pods_running 1\n"));
    CHECK_THAT(r.exposition(10), !Contains("container_memory_working_set_bytes{"));
    CHECK(phasescale::replay::format_exposition_value(0.1) == "0.1");
    CHECK(phasescale::replay::format_exposition_value(std::nan("")) == "NaN");
}

TEST_CASE("replay: bad input is refused with a clear message", "[unit]") {
    CHECK_THROWS_WITH(Replay({pod("a", {0}, {1}, {1})}, "ns", "c", 0, false), Contains("--speed"));
    CHECK_THROWS_WITH(Replay({}, "ns", "c", 1, false), Contains("no execution"));
    CHECK_THROWS_WITH(
        Replay({pod("a", {0}, {1}, {1}), pod("a", {0}, {1}, {1})}, "ns", "c", 1, false),
        Contains("both map to pod a"));
    CHECK_THROWS_WITH(Replay({pod("a", {0, 1}, {1, -1}, {1, 1})}, "ns", "c", 1, false),
                      Contains("sample 2"));
    using phasescale::replay::parse_listen;
    using phasescale::replay::parse_pod_map;
    CHECK(parse_pod_map("1=a,2=b") == std::map<std::string, std::string>{{"1", "a"}, {"2", "b"}});
    CHECK(parse_pod_map("#0=a") == std::map<std::string, std::string>{{"#0", "a"}});
    CHECK_THROWS_WITH(parse_pod_map("1=a,2"), Contains("\"2\""));
    CHECK_THROWS_WITH(parse_pod_map("1=a,1=b"), Contains("twice"));
    CHECK(parse_listen("127.0.0.1:9400") == std::pair<std::string, int>{"127.0.0.1", 9400});
    CHECK(parse_listen("[::1]:80") == std::pair<std::string, int>{"[::1]", 80});
    CHECK_THROWS_WITH(parse_listen("127.0.0.1"), Contains("HOST:PORT"));
    CHECK_THROWS_WITH(parse_listen("127.0.0.1:0"), Contains("1-65535"));
    CHECK_THROWS_WITH(parse_listen("127.0.0.1:http"), Contains("1-65535"));
}

TEST_CASE("replay: reading a trace, naming pods by id or by index", "[unit]") {
    prom_test::TempDir dir;
    const std::string csv =
        dir.write("t.csv",
                  "timestamp,pod.id,cpu.usage.cores,mem.working.set,note\n"
                  "1000,7,1.5,100,x\n1030,7,1.5,110,x\n1060,9,0.5,50,y\n1090,9,0.5,60,y\n");
    phasescale::replay::Options o;
    o.traces = {csv};
    o.ns = "ns";
    o.pod_map = {{"7", "seven"}, {"#1", "nine"}};
    Replay r = Replay::from_options(o);
    REQUIRE(r.pods().size() == 2);
    CHECK(r.pods()[0].pod == "seven");
    CHECK(r.pods()[1].pod == "nine");
    CHECK(r.pods()[1].start == 0);
    CHECK(r.pods()[0].offsets == std::vector<double>{0, 30});
    CHECK(r.pods()[0].memory == std::vector<double>{100, 110});

    o.align = "trace";
    CHECK(Replay::from_options(o).pods()[1].start == 60);

    o.pod_map = {{"8", "eight"}};
    CHECK_THROWS_WITH(Replay::from_options(o),
                      Contains("--pod-map 8=eight") && Contains("pod.id 8"));
    o.pod_map.clear();
    o.cpu_column = "cpu";
    CHECK_THROWS_WITH(Replay::from_options(o), Contains("cpu"));
}

namespace {

// The value and timestamp (-1 when none) of the one line of `text` that starts with `series `.
struct KubeletSample {
    double value = std::nan("");
    std::int64_t timestamp_ms = -1;
    int lines = 0;
};
KubeletSample kubelet_sample(const std::string& text, const std::string& series) {
    KubeletSample out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(series + " ", 0) != 0) continue;
        ++out.lines;
        std::istringstream rest(line.substr(series.size() + 1));
        rest >> out.value;
        if (!(rest >> out.timestamp_ms)) out.timestamp_ms = -1;
    }
    return out;
}

constexpr std::int64_t kStartedMs = 1'700'000'000'000;

std::string container_series(const std::string& name, const std::string& pod) {
    return name + R"({container="main",namespace="ns",pod=")" + pod + R"("})";
}

}  // namespace

TEST_CASE("replay: the kubelet's resource metrics, in the kubelet's names, labels and order",
          "[unit]") {
    // "b": 0.5 cores for 60 trace s, then 2 cores for 60; "a": 1 core for 30 trace s, so at
    // 30 trace s per wall s it has ended after the first wall second: only the node counts it.
    Replay r({pod("b", {0, 60}, {0.5, 2.0}, {100, 200}), pod("a", {0, 15}, {1.0, 1.0}, {7, 7})},
             "ns", "main", 30.0, false);
    CHECK(r.kubelet_exposition(kStartedMs, kStartedMs + 1000) ==
          "# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the "
          "container in core-seconds\n"
          "# TYPE container_cpu_usage_seconds_total counter\n"
          "container_cpu_usage_seconds_total{container=\"main\",namespace=\"ns\",pod=\"b\"} 0.5 "
          "1700000001000\n"
          "# HELP container_memory_working_set_bytes [STABLE] Current working set of the container "
          "in bytes\n"
          "# TYPE container_memory_working_set_bytes gauge\n"
          "container_memory_working_set_bytes{container=\"main\",namespace=\"ns\",pod=\"b\"} 100 "
          "1700000001000\n"
          "# HELP container_start_time_seconds [STABLE] Start time of the container since unix "
          "epoch in seconds\n"
          "# TYPE container_start_time_seconds gauge\n"
          "container_start_time_seconds{container=\"main\",namespace=\"ns\",pod=\"b\"} "
          "1.7e+09\n"
          "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node "
          "in core-seconds\n"
          "# TYPE node_cpu_usage_seconds_total counter\n"
          "node_cpu_usage_seconds_total 1.5 1700000001000\n"
          "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes\n"
          "# TYPE node_memory_working_set_bytes gauge\n"
          "node_memory_working_set_bytes 100 1700000001000\n"
          "# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in "
          "core-seconds\n"
          "# TYPE pod_cpu_usage_seconds_total counter\n"
          "pod_cpu_usage_seconds_total{namespace=\"ns\",pod=\"b\"} 0.5 1700000001000\n"
          "# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes\n"
          "# TYPE pod_memory_working_set_bytes gauge\n"
          "pod_memory_working_set_bytes{namespace=\"ns\",pod=\"b\"} 100 1700000001000\n"
          "# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container "
          "metrics, 0 otherwise\n"
          "# TYPE resource_scrape_error gauge\n"
          "resource_scrape_error 0\n");
    // While both run, pods come sorted by name, as the kubelet sorts series by label values;
    // names are escaped.
    Replay quoted({pod("z", {0, 30}, {1, 1}, {1, 1}), pod("a\"b", {0, 30}, {1, 1}, {2, 2})}, "ns",
                  "main", 30.0, false);
    const std::string text = quoted.kubelet_exposition(kStartedMs, kStartedMs + 500);
    const auto quoted_line = text.find(R"(pod="a\"b"} 0.5 1700000000500)");
    CHECK(quoted_line != std::string::npos);
    CHECK(quoted_line < text.find(R"(pod="z"} 0.5 1700000000500)"));
}

TEST_CASE("replay: kubelet counters rise at the trace's cores, as on /metrics at the same time",
          "[unit]") {
    Replay r({pod("a", {0, 60}, {0.5, 2.0}, {100, 200})}, "ns", "main", 30.0, false);
    const std::string cpu = container_series("container_cpu_usage_seconds_total", "a");
    const std::string pod_cpu = R"(pod_cpu_usage_seconds_total{namespace="ns",pod="a"})";
    // Scrapes 250 ms apart: (counter difference) / (timestamp difference) = the trace's cores.
    const std::vector<std::pair<std::int64_t, double>> expected_cores{
        {250, 0.5}, {1250, 0.5}, {2250, 2.0}, {3500, 2.0}};
    for (const auto& [at_ms, cores] : expected_cores) {
        const std::string before = r.kubelet_exposition(kStartedMs, kStartedMs + at_ms - 250);
        const std::string after = r.kubelet_exposition(kStartedMs, kStartedMs + at_ms);
        const KubeletSample b = kubelet_sample(before, cpu), a = kubelet_sample(after, cpu);
        INFO("scrape at " << at_ms << " ms");
        REQUIRE(a.lines == 1);
        REQUIRE(b.lines == 1);
        CHECK(a.timestamp_ms - b.timestamp_ms == 250);
        CHECK((a.value - b.value) / 0.25 == Approx(cores));
        CHECK(kubelet_sample(after, pod_cpu).value == a.value);
        // The Prometheus counter at the same wall time.
        CHECK(a.value == Approx(r.at(at_ms / 1000.0).at(0).cpu_seconds));
    }
    CHECK(kubelet_sample(r.kubelet_exposition(kStartedMs, kStartedMs + 2500),
                         container_series("container_memory_working_set_bytes", "a"))
              .value == 200);
}

TEST_CASE("replay: kubelet metrics of pods that ended, have not started, or loop", "[unit]") {
    // "short" runs 1 wall s from the start, "late" from wall s 2 to 4, "long" for 4 wall s.
    PodTrace late = pod("late", {0, 30}, {3.0, 3.0}, {300, 300});
    late.start = 60;
    Replay r({pod("short", {0, 15}, {1.0, 1.0}, {100, 100}),
              pod("long", {0, 60}, {0.5, 0.5}, {200, 200}), late},
             "ns", "main", 30.0, false);
    const std::string node_cpu = "node_cpu_usage_seconds_total";
    const std::string node_mem = "node_memory_working_set_bytes";

    const std::string first = r.kubelet_exposition(kStartedMs, kStartedMs + 500);
    CHECK_THAT(first, !Contains("pod=\"late\""));  // not started yet
    CHECK(kubelet_sample(first, node_cpu).value == Approx(0.5 + 0.25));
    CHECK(kubelet_sample(first, node_mem).value == 300);

    const std::string later = r.kubelet_exposition(kStartedMs, kStartedMs + 3000);
    CHECK_THAT(later, !Contains("pod=\"short\""));  // ended: gone, as on /metrics
    CHECK(kubelet_sample(later, container_series("container_cpu_usage_seconds_total", "late"))
              .value == Approx(3.0));
    CHECK(kubelet_sample(later, container_series("container_start_time_seconds", "late")).value ==
          1'700'000'002);
    CHECK(kubelet_sample(later, container_series("container_start_time_seconds", "late"))
              .timestamp_ms == -1);  // the kubelet stamps no time on start times
    // The node counter keeps what "short" used (1 CPU second), so it never goes down.
    CHECK(kubelet_sample(later, node_cpu).value == Approx(1.0 + 1.5 + 3.0));
    CHECK(kubelet_sample(later, node_mem).value == 500);

    const std::string after_all = r.kubelet_exposition(kStartedMs, kStartedMs + 10'000);
    CHECK_THAT(after_all, !Contains("pod=\""));
    CHECK(kubelet_sample(after_all, node_cpu).value == Approx(1.0 + 2.0 + 6.0));
    CHECK(kubelet_sample(after_all, node_mem).value == 0);
    CHECK(kubelet_sample(after_all, "resource_scrape_error").value == 0);

    // Looping: the start time stays the first start, and the counter keeps rising across runs.
    Replay loop({pod("a", {0, 10}, {1.0, 3.0}, {5, 6})}, "ns", "main", 10.0, true);
    const std::string cpu = container_series("container_cpu_usage_seconds_total", "a");
    const std::string looped = loop.kubelet_exposition(kStartedMs, kStartedMs + 41'500);
    CHECK(kubelet_sample(looped, cpu).value == Approx(20 * 4.0 + 1.0 + 0.5 * 3.0));
    CHECK(kubelet_sample(looped, container_series("container_start_time_seconds", "a")).value ==
          1'700'000'000);
}

TEST_CASE("pod label selectors become kube_pod_labels matchers", "[unit]") {
    using phasescale::kube::parse_label_selector;
    auto matchers = [](const char* selector) {
        return pod_label_matchers(parse_label_selector(selector));
    };
    CHECK(kube_state_label_name("app.kubernetes.io/name") == "label_app_kubernetes_io_name");
    CHECK(matchers("") == "");
    CHECK(matchers("app=train") == R"(label_app="train")");
    CHECK(matchers("app == train, tier!=web") == R"(label_app="train", label_tier!~"web")");
    CHECK(matchers("team in (a, b.c),env notin (dev)") ==
          R"(label_team=~"a|b\\.c", label_env!~"dev")");
    CHECK(matchers("gpu,!canary") == R"(label_gpu!="", label_canary="")");
    CHECK(matchers("example.com/role=worker") == R"(label_example_com_role="worker")");
    CHECK(matchers("app=") == R"(label_app="")");  // an empty value is a value

    const FeatureQueries selected =
        select_pods(FeatureQueries(), parse_label_selector("app=train"));
    const std::string q = selected.render(std::string(kCpuFeature), "ml", 60s);
    CHECK_THAT(q, Contains(R"(* on (namespace, pod) group_left () max by (namespace, pod) ()"
                           R"(kube_pod_labels{namespace="ml", label_app="train"}))"));
    CHECK_THAT(q, Contains(R"(rate(container_cpu_usage_seconds_total{namespace="ml")"));
    CHECK(select_pods(FeatureQueries(), {}).render(std::string(kMemoryFeature), "ml", 60s) ==
          FeatureQueries().render(std::string(kMemoryFeature), "ml", 60s));
}

TEST_CASE("redact_url hides credentials, and only them", "[unit]") {
    CHECK(redact_url("https://user:pass@prom:9090/api") == "https://***@prom:9090/api");
    CHECK(redact_url("http://token@prom:9090") == "http://***@prom:9090");
    CHECK(redact_url("http://prom:9090/x?to=a@b") ==
          "http://prom:9090/x?to=a@b");  // '@' after the host
    CHECK(redact_url("http://prom:9090") == "http://prom:9090");
    QueryError e("up", "https://u:secret@prom", 500, "internal", "boom");
    CHECK_THAT(std::string(e.what()), !Contains("secret") && Contains("***@prom"));
}

TEST_CASE("describe_without_reply never repeats the reply's text", "[unit]") {
    // A server that answers with whatever it likes: its words must not reach a status or an
    // Event, nor its errorType if it is not one Prometheus uses.
    QueryError body = query_error_of("<html>the operator's token is ...</html>", 502);
    const std::string b = describe_without_reply(body);
    CHECK_THAT(b, Contains("HTTP 502") && Contains("query: up") && !Contains("token"));
    CHECK_THAT(body.error_message(), Contains("token"));  // still there for a debug log
    QueryError api =
        query_error_of(R"({"status":"error","errorType":"bad_data","error":"secret words"})", 400);
    CHECK_THAT(describe_without_reply(api),
               Contains("HTTP 400 bad_data") && !Contains("secret words"));
    QueryError odd =
        query_error_of(R"({"status":"error","errorType":"Look Here!","error":"x"})", 400);
    CHECK_THAT(describe_without_reply(odd),
               !Contains("Look Here!") && Contains("unrecognised errorType"));
    const std::runtime_error plain("connection refused");
    CHECK(describe_without_reply(plain) == "connection refused");
}
