// Unit tests of the Kubernetes client that need no API server: kubeconfig and in-cluster
// configuration (and their errors), URLs, errors, rate limiting and backoff, and the client's
// retry and watch-decoding mechanics against a scripted local HTTP server.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "fake_http.hpp"
#include "kube_support.hpp"
#include "phasescale/kube/client.hpp"
#include "phasescale/kube/config.hpp"
#include "phasescale/kube/informer.hpp"
#include "phasescale/kube/rate_limit.hpp"
#include "phasescale/kube/selector.hpp"
#include "phasescale/kube/time.hpp"

namespace kube = phasescale::kube;
namespace fs = std::filesystem;
using kube_test::TempDir;
using nlohmann::json;
using test_support::FakeHttpServer;

namespace {

std::string base64(const std::string& in) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned val = 0;
    int bits = -6;
    for (unsigned char c : in) {
        val = (val << 8) + c;
        bits += 8;
        while (bits >= 0) {
            out.push_back(t[(val >> bits) & 0x3F]);
            bits -= 6;
        }
    }
    if (bits > -6) out.push_back(t[((val << 8) >> (bits + 8)) & 0x3F]);
    while (out.size() % 4) out.push_back('=');
    return out;
}

// A CA and a client certificate signed by it (EC keys: fast to make), in `dir`.
struct Pki {
    fs::path dir;
    std::string ca_crt, client_crt, client_key, other_key;
};

Pki make_pki(const fs::path& dir) {
    std::string d = dir.string();
    kube_test::run(
        "cd '" + d +
        "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "
        "ca.key "
        "-out ca.crt -days 1 -subj /CN=unit-ca"
        " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "
        "client.key "
        "-out client.csr -subj /CN=unit-client"
        " && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
        "client.crt "
        "-days 1"
        " && openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out other.key");
    Pki p;
    p.dir = dir;
    p.ca_crt = kube_test::read_file(dir / "ca.crt");
    p.client_crt = kube_test::read_file(dir / "client.crt");
    p.client_key = kube_test::read_file(dir / "client.key");
    p.other_key = kube_test::read_file(dir / "other.key");
    return p;
}

std::string kubeconfig_text(const Pki& pki) {
    return "apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: main\n"
           "  cluster:\n"
           "    server: https://127.0.0.1:6443/\n"
           "    certificate-authority-data: " +
           base64(pki.ca_crt) +
           "\n"
           "- name: byfile\n"
           "  cluster:\n"
           "    server: https://k8s.example:443\n"
           "    certificate-authority: ca.crt\n"
           "    tls-server-name: api.internal\n"
           "- name: insecure\n"
           "  cluster:\n"
           "    server: https://10.0.0.1\n"
           "    insecure-skip-tls-verify: true\n"
           "users:\n"
           "- name: tok\n"
           "  user:\n"
           "    token: abc123\n"
           "- name: tokfile\n"
           "  user:\n"
           "    tokenFile: token.txt\n"
           "- name: certdata\n"
           "  user:\n"
           "    client-certificate-data: " +
           base64(pki.client_crt) +
           "\n"
           "    client-key-data: " +
           base64(pki.client_key) +
           "\n"
           "- name: certfile\n"
           "  user:\n"
           "    client-certificate: " +
           (pki.dir / "client.crt").string() +
           "\n"
           "    client-key: client.key\n"
           "contexts:\n"
           "- name: a\n"
           "  context: {cluster: main, user: tok, namespace: team-a}\n"
           "- name: b\n"
           "  context: {cluster: byfile, user: certfile}\n"
           "- name: c\n"
           "  context: {cluster: insecure, user: tokfile}\n"
           "- name: d\n"
           "  context: {cluster: main, user: certdata}\n"
           "- name: broken-cluster\n"
           "  context: {cluster: nowhere, user: tok}\n"
           "current-context: a\n";
}

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("kubeconfig: current context with token and CA data", "[unit][kube][config]") {
    TempDir tmp;
    Pki pki = make_pki(tmp.path());
    kube_test::write_file(tmp.path() / "config", kubeconfig_text(pki));
    auto cfg = kube::Config::from_kubeconfig(tmp.path() / "config");
    CHECK(cfg.server == "https://127.0.0.1:6443");
    CHECK(cfg.ca_pem == pki.ca_crt);
    CHECK(cfg.token == "abc123");
    CHECK(cfg.default_namespace == "team-a");
    CHECK_FALSE(cfg.insecure_skip_tls_verify);
    CHECK(cfg.client_cert_pem.empty());
    CHECK(cfg.source.find("context a") != std::string::npos);
    kube::Client client(cfg);  // the material is usable
}

