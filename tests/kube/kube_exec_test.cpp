// Managed-cluster credentials against the real kube-apiserver of tests/testenv: a kubeconfig
// exec plugin (tests/kube/exec-plugin.sh, a bash script that hands out the test control
// plane's admin token or client certificate and counts its runs) and proxy-url through a
// CONNECT proxy on loopback (tests/kube/connect-proxy.py, which counts its tunnels).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <thread>

#include "kube_support.hpp"
#include "phasescale/kube/client.hpp"
#include "phasescale/kube/config.hpp"
#include "phasescale/kube/error.hpp"

using namespace kube_test;
using namespace std::chrono_literals;

namespace {

// The plugin's state folder (see exec-plugin.sh) and a kubeconfig that uses it.
struct Plugin {
    TempDir dir{"phasescale-exec"};

    Plugin() { tokens({testenv().admin_token}); }
    std::filesystem::path state() const { return dir.path() / "state"; }
    void tokens(const std::vector<std::string>& lines) const {
        std::filesystem::create_directories(state());
        std::string text;
        for (const auto& l : lines) text += l + "\n";
        write_file(state() / "tokens", text);
    }
    void set(const std::string& file, const std::string& text) const {
        write_file(state() / file, text);
    }
    void unset(const std::string& file) const { std::filesystem::remove(state() / file); }
    int runs() const {
        std::error_code ec;
        if (!std::filesystem::exists(state() / "runs", ec)) return 0;
        return std::stoi(read_file(state() / "runs"));
    }

    // A kubeconfig for the test control plane whose user is this plugin.
    kube::Config config(const std::string& api_version = "client.authentication.k8s.io/v1",
                        const std::string& proxy_url = {}) const {
        std::string text =
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: testenv\n  cluster:\n"
            "    server: " +
            testenv().apiserver_url + "\n    certificate-authority: " + testenv().ca_file + "\n" +
            (proxy_url.empty() ? "" : "    proxy-url: " + proxy_url + "\n") +
            "users:\n- name: plugin\n  user:\n    exec:\n"
            "      apiVersion: " +
            api_version + "\n      command: " + PHASESCALE_EXEC_PLUGIN + "\n      args: [" +
            api_version + "]\n      env: [{name: PLUGIN_DIR, value: '" + state().string() +
            "'}]\n      interactiveMode: Never\n"
            "      installHint: the plugin is tests/kube/exec-plugin.sh\n"
            "contexts:\n- name: plugin\n  context: {cluster: testenv, user: plugin}\n"
            "current-context: plugin\n";
        write_file(dir.path() / "kubeconfig", text);
        auto cfg = kube::Config::from_kubeconfig(dir.path() / "kubeconfig");
        cfg.log = [](const std::string&, const std::string&) {};
        return cfg;
    }
};

std::string username(const kube::Client& c) {
    json body = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
    return c
        .request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {},
                 body)["status"]["userInfo"]["username"]
        .get<std::string>();
}

}  // namespace

TEST_CASE("exec plugin: its token lists and gets, and is kept while it has no expiry",
          "[integration][exec-plugin]") {
    Plugin plugin;
    kube::Client client(plugin.config());
    CHECK(plugin.runs() == 0);  // nothing runs before the first request
    CHECK(username(client) == "admin");
    CHECK(client.list(kube::resources::namespaces, "")["items"].size() >= 1);
    CHECK(client.get(kube::resources::namespaces, "", "default")["metadata"]["name"] == "default");
    kube::WatchOptions wo;
    wo.timeout = 1s;
    auto stream = client.watch(kube::resources::namespaces, "", wo);
    kube::WatchEvent event;
    CHECK(stream.next(event));
    CHECK(plugin.runs() == 1);
}

TEST_CASE("exec plugin: an expired or expiring credential is fetched again",
          "[integration][exec-plugin]") {
    Plugin plugin;
    SECTION("expired already: a run per request") {
        plugin.set("expires-in", "-60");
        kube::Client client(plugin.config());
        for (int i = 0; i < 3; ++i) client.get(kube::resources::namespaces, "", "default");
        CHECK(plugin.runs() == 3);
    }
    SECTION("three seconds: kept, then fetched again") {
        plugin.set("expires-in", "3");
        kube::Client client(plugin.config());
        client.get(kube::resources::namespaces, "", "default");
        client.get(kube::resources::namespaces, "", "default");
        CHECK(plugin.runs() == 1);
        std::this_thread::sleep_for(3s);
        client.get(kube::resources::namespaces, "", "default");
        CHECK(plugin.runs() == 2);
    }
}

