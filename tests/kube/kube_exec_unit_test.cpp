// Unit tests of kubeconfig exec credential plugins and proxy-url that need no API server: the
// exec stanza and proxy-url as the kubeconfig loader reads them, the ExecCredential a plugin
// prints, KUBERNETES_EXEC_INFO, and when a credential is fetched again (with a fake command
// runner and a fake clock), plus the real process runner on small shell commands.
#include <catch2/catch.hpp>

#include <cerrno>
#include <deque>

#include "kube_support.hpp"
#include "phasescale/kube/config.hpp"
#include "phasescale/kube/error.hpp"
#include "phasescale/kube/exec_credential.hpp"
#include "phasescale/kube/time.hpp"

namespace kube = phasescale::kube;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using std::chrono::system_clock;

namespace {

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

// A kubeconfig whose one user is `user_yaml` (indented under "user:") and whose cluster has
// `cluster_extra` lines.
kube::Config load(const std::string& user_yaml, const std::string& cluster_extra = {}) {
    std::string text =
        "clusters:\n- name: x\n  cluster:\n    server: https://api.example:6443\n" + cluster_extra +
        "users:\n- name: u\n  user:\n" + user_yaml +
        "contexts:\n- name: c\n  context: {cluster: x, user: u}\ncurrent-context: c\n";
    return kube::Config::from_kubeconfig_text(text, "kc.yaml", "/etc/kube");
}

const std::string kV1 = "client.authentication.k8s.io/v1";

std::string credential_json(const std::string& token, const std::string& expiry = {},
                            const std::string& api_version = kV1) {
    json status = {{"token", token}};
    if (!expiry.empty()) status["expirationTimestamp"] = expiry;
    return json{{"apiVersion", api_version}, {"kind", "ExecCredential"}, {"status", status}}.dump();
}

kube::ExecPlugin plugin() {
    kube::ExecPlugin p;
    p.api_version = kV1;
    p.command = "get-token";
    p.args = {"--cluster", "prod"};
    p.env = {{"AWS_PROFILE", "ops"}};
    p.timeout = 5s;
    p.what = "kubeconfig kc.yaml: users[\"u\"].exec (get-token)";
    return p;
}

// Hands out scripted results (the last one again when they run out) and records each call.
struct FakeRunner : kube::CommandRunner {
    std::deque<kube::CommandResult> results;
    int runs = 0;
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;
    std::chrono::milliseconds timeout{};