TEST_CASE("kubeconfig: named contexts with files, certificate data, token file and insecure",
          "[unit][kube][config]") {
    TempDir tmp;
    Pki pki = make_pki(tmp.path());
    kube_test::write_file(tmp.path() / "token.txt", "  file-token\n");
    kube_test::write_file(tmp.path() / "config", kubeconfig_text(pki));

    auto b = kube::Config::from_kubeconfig(tmp.path() / "config", "b");
    CHECK(b.server == "https://k8s.example:443");
    CHECK(b.ca_pem == pki.ca_crt);  // certificate-authority relative to the kubeconfig's folder
    CHECK(b.tls_server_name == "api.internal");
    CHECK(b.client_cert_pem == pki.client_crt);
    CHECK(b.client_key_pem == pki.client_key);
    CHECK(b.token.empty());
    CHECK(b.default_namespace == "default");
    kube::Client client_b(b);

    auto c = kube::Config::from_kubeconfig(tmp.path() / "config", "c");
    CHECK(c.insecure_skip_tls_verify);
    CHECK(c.ca_pem.empty());
    CHECK(c.token_file == tmp.path() / "token.txt");
    kube::Client client_c(c);

    auto d = kube::Config::from_kubeconfig(tmp.path() / "config", "d");
    CHECK(d.client_cert_pem == pki.client_crt);
    CHECK(d.client_key_pem == pki.client_key);
}

TEST_CASE("kubeconfig: merged files, the first one wins", "[unit][kube][config]") {
    TempDir tmp;
    kube_test::write_file(tmp.path() / "one",
                          "clusters:\n- name: x\n  cluster: {server: https://one:1}\n"
                          "users:\n- name: u\n  user: {token: t1}\n"
                          "contexts:\n- name: ctx\n  context: {cluster: x, user: u}\n"
                          "current-context: ctx\n");
    kube_test::write_file(tmp.path() / "two",
                          "clusters:\n- name: x\n  cluster: {server: https://two:2}\n"
                          "- name: y\n  cluster: {server: https://y:3}\n"
                          "contexts:\n- name: other\n  context: {cluster: y, user: u}\n"
                          "current-context: other\n");
    auto cfg = kube::Config::from_kubeconfig(
        std::vector<fs::path>{tmp.path() / "one", tmp.path() / "two"});
    CHECK(cfg.server == "https://one:1");
    CHECK(cfg.token == "t1");
    auto other = kube::Config::from_kubeconfig(
        std::vector<fs::path>{tmp.path() / "one", tmp.path() / "two"}, "other");
    CHECK(other.server == "https://y:3");
    CHECK(other.token == "t1");

    // $KUBECONFIG: a colon-separated list; missing files are skipped, all missing is an error.
    const char* saved = std::getenv("KUBECONFIG");
    std::string saved_value = saved ? saved : "";
    std::string list = (tmp.path() / "absent").string() + ":" + (tmp.path() / "one").string() +
                       ":" + (tmp.path() / "two").string();
    ::setenv("KUBECONFIG", list.c_str(), 1);
    CHECK(kube::Config::load_default().server == "https://one:1");
    CHECK(kube::Config::load_default("other").server == "https://y:3");
    ::setenv("KUBECONFIG", (tmp.path() / "absent").c_str(), 1);
    CHECK_THROWS_WITH(kube::Config::load_default(),
                      Catch::Contains("KUBECONFIG=") && Catch::Contains("no such file"));
    if (saved)
        ::setenv("KUBECONFIG", saved_value.c_str(), 1);
    else
        ::unsetenv("KUBECONFIG");
}