TEST_CASE("exec plugin: a 401 runs it again once", "[integration][exec-plugin]") {
    Plugin plugin;
    SECTION("a refused token is replaced and the request succeeds") {
        plugin.tokens({"revoked-token", testenv().admin_token});
        kube::Client client(plugin.config());
        CHECK(username(client) == "admin");
        CHECK(plugin.runs() == 2);
        client.list(kube::resources::namespaces, "");
        CHECK(plugin.runs() == 2);
    }
    SECTION("a plugin that only hands out bad tokens: Unauthorized after one retry") {
        plugin.tokens({"bad-token"});
        kube::Client client(plugin.config());
        CHECK_THROWS_AS(client.list(kube::resources::namespaces, ""), kube::Unauthorized);
        CHECK(plugin.runs() == 2);
    }
}

TEST_CASE("exec plugin: a failing plugin is a clear error, and recovers",
          "[integration][exec-plugin]") {
    Plugin plugin;
    plugin.set("fail", "error: could not reach the identity provider\n");
    std::vector<std::string> logged;
    auto cfg = plugin.config();
    cfg.log = [&logged](const std::string& level, const std::string& message) {
        logged.push_back(level + ": " + message);
    };
    kube::Client client(cfg);
    try {
        client.list(kube::resources::namespaces, "");
        FAIL("a failing plugin gave a credential");
    } catch (const kube::CredentialError& e) {
        CHECK_THAT(e.what(), Catch::Contains("users[\"plugin\"].exec") &&
                                 Catch::Contains("exec-plugin.sh\" exited with status 1: "
                                                 "error: could not reach the identity provider"));
    }
    CHECK(plugin.runs() == 1);  // not retried as a transport error
    // Its stderr reached our log.
    CHECK(std::count(logged.begin(), logged.end(),
                     "info: " + cfg.exec->what + ": exec-plugin: run 1") == 1);
    plugin.unset("fail");
    CHECK(username(client) == "admin");
    for (const auto& line : logged) CHECK_THAT(line, !Catch::Contains(testenv().admin_token));
}

TEST_CASE("exec plugin: a client certificate, from a v1beta1 plugin",
          "[integration][exec-plugin]") {
    Plugin plugin;
    plugin.set("cert", read_file(testenv().client_cert_file));
    plugin.set("key", read_file(testenv().client_key_file));
    kube::Client client(plugin.config("client.authentication.k8s.io/v1beta1"));
    CHECK(username(client) == "admin");
    CHECK(plugin.runs() == 1);
}

TEST_CASE("proxy-url: requests go through a CONNECT proxy", "[integration][proxy-url]") {
    TempDir state("phasescale-proxy");
    auto start_proxy = [&](const std::string& name, const std::vector<std::string>& extra) {
        auto dir = state.path() / name;
        std::filesystem::create_directories(dir);
        std::vector<std::string> argv{"python3", PHASESCALE_CONNECT_PROXY, dir.string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto proc = std::make_unique<ChildProcess>(argv, dir / "log");
        REQUIRE(wait_until([&] { return std::filesystem::exists(dir / "port"); }, 10s));
        return std::make_pair(std::move(proc), read_file(dir / "port"));
    };
    auto tunnels = [&](const std::string& name) {
        auto file = state.path() / name / "tunnels";
        return std::filesystem::exists(file) ? std::stoi(read_file(file)) : 0;
    };

    auto [open_proxy, port] = start_proxy("open", {});
    Plugin plugin;
    auto cfg = plugin.config("client.authentication.k8s.io/v1", "http://127.0.0.1:" + port);
    CHECK(cfg.proxy_url == "http://127.0.0.1:" + port);
    {
        kube::Client client(cfg);
        CHECK(tunnels("open") == 0);
        CHECK(username(client) == "admin");
        client.list(kube::resources::namespaces, "");
        CHECK(tunnels("open") >= 1);
    }

    // A proxy that wants credentials: user:password in proxy-url are sent, none are refused.
    auto [auth_proxy, auth_port] = start_proxy("auth", {"ops:s3cret"});
    auto with_auth = plugin.config("client.authentication.k8s.io/v1",
                                   "http://ops:s3cret@127.0.0.1:" + auth_port);
    CHECK(kube::Client(with_auth).get(kube::resources::namespaces, "",
                                      "default")["metadata"]["name"] == "default");
    CHECK(tunnels("auth") >= 1);
    auto without =
        plugin.config("client.authentication.k8s.io/v1", "http://127.0.0.1:" + auth_port);
    without.max_retries = 0;
    try {
        kube::Client(without).server_version();
        FAIL("the proxy let a request without credentials through");
    } catch (const kube::TransportError& e) {
        CHECK_THAT(e.what(), Catch::Contains("407"));
    }

    // A proxy that is not there: the request fails instead of going around it.
    open_proxy->stop();
    auto dead = cfg;
    dead.max_retries = 0;
    CHECK_THROWS_AS(kube::Client(dead).server_version(), kube::TransportError);
}