    kube::CommandResult run(const std::vector<std::string>& a,
                            const std::vector<std::pair<std::string, std::string>>& e,
                            std::chrono::milliseconds t) override {
        ++runs;
        argv = a;
        env = e;
        timeout = t;
        kube::CommandResult r = results.front();
        if (results.size() > 1) results.pop_front();
        return r;
    }
    void add(const std::string& out, int exit_code = 0, const std::string& err = {}) {
        kube::CommandResult r;
        r.out = out;
        r.err = err;
        r.exit_code = exit_code;
        results.push_back(r);
    }
};

struct Fixture {
    system_clock::time_point now = system_clock::from_time_t(1'800'000'000);  // 2027-01-15
    std::shared_ptr<FakeRunner> runner = std::make_shared<FakeRunner>();
    std::vector<std::string> logged;

    kube::ExecCredentialSource source(const kube::ExecPlugin& p = plugin()) {
        return kube::ExecCredentialSource(
            p, json{{"apiVersion", p.api_version}}, runner, [this] { return now; },
            [this](const std::string& level, const std::string& message) {
                logged.push_back(level + " " + message);
            });
    }
    std::string at(std::chrono::seconds from_now) const {
        return kube::format_time(
            std::chrono::duration<double>((now + from_now).time_since_epoch()).count());
    }
};

}  // namespace

TEST_CASE("kubeconfig exec: the stanza is read and nothing runs", "[unit][kube][exec]") {
    auto cfg = load(
        "    exec:\n"
        "      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: bin/get-token\n"
        "      args: [--region, eu-west-1]\n"
        "      env: [{name: AWS_PROFILE, value: ops}, {name: EMPTY}]\n"
        "      installHint: install it with 'pip install get-token'\n"
        "      provideClusterInfo: true\n"
        "      interactiveMode: Never\n");
    REQUIRE(cfg.exec);
    CHECK(cfg.exec->api_version == "client.authentication.k8s.io/v1beta1");
    CHECK(cfg.exec->command == "/etc/kube/bin/get-token");  // relative to the kubeconfig
    CHECK(cfg.exec->args == std::vector<std::string>{"--region", "eu-west-1"});
    REQUIRE(cfg.exec->env.size() == 2);
    CHECK(cfg.exec->env[0] == std::make_pair(std::string("AWS_PROFILE"), std::string("ops")));
    CHECK(cfg.exec->env[1].second.empty());
    CHECK(cfg.exec->install_hint == "install it with 'pip install get-token'");
    CHECK(cfg.exec->provide_cluster_info);
    CHECK(cfg.exec->interactive_mode == "Never");
    CHECK_THAT(cfg.exec->what, Catch::Contains("users[\"u\"].exec (/etc/kube/bin/get-token)"));
    CHECK(cfg.token.empty());

    // A bare name is looked up on PATH when it runs; interactiveMode defaults to IfAvailable.
    auto bare = load("    exec: {apiVersion: " + kV1 + ", command: aws}\n");
    REQUIRE(bare.exec);
    CHECK(bare.exec->command == "aws");
    CHECK(bare.exec->interactive_mode == "IfAvailable");
    CHECK_FALSE(bare.exec->provide_cluster_info);
}

TEST_CASE("kubeconfig exec: refusals say why", "[unit][kube][exec]") {
    auto err = [](const std::string& user) { return error_of([&] { load(user); }); };
    CHECK_THAT(err("    exec: {apiVersion: " + kV1 + ", command: x, interactiveMode: Always}\n"),
               Catch::Contains("interactiveMode: Always needs a terminal") &&
                   Catch::Contains("Never or IfAvailable"));
    CHECK_THAT(err("    exec: {apiVersion: " + kV1 + ", command: x, interactiveMode: Often}\n"),
               Catch::Contains("\"Often\" is not Never, IfAvailable or Always"));
    CHECK_THAT(err("    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}\n"),
               Catch::Contains(".exec.apiVersion") && Catch::Contains("v1alpha1 was removed"));
    CHECK_THAT(err("    exec: {command: x}\n"), Catch::Contains(".exec.apiVersion: \"\""));
    CHECK_THAT(err("    exec: {apiVersion: " + kV1 + "}\n"), Catch::Contains("has no command"));
    CHECK_THAT(err("    exec: {apiVersion: " + kV1 + ", command: x, args: a}\n"),
               Catch::Contains(".exec.args: expected a list of strings"));
    CHECK_THAT(err("    exec: {apiVersion: " + kV1 + ", command: x, env: [{value: v}]}\n"),
               Catch::Contains(".exec.env[0]: needs a name"));
    CHECK_THAT(err("    token: abc\n    exec: {apiVersion: " + kV1 + ", command: x}\n"),
               Catch::Contains("both exec and a token"));
}

TEST_CASE("kubeconfig proxy-url: http proxies, others refused", "[unit][kube][proxy]") {
    auto with = [](const std::string& url) {
        return load("    token: abc\n", "    proxy-url: " + url + "\n");
    };
    CHECK(with("http://proxy.internal:3128").proxy_url == "http://proxy.internal:3128");
    CHECK(with("http://user:secret@10.0.0.9").proxy_url == "http://user:secret@10.0.0.9");
    CHECK(load("    token: abc\n").proxy_url.empty());
    auto err = [&](const std::string& url) { return error_of([&] { with(url); }); };
    CHECK_THAT(err("socks5://127.0.0.1:1080"),
               Catch::Contains("proxy-url: SOCKS proxies are not supported"));
    CHECK_THAT(err("https://proxy:443"),
               Catch::Contains("an https:// proxy") && Catch::Contains("use http://"));
    CHECK_THAT(err("ftp://proxy"), Catch::Contains("not an http:// URL"));
    CHECK_THAT(err("http://:3128"), Catch::Contains("has no host"));
    // The password stays out of messages.
    CHECK_THAT(err("http://user:secret@"),
               Catch::Contains("has no host") && !Catch::Contains("secret"));
}

TEST_CASE("kubeconfig: a server of slashes names no server", "[unit][kube]") {
    for (const char* server : {"/", "///"}) {
        const std::string text = std::string("clusters:\n- name: x\n  cluster:\n    server: ") +
                                 server +
                                 "\ncontexts:\n- name: c\n  context: {cluster: x}\n"
                                 "current-context: c\n";
        CHECK_THAT(error_of([&] { kube::Config::from_kubeconfig_text(text, "kc.yaml", "/etc"); }),
                   Catch::Contains("has no server"));
    }
}

TEST_CASE("exec credential: what a plugin prints", "[unit][kube][exec]") {
    const auto p = plugin();
    auto c = kube::parse_exec_credential(credential_json("tok-1", "2027-01-15T08:00:00Z"), p);
    CHECK(c.token == "tok-1");
    REQUIRE(c.expiry);
    CHECK(system_clock::to_time_t(*c.expiry) == 1'800'000'000);
    CHECK_FALSE(kube::parse_exec_credential(credential_json("t"), p).expiry);

    json cert = {{"apiVersion", kV1},
                 {"kind", "ExecCredential"},
                 {"status", {{"clientCertificateData", "CERT"}, {"clientKeyData", "KEY"}}}};
    auto cc = kube::parse_exec_credential(cert.dump(), p);
    CHECK(cc.token.empty());
    CHECK(cc.client_cert_pem == "CERT");
    CHECK(cc.client_key_pem == "KEY");

    auto err = [&](const std::string& out) {
        return error_of([&] { kube::parse_exec_credential(out, p); });
    };
    CHECK_THAT(err("Please log in"), Catch::Contains(p.what) && Catch::Contains("not a JSON"));
    CHECK_THAT(err(credential_json("t", {}, "client.authentication.k8s.io/v1beta1")),
               Catch::Contains("printed apiVersion \"client.authentication.k8s.io/v1beta1\""));
    CHECK_THAT(err(R"({"apiVersion":")" + kV1 + R"(","kind":"Secret","status":{"token":"t"}})"),
               Catch::Contains("kind \"Secret\""));
    CHECK_THAT(err(R"({"apiVersion":")" + kV1 + R"(","kind":"ExecCredential"})"),
               Catch::Contains("has no status"));
    CHECK_THAT(err(R"({"apiVersion":")" + kV1 + R"(","kind":"ExecCredential","status":{}})"),
               Catch::Contains("neither status.token nor status.clientCertificateData"));
    cert["status"].erase("clientKeyData");
    CHECK_THAT(err(cert.dump()),
               Catch::Contains("status.clientCertificateData without status.clientKeyData"));
    CHECK_THAT(
        err(credential_json("secret-token", "tomorrow")),
        Catch::Contains("expirationTimestamp \"tomorrow\"") && !Catch::Contains("secret-token"));
}

TEST_CASE("exec credential: KUBERNETES_EXEC_INFO", "[unit][kube][exec]") {
    auto cfg = load("    exec: {apiVersion: " + kV1 + ", command: x}\n",
                    "    tls-server-name: api.internal\n    proxy-url: http://p:3128\n");
    cfg.ca_pem = "PEM";
    json info = kube::exec_info(*cfg.exec, cfg);
    CHECK(info == json{{"apiVersion", kV1},
                       {"kind", "ExecCredential"},
                       {"spec", {{"interactive", false}}}});
    cfg.exec->provide_cluster_info = true;
    info = kube::exec_info(*cfg.exec, cfg);
    CHECK(info["spec"]["interactive"] == false);
    CHECK(info["spec"]["cluster"] == json{{"server", "https://api.example:6443"},
                                          {"tls-server-name", "api.internal"},
                                          {"certificate-authority-data", "UEVN"},
                                          {"proxy-url", "http://p:3128"}});
}

TEST_CASE("exec credential: the plugin runs with its args and env", "[unit][kube][exec]") {
    Fixture f;
    f.runner->add(credential_json("tok-1"), 0, "using profile ops\n\nwarming up\n");
    auto source = f.source();
    CHECK(source.get()->token == "tok-1");
    CHECK(f.runner->argv == std::vector<std::string>{"get-token", "--cluster", "prod"});
    REQUIRE(f.runner->env.size() == 2);
    CHECK(f.runner->env[0] == std::make_pair(std::string("AWS_PROFILE"), std::string("ops")));
    CHECK(f.runner->env[1].first == "KUBERNETES_EXEC_INFO");
    CHECK(json::parse(f.runner->env[1].second)["apiVersion"] == kV1);
    CHECK(f.runner->timeout == 5s);
    // Its stderr goes to our log, line by line; the token never does.
    REQUIRE(f.logged.size() == 3);
    CHECK(f.logged[0] == "info " + plugin().what + ": using profile ops");
    CHECK(f.logged[1] == "info " + plugin().what + ": warming up");
    CHECK_THAT(f.logged[2], Catch::Contains("new credential (token) with no expiry"));
    for (const auto& line : f.logged) CHECK_THAT(line, !Catch::Contains("tok-1"));
}

TEST_CASE("exec credential: cached until a little before it expires", "[unit][kube][exec]") {
    Fixture f;
    SECTION("no expiry: kept until refused") {
        f.runner->add(credential_json("tok-1"));
        f.runner->add(credential_json("tok-2"));
        auto source = f.source();
        auto first = source.get();
        f.now += 24h;
        CHECK(source.get() == first);
        CHECK(f.runner->runs == 1);
        source.refused(first);
        CHECK(source.get()->token == "tok-2");
        CHECK(f.runner->runs == 2);
        // A 401 for a credential that has been replaced since does not run it again.
        source.refused(first);
        CHECK(source.get()->token == "tok-2");
        CHECK(f.runner->runs == 2);
    }
    SECTION("an hour: refreshed 30 s before the end") {
        f.runner->add(credential_json("tok-1", f.at(3600s)));
        f.runner->add(credential_json("tok-2", f.at(7200s)));
        auto source = f.source();
        CHECK(source.get()->token == "tok-1");
        f.now += 3600s - 31s;
        CHECK(source.get()->token == "tok-1");
        f.now += 2s;  // 29 s left
        CHECK(source.get()->token == "tok-2");
        CHECK(f.runner->runs == 2);
    }
    SECTION("eight seconds: refreshed a quarter of its life before the end") {
        f.runner->add(credential_json("tok-1", f.at(8s)));
        f.runner->add(credential_json("tok-2", f.at(16s)));
        auto source = f.source();
        source.get();
        f.now += 5s;
        CHECK(source.get()->token == "tok-1");
        f.now += 1s;  // 2 s left
        CHECK(source.get()->token == "tok-2");
    }
    SECTION("already expired: the plugin runs for every request") {
        f.runner->add(credential_json("old", f.at(-60s)));
        auto source = f.source();
        for (int i = 0; i < 3; ++i) source.get();
        CHECK(f.runner->runs == 3);
    }
}

TEST_CASE("exec credential: failures name the plugin, never the token", "[unit][kube][exec]") {
    Fixture f;
    SECTION("exit status and the last line of stderr") {
        f.runner->add(credential_json("leaked-token"), 1,
                      "refreshing\nerror: the SSO session has expired\n");
        auto source = f.source();
        std::string e = error_of([&] { source.get(); });
        CHECK_THAT(e, Catch::StartsWith(plugin().what) &&
                          Catch::Contains("\"get-token\" exited with status 1: error: the SSO "
                                          "session has expired") &&
                          !Catch::Contains("leaked-token"));
        CHECK_THROWS_AS(source.get(), kube::CredentialError);
        CHECK(f.runner->runs == 2);  // a failure is not cached
    }
    SECTION("not found: the install hint") {
        kube::CommandResult r;
        r.started = false;
        r.start_error = ENOENT;
        f.runner->results.push_back(r);
        auto p = plugin();
        p.install_hint = "get-token is part of the cloud CLI: see its install guide";
        auto source = f.source(p);
        CHECK_THAT(error_of([&] { source.get(); }),
                   Catch::Contains("command \"get-token\" not found: get-token is part of the "
                                   "cloud CLI: see its install guide"));
        auto no_hint = f.source(plugin());
        CHECK_THAT(error_of([&] { no_hint.get(); }),
                   Catch::Contains("not found (is it installed and on PATH?)"));
    }
    SECTION("timed out") {
        kube::CommandResult r;
        r.timed_out = true;
        r.exit_code = -9;
        f.runner->results.push_back(r);
        auto source = f.source();
        CHECK_THAT(error_of([&] { source.get(); }),
                   Catch::Contains("did not finish within 5000 ms and was killed"));
    }
    SECTION("killed by a signal") {
        f.runner->add("", -15);
        auto source = f.source();
        CHECK_THAT(error_of([&] { source.get(); }), Catch::Contains("was killed by signal 15"));
    }
}

TEST_CASE("exec credential: the real process runner", "[unit][kube][exec]") {
    auto runner = kube::process_runner();
    auto r = runner->run({"sh", "-c", "echo out; echo err >&2; echo \"$FOO\"; exit 3"},
                         {{"FOO", "from-env"}}, 5s);
    CHECK(r.started);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 3);
    CHECK(r.out == "out\nfrom-env\n");
    CHECK(r.err == "err\n");
    // Our environment is passed on too.
    CHECK(runner->run({"sh", "-c", "echo \"$PATH\""}, {}, 5s).out.size() > 1);

    auto start = std::chrono::steady_clock::now();
    auto slow = runner->run({"sh", "-c", "sleep 30"}, {}, 300ms);
    CHECK(slow.timed_out);
    CHECK(std::chrono::steady_clock::now() - start < 10s);

    auto missing = runner->run({"phasescale-no-such-plugin"}, {}, 5s);
    CHECK_FALSE(missing.started);
    CHECK(missing.start_error == ENOENT);

    // The whole path with a missing command: the kubeconfig's installHint in the error.
    auto cfg = load(
        "    exec:\n      apiVersion: " + kV1 +
        "\n      command: phasescale-no-such-plugin\n      installHint: see docs/kubeconfig.md\n");
    kube::ExecCredentialSource source(*cfg.exec, kube::exec_info(*cfg.exec, cfg), runner, nullptr,
                                      [](const std::string&, const std::string&) {});
    CHECK_THAT(error_of([&] { source.get(); }),
               Catch::Contains("command \"phasescale-no-such-plugin\" not found: see "
                               "docs/kubeconfig.md"));
}