TEST_CASE("kubeconfig: clear errors for bad configuration", "[unit][kube][config]") {
    TempDir tmp;
    Pki pki = make_pki(tmp.path());
    const auto config = tmp.path() / "config";
    kube_test::write_file(config, kubeconfig_text(pki));

    SECTION("missing kubeconfig") {
        auto e = error_of([&] { kube::Config::from_kubeconfig(tmp.path() / "nope.yaml"); });
        CHECK_THAT(e, Catch::Contains("nope.yaml") && Catch::Contains("No such file"));
        CHECK_THROWS_AS(kube::Config::from_kubeconfig(tmp.path() / "nope.yaml"), kube::ConfigError);
    }
    SECTION("unknown context") {
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "prod"); });
        CHECK_THAT(e, Catch::Contains("context \"prod\" not found") &&
                          Catch::Contains("a, b, broken-cluster, c, d"));
    }
    SECTION("context naming a missing cluster") {
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "broken-cluster"); });
        CHECK_THAT(e, Catch::Contains("cluster \"nowhere\" not found"));
    }
    SECTION("no current context") {
        kube_test::write_file(tmp.path() / "empty", "apiVersion: v1\nkind: Config\n");
        auto e = error_of([&] { kube::Config::from_kubeconfig(tmp.path() / "empty"); });
        CHECK_THAT(e, Catch::Contains("no current-context"));
    }
    SECTION("unreadable CA file") {
        fs::remove(tmp.path() / "ca.crt");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "b"); });
        CHECK_THAT(e, Catch::Contains("clusters[\"byfile\"].certificate-authority") &&
                          Catch::Contains("ca.crt") && Catch::Contains("No such file"));
    }
    SECTION("CA file that is no certificate") {
        kube_test::write_file(tmp.path() / "ca.crt", "hello\n");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "b"); });
        CHECK_THAT(e, Catch::Contains("certificate-authority") &&
                          Catch::Contains("not a PEM certificate"));
    }
    SECTION("truncated certificate") {
        std::string crt =
            pki.client_crt.substr(0, pki.client_crt.size() / 2) + "\n-----END CERTIFICATE-----\n";
        kube_test::write_file(tmp.path() / "client.crt", crt);
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "b"); });
        CHECK_THAT(
            e, Catch::Contains("users[\"certfile\"].client-certificate") && Catch::Contains("PEM"));
    }
    SECTION("unreadable client key") {
        fs::remove(tmp.path() / "client.key");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "b"); });
        CHECK_THAT(e, Catch::Contains("client-key") && Catch::Contains("No such file"));
    }
    SECTION("certificate data that is not base64") {
        kube_test::write_file(
            config,
            "clusters:\n- name: x\n  cluster:\n    server: https://h\n"
            "    certificate-authority-data: '%%%'\n"
            "contexts:\n- name: c\n  context: {cluster: x}\ncurrent-context: c\n");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config); });
        CHECK_THAT(e, Catch::Contains("certificate-authority-data") && Catch::Contains("base64"));
    }
    SECTION("missing token file") {
        auto e = error_of([&] { kube::Config::from_kubeconfig(config, "c"); });
        CHECK_THAT(e, Catch::Contains("tokenFile") && Catch::Contains("token.txt"));
    }
    SECTION("auth-provider is refused, pointing to exec plugins") {
        kube_test::write_file(
            config,
            "clusters:\n- name: x\n  cluster: {server: https://h}\n"
            "users:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n"
            "contexts:\n- name: c\n  context: {cluster: x, user: u}\ncurrent-context: c\n");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config); });
        CHECK_THAT(e, Catch::Contains("users[\"u\"].auth-provider (gcp)") &&
                          Catch::Contains("not supported") &&
                          Catch::Contains("exec credential plugin") &&
                          Catch::Contains("gke-gcloud-auth-plugin"));
    }
    SECTION("not YAML") {
        kube_test::write_file(config, "clusters: [unclosed\n");
        auto e = error_of([&] { kube::Config::from_kubeconfig(config); });
        CHECK_THAT(e, Catch::Contains("not valid YAML"));
    }
    SECTION("a key that does not belong to the certificate") {
        auto cfg = kube::Config::from_kubeconfig(config, "d");
        cfg.client_key_pem = pki.other_key;
        auto e = error_of([&] { kube::Client client(cfg); });
        CHECK_THAT(e, Catch::Contains("client key does not belong to the client certificate"));
    }
    SECTION("a server that is no URL") {
        kube::Config cfg;
        cfg.server = "ftp://x";
        CHECK_THAT(error_of([&] { kube::Client client(cfg); }),
                   Catch::Contains("must be an https:// URL"));
    }
    SECTION("an http:// server, unless allowed: the token would travel in clear") {
        kube::Config cfg;
        cfg.server = "http://127.0.0.1:1";
        CHECK_THAT(error_of([&] { kube::Client client(cfg); }),
                   Catch::Contains("must be an https:// URL") &&
                       Catch::Contains("--allow-insecure-kube-http"));
        cfg.allow_http = true;
        CHECK_NOTHROW(kube::Client(cfg));
    }
}

TEST_CASE("in-cluster configuration", "[unit][kube][config]") {
    TempDir tmp;
    Pki pki = make_pki(tmp.path());
    auto sa = tmp.path() / "sa";
    fs::create_directories(sa);
    kube_test::write_file(sa / "token", "sa-token\n");
    kube_test::write_file(sa / "ca.crt", pki.ca_crt);
    kube_test::write_file(sa / "namespace", "ml-team");

    ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    auto cfg = kube::Config::in_cluster(sa);
    CHECK(cfg.server == "https://10.96.0.1:443");
    CHECK(cfg.token_file == sa / "token");
    CHECK(cfg.ca_pem == pki.ca_crt);
    CHECK(cfg.default_namespace == "ml-team");
    kube::Client client(cfg);

    ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    CHECK(kube::Config::in_cluster(sa).server == "https://[fd00::1]:443");

    fs::remove(sa / "token");
    CHECK_THAT(error_of([&] { kube::Config::in_cluster(sa); }),
               Catch::Contains("service-account token"));

    ::unsetenv("KUBERNETES_SERVICE_HOST");
    ::unsetenv("KUBERNETES_SERVICE_PORT");
    CHECK_THAT(error_of([&] { kube::Config::in_cluster(sa); }),
               Catch::Contains("KUBERNETES_SERVICE_HOST"));
}

TEST_CASE("resource paths", "[unit][kube]") {
    using namespace kube::resources;
    CHECK(pods.path("ns1") == "/api/v1/namespaces/ns1/pods");
    CHECK(pods.path("") == "/api/v1/pods");
    CHECK(pods.path("ns1", "p", "resize") == "/api/v1/namespaces/ns1/pods/p/resize");
    CHECK(nodes.path("ignored", "n1") == "/api/v1/nodes/n1");
    CHECK(leases.path("kube-system", "l") ==
          "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
    CHECK(phase_autoscalers.api_version() == "phasescale.io/v1alpha1");
    CHECK(phase_autoscalers.path("a", "x", "status") ==
          "/apis/phasescale.io/v1alpha1/namespaces/a/phaseautoscalers/x/status");
    CHECK(custom_resource_definitions.path("", "x") ==
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x");
    CHECK(kube::object_key("ns", "n") == "ns/n");
    CHECK(kube::object_key("", "n") == "n");
}

TEST_CASE("API errors are typed and say what failed", "[unit][kube]") {
    const std::string status404 =
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"x\" not found",)"
        R"("reason":"NotFound","code":404})";
    try {
        kube::throw_api_error(404, status404, "GET", "/api/v1/namespaces/a/pods/x");
        FAIL("no throw");
    } catch (const kube::NotFound& e) {
        CHECK(e.status() == 404);
        CHECK(e.reason() == "NotFound");
        CHECK(e.api_message() == "pods \"x\" not found");
        CHECK(std::string(e.what()) ==
              "GET /api/v1/namespaces/a/pods/x: 404 NotFound: pods \"x\" not found");
    }
    CHECK_THROWS_AS(
        kube::throw_api_error(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})",
                              "POST", "/p"),
        kube::Conflict);
    CHECK_THROWS_AS(kube::throw_api_error(410, R"({"kind":"Status","reason":"Expired","code":410})",
                                          "GET", "/p"),
                    kube::Gone);
    CHECK_THROWS_AS(kube::throw_api_error(422, R"({"kind":"Status","reason":"Invalid","code":422})",
                                          "PATCH", "/p"),
                    kube::Invalid);
    CHECK_THROWS_AS(kube::throw_api_error(503, "upstream down", "GET", "/p"), kube::ServerError);
    try {
        kube::throw_api_error(429, "slow down", "GET", "/p", std::chrono::seconds(3));
        FAIL("no throw");
    } catch (const kube::TooManyRequests& e) {
        CHECK(e.retry_after() == std::chrono::seconds(3));
        CHECK_THAT(e.what(), Catch::Contains("429 TooManyRequests: slow down"));
    }
    CHECK_THROWS_AS(
        kube::throw_status(json{{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}}, "GET",
                           "/w"),
        kube::Gone);
    // A Status of the wrong shape threw json::type_error instead of an ApiError (found by
    // tests/fuzz, kube_object: an ERROR event without an object).
    CHECK_THROWS_AS(
        kube::throw_api_error(409, R"({"kind":"Status","reason":5,"message":[]})", "POST", "/p"),
        kube::Conflict);
    CHECK_THROWS_AS(kube::throw_api_error(500, R"({"kind":7})", "GET", "/p"), kube::ServerError);
    CHECK_THROWS_AS(kube::throw_status(json(nullptr), "GET", "/w"), kube::ServerError);
    CHECK_THROWS_AS(kube::throw_status(json{{"code", "410"}, {"reason", 1}}, "GET", "/w"),
                    kube::ServerError);
    CHECK_THROWS_AS(kube::throw_status(json{{"code", 99999999999}}, "GET", "/w"),
                    kube::ServerError);
}

TEST_CASE("token bucket: burst, then qps", "[unit][kube]") {
    kube::TokenBucket bucket(10.0, 3);
    auto t0 = kube::TokenBucket::Clock::now();
    CHECK(bucket.reserve(t0) == std::chrono::nanoseconds::zero());
    CHECK(bucket.reserve(t0) == std::chrono::nanoseconds::zero());
    CHECK(bucket.reserve(t0) == std::chrono::nanoseconds::zero());
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(bucket.reserve(t0));
    CHECK(wait.count() == Approx(100).margin(1));
    auto wait2 = std::chrono::duration_cast<std::chrono::milliseconds>(bucket.reserve(t0));
    CHECK(wait2.count() == Approx(200).margin(1));
    // One second later the debt is paid and the bucket holds its burst again at most.
    auto t1 = t0 + std::chrono::seconds(2);
    CHECK(bucket.reserve(t1) == std::chrono::nanoseconds::zero());
    kube::TokenBucket unlimited(0, 1);
    for (int i = 0; i < 100; ++i) CHECK(unlimited.try_acquire());
}

TEST_CASE("backoff grows, caps and is deterministic", "[unit][kube]") {
    using ms = std::chrono::milliseconds;
    kube::Backoff a(ms(100), ms(1000), 2.0, 0.0);
    CHECK(a.next() == ms(100));
    CHECK(a.next() == ms(200));
    CHECK(a.next() == ms(400));
    CHECK(a.next() == ms(800));
    CHECK(a.next() == ms(1000));
    CHECK(a.next() == ms(1000));
    a.reset();
    CHECK(a.next() == ms(100));
    kube::Backoff j1(ms(100), ms(1000), 2.0, 0.5, 7), j2(ms(100), ms(1000), 2.0, 0.5, 7);
    for (int i = 0; i < 5; ++i) {
        auto x = j1.next();
        CHECK(x == j2.next());
        CHECK(x.count() >= 50);
    }
}

namespace {

kube::Config local_config(const FakeHttpServer& server) {
    kube::Config cfg;
    cfg.server = server.url();
    cfg.allow_http = true;  // the fake server speaks plain HTTP
    cfg.token = "secret";
    cfg.retry_backoff_initial = std::chrono::milliseconds(10);
    cfg.retry_backoff_max = std::chrono::milliseconds(50);
    return cfg;
}

const std::string kPodJson =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"a",)"
    R"("resourceVersion":"5"}})";

}  // namespace

TEST_CASE(
    "client: reads are retried on 5xx and writes are not but 429 is retried after Retry-After",
    "[unit][kube]") {
    std::atomic<int> calls{0};
    FakeHttpServer server([&](const test_support::HttpRequest& req, const auto& send) {
        int n = calls++;
        if (req.method == "GET" && req.target.find("/pods/p") != std::string::npos) {
            send(n < 2 ? FakeHttpServer::response(
                             503, R"({"kind":"Status","code":503,"reason":"ServiceUnavailable"})")
                       : FakeHttpServer::response(200, kPodJson));
        } else if (req.method == "POST" && req.target.find("/configmaps") != std::string::npos) {
            send(FakeHttpServer::response(
                503, R"({"kind":"Status","code":503,"message":"etcd is down"})"));
        } else if (req.method == "POST") {
            send(n < 2 ? FakeHttpServer::response(
                             429, R"({"kind":"Status","code":429,"reason":"TooManyRequests"})",
                             "Retry-After: 1\r\n")
                       : FakeHttpServer::response(201, kPodJson));
        } else {
            send(FakeHttpServer::response(
                404, R"({"kind":"Status","code":404,"reason":"NotFound","message":"no"})"));
        }
    });
    kube::Client client(local_config(server));

    auto pod = client.get(kube::resources::pods, "a", "p");
    CHECK(pod["metadata"]["resourceVersion"] == "5");
    CHECK(calls == 3);
    auto seen = server.requests();
    CHECK_THAT(seen.at(0).headers, Catch::Contains("Authorization:Bearer secret"));

    calls = 0;
    try {
        client.create(kube::resources::config_maps, "a", json{{"metadata", {{"name", "c"}}}});
        FAIL("no throw");
    } catch (const kube::ServerError& e) {
        CHECK(e.status() == 503);
        CHECK_THAT(e.what(), Catch::Contains("POST /api/v1/namespaces/a/configmaps") &&
                                 Catch::Contains("etcd is down"));
    }
    CHECK(calls == 1);

    calls = 0;
    auto t0 = std::chrono::steady_clock::now();
    auto created = client.create(kube::resources::pods, "a", json::parse(kPodJson));
    auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(created["metadata"]["name"] == "p");
    CHECK(calls ==
          3);  // a POST is repeated after 429 (the server did not act on it), after Retry-After
    CHECK(waited >= std::chrono::seconds(2));

    CHECK_THROWS_AS(client.get(kube::resources::pods, "a", "missing"), kube::NotFound);
    CHECK_FALSE(client.try_get(kube::resources::pods, "a", "missing").has_value());
}

TEST_CASE("client: transport errors name the server and a stop token cancels", "[unit][kube]") {
    kube::Config cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(kube_test::free_port());
    cfg.allow_http = true;
    cfg.max_retries = 1;
    cfg.retry_backoff_initial = std::chrono::milliseconds(10);
    kube::Client client(cfg);
    auto e = error_of([&] { client.server_version(); });
    CHECK_THAT(e, Catch::Contains("GET /version") && Catch::Contains(cfg.server));
    CHECK_THROWS_AS(client.server_version(), kube::TransportError);

    // A server that never answers: the stop token ends the wait.
    FakeHttpServer silent([](const test_support::HttpRequest&, const auto&) {
        std::this_thread::sleep_for(std::chrono::seconds(3));
    });
    kube::Config scfg;
    scfg.server = silent.url();
    scfg.allow_http = true;
    kube::Client slow(scfg);
    std::stop_source stop;
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop.request_stop();
    });
    kube::RequestOptions ro;
    ro.stop = stop.get_token();
    auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(slow.get(kube::resources::pods, "a", "p", {}, ro), kube::Cancelled);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    canceller.join();
}

TEST_CASE("client: the rate limit spaces requests", "[unit][kube]") {
    FakeHttpServer server([](const test_support::HttpRequest&, const auto& send) {
        send(FakeHttpServer::response(200, R"({"gitVersion":"v0"})"));
    });
    auto cfg = local_config(server);
    cfg.qps = 20;
    cfg.burst = 2;
    kube::Client client(cfg);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 6; ++i) client.server_version();
    // 2 at once, then 4 more at 20 per second.
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(190));
}

TEST_CASE("watch: a chunked stream is decoded event by event", "[unit][kube][watch]") {
    std::atomic<bool> release{false};
    FakeHttpServer server([&](const test_support::HttpRequest& req, const auto& send) {
        if (req.target.find("resourceVersion=gone") != std::string::npos) {
            send(FakeHttpServer::response(
                410, R"({"kind":"Status","code":410,"reason":"Expired","message":"too old"})"));
            return;
        }
        send(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
            "chunked\r\n\r\n");
        std::string e1 = R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"n",)"
                         R"("resourceVersion":"10"}}})";
        std::string e2 = R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"n",)"
                         R"("resourceVersion":"11"}}})";
        std::string bm = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})";
        std::string err =
            R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})";
        // An event split over chunks, two events in one chunk, then a pause before the next.
        send(FakeHttpServer::chunk(e1.substr(0, 20)));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        send(FakeHttpServer::chunk(e1.substr(20) + "\n" + e2 + "\n"));
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        send(FakeHttpServer::chunk(bm + "\n"));
        send(FakeHttpServer::chunk(err + "\n"));
        send(FakeHttpServer::chunk(""));
    });
    kube::Client client(local_config(server));
    kube::WatchOptions wo;
    wo.resource_version = "9";
    wo.timeout = std::chrono::seconds(5);
    auto stream = client.watch(kube::resources::pods, "n", wo);
    auto target = server.requests().at(0).target;
    CHECK_THAT(target, Catch::Contains("watch=1") && Catch::Contains("resourceVersion=9") &&
                           Catch::Contains("allowWatchBookmarks=true") &&
                           Catch::Contains("timeoutSeconds=5"));

    kube::WatchEvent ev;
    REQUIRE(stream.next(ev));
    CHECK(ev.type == kube::WatchEventType::Added);
    CHECK(ev.object["metadata"]["resourceVersion"] == "10");
    REQUIRE(stream.next(ev));
    CHECK(ev.type == kube::WatchEventType::Modified);
    // The next event is not sent yet: next() waits for it, the events before came at once.
    release = true;
    REQUIRE(stream.next(ev));
    CHECK(ev.type == kube::WatchEventType::Bookmark);
    CHECK(ev.object["metadata"]["resourceVersion"] == "12");
    REQUIRE(stream.next(ev));
    CHECK(ev.type == kube::WatchEventType::Error);
    CHECK(ev.object["code"] == 410);
    CHECK_FALSE(stream.next(ev));  // the server ended the stream
    CHECK(stream.end_reason().empty());

    wo.resource_version = "gone";
    CHECK_THROWS_AS(client.watch(kube::resources::pods, "n", wo), kube::Gone);
}

TEST_CASE("watch: decode_watch_event refuses what is not an event, never throws",
          "[unit][kube][watch]") {
    std::string error;
    auto ev =
        kube::decode_watch_event(R"({"type":"DELETED","object":{"metadata":{"name":"a"}}})", error);
    REQUIRE(ev);
    CHECK(ev->type == kube::WatchEventType::Deleted);
    CHECK(ev->object["metadata"]["name"] == "a");
    CHECK(kube::decode_watch_event(R"({"type":"BOOKMARK"})", error)->object.is_null());
    // A type that is not a string used to throw json::type_error out of next().
    for (const char* line : {R"({"type":7})", R"({"type":null,"object":{}})", "[1]", "not json"}) {
        error.clear();
        CHECK_FALSE(kube::decode_watch_event(line, error));
        CHECK_THAT(error, Catch::Contains("undecodable watch event"));
    }
    CHECK_FALSE(kube::decode_watch_event(R"({"type":"RENAMED"})", error));
    CHECK(error == "unknown watch event type RENAMED");
}

TEST_CASE("watch: cancel() ends a blocked next()", "[unit][kube][watch]") {
    FakeHttpServer server([&](const test_support::HttpRequest&, const auto& send) {
        send(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
            "chunked\r\n\r\n");
        for (int i = 0; i < 100; ++i) {
            if (!send(FakeHttpServer::chunk("\n"))) return;  // keep-alive blank lines
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    kube::Client client(local_config(server));
    auto stream = client.watch(kube::resources::pods, "n", {});
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        stream.cancel();
    });
    auto t0 = std::chrono::steady_clock::now();
    kube::WatchEvent ev;
    CHECK_FALSE(stream.next(ev));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
    canceller.join();
}

TEST_CASE("watch: a connection that goes silent ends the stream (the caller reconnects)",
          "[unit][kube][watch]") {
    FakeHttpServer server([&](const test_support::HttpRequest&, const auto& send) {
        send(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
            "chunked\r\n\r\n");
        send(FakeHttpServer::chunk(
            R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"3"}}})"
            "\n"));
        std::this_thread::sleep_for(std::chrono::seconds(3));  // then nothing, not even a close
    });
    kube::Client client(local_config(server));
    kube::WatchOptions wo;
    wo.idle_timeout = std::chrono::milliseconds(500);
    auto stream = client.watch(kube::resources::pods, "n", wo);
    kube::WatchEvent ev;
    REQUIRE(stream.next(ev));
    CHECK(ev.object["metadata"]["name"] == "a");
    auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(stream.next(ev));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500));
    CHECK_FALSE(stream.end_reason().empty());
}

TEST_CASE("label selectors: every string form, matching, and back to a string", "[unit]") {
    using phasescale::kube::parse_label_selector;
    using Labels = std::map<std::string, std::string>;
    const auto s = parse_label_selector(
        "app=train, job==a,tier!=web,env in (prod, dev),zone notin (x),gpu,!spot");
    CHECK(s.match_labels == Labels{{"app", "train"}, {"job", "a"}});
    REQUIRE(s.match_expressions.size() == 5);
    CHECK(s.matches(Labels{{"app", "train"}, {"job", "a"}, {"env", "dev"}, {"gpu", ""}}));
    CHECK_FALSE(s.matches(
        Labels{{"app", "train"}, {"job", "a"}, {"env", "dev"}, {"gpu", ""}, {"spot", "1"}}));
    CHECK_FALSE(s.matches(Labels{{"app", "train"}, {"job", "a"}, {"env", "qa"}, {"gpu", ""}}));
    CHECK_FALSE(s.matches(
        Labels{{"app", "train"}, {"job", "a"}, {"env", "dev"}, {"gpu", ""}, {"tier", "web"}}));
    CHECK_FALSE(s.matches(
        Labels{{"app", "train"}, {"job", "a"}, {"env", "dev"}, {"gpu", ""}, {"zone", "x"}}));
    CHECK(parse_label_selector(s.to_string()).to_string() == s.to_string());
    CHECK(s.matches(
        json{{"metadata",
              {{"labels", {{"app", "train"}, {"job", "a"}, {"env", "prod"}, {"gpu", "1"}}}}}}));
    CHECK(parse_label_selector(" ").empty());
    CHECK(parse_label_selector("example.com/role=worker").match_labels.at("example.com/role") ==
          "worker");
    // The same key twice: both must hold.
    CHECK_FALSE(parse_label_selector("a=1,a=2").matches(Labels{{"a", "1"}}));
    // An empty value in a set is a value, as Kubernetes reads it; found by tests/fuzz
    // (label_selector): "a==b,cq!=" wrote "cq notin ()", which did not read back.
    CHECK(parse_label_selector("a in ()").match_expressions.at(0).values ==
          std::vector<std::string>{""});
    CHECK(parse_label_selector("a notin (x, )").match_expressions.at(0).values ==
          std::vector<std::string>{"x", ""});
    const auto empty_value = parse_label_selector("a==b,cq!=");
    CHECK(empty_value.to_string() == "a=b,cq notin ()");
    CHECK(parse_label_selector(empty_value.to_string()).to_string() == empty_value.to_string());
    CHECK_FALSE(empty_value.matches(Labels{{"a", "b"}, {"cq", ""}}));
    CHECK(empty_value.matches(Labels{{"a", "b"}}));
    for (const char* bad : {"a in (b", "a,,b", "a in (b c)", "=x", "a=b c", "a within (b)",
                            "a/b/c=x", "a=\"x\"", "a!x"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_label_selector(bad), std::invalid_argument);
    }
    CHECK_THROWS_WITH(
        parse_label_selector("app within (a)"),
        Catch::Matchers::Contains("app within (a)") && Catch::Matchers::Contains("in or notin"));
}

TEST_CASE("times as the API writes them", "[unit]") {
    using namespace phasescale::kube;
    CHECK(format_time(1700000000.7) == "2023-11-14T22:13:20Z");
    CHECK(parse_time("2023-11-14T22:13:20Z").value() == 1700000000);
    CHECK(parse_time("2023-11-14T22:13:20.5Z").value() == 1700000000.5);
    CHECK_FALSE(parse_time("yesterday"));
    CHECK_FALSE(parse_time("2023-11-14T22:13:20"));
}

TEST_CASE("informer: a relist makes the store equal to the list and reports each change once",
          "[unit][kube]") {
    auto pod = [](const std::string& name, const std::string& rv) {
        return json{{"metadata", {{"namespace", "ml"}, {"name", name}, {"resourceVersion", rv}}}};
    };
    kube::Store store;
    kube::ListChanges first =
        kube::replace_with_list(store, json::array({pod("a", "1"), pod("b", "1")}));
    CHECK(first.added.size() == 2);
    CHECK(first.updated.empty());
    CHECK(first.deleted.empty());
    // b changed, a did not, c is new, and a later list no longer has a.
    kube::ListChanges second =
        kube::replace_with_list(store, json::array({pod("a", "1"), pod("b", "2"), pod("c", "1")}));
    REQUIRE(second.added.size() == 1);
    CHECK((*second.added[0])["metadata"]["name"] == "c");
    REQUIRE(second.updated.size() == 1);
    CHECK((*second.updated[0].first)["metadata"]["resourceVersion"] == "1");
    CHECK((*second.updated[0].second)["metadata"]["resourceVersion"] == "2");
    CHECK(second.deleted.empty());
    kube::ListChanges third =
        kube::replace_with_list(store, json::array({pod("b", "2"), pod("c", "1")}));
    REQUIRE(third.deleted.size() == 1);
    CHECK((*third.deleted[0])["metadata"]["name"] == "a");
    CHECK(third.added.empty());
    CHECK(third.updated.empty());
    CHECK(store.keys() == std::vector<std::string>{"ml/b", "ml/c"});
    // An empty list empties the store.
    CHECK(kube::replace_with_list(store, json::array()).deleted.size() == 2);
    CHECK(store.size() == 0);
}
