// The client against the real kube-apiserver of tests/testenv: requests, patches,
// subresources, errors, pagination and watches of a few hundred pods, authentication, TLS.
#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "kube_support.hpp"
#include "phasescale/kube/client.hpp"
#include "phasescale/kube/events.hpp"

namespace kube = phasescale::kube;
using kube_test::make_pod;
using kube_test::testenv;
using kube_test::TestNamespace;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string node(int i) {
    return "kwok-node-" + std::to_string(i % std::max(1, testenv().nodes));
}

bool is_running(const json& pod) {
    return pod.contains("status") && pod["status"].value("phase", "") == "Running";
}

}  // namespace

TEST_CASE("pods: list with pagination and watch a few hundred", "[integration][pods-list]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-pods");
    constexpr int kPods = 300;
    for (int i = 0; i < kPods; ++i) {
        client.create(kube::resources::pods, ns.name(),
                      make_pod("bulk-" + std::to_string(i), node(i), {},
                               json{{"app", "bulk"}, {"index", std::to_string(i % 7)}}));
    }

    // Pages of 50: six of them, every pod once, one snapshot (resourceVersion) for all.
    kube::ListOptions lo;
    lo.limit = 50;
    lo.label_selector = "app=bulk";
    std::set<std::string> names;
    int pages = 0;
    std::string snapshot_rv;
    for (;;) {
        json page = client.list(kube::resources::pods, ns.name(), lo);
        ++pages;
        REQUIRE(page["items"].size() <= 50);
        if (snapshot_rv.empty()) snapshot_rv = page["metadata"]["resourceVersion"];
        for (const auto& item : page["items"])
            CHECK(names.insert(item["metadata"]["name"].get<std::string>()).second);
        std::string cont = page["metadata"].value("continue", "");
        if (cont.empty()) break;
        lo.continue_token = cont;
    }
    CHECK(pages == 6);
    CHECK(names.size() == kPods);

    json all =
        client.list_all(kube::resources::pods, ns.name(), kube_test::selecting("app=bulk", "", 64));
    REQUIRE(all["items"].size() == kPods);
    CHECK(all["items"][0]["kind"] == "Pod");
    CHECK(all["items"][0]["apiVersion"] == "v1");
    CHECK_FALSE(all["metadata"].contains("continue"));
    // A label selector narrows the list on the server.
    json some =
        client.list_all(kube::resources::pods, ns.name(), kube_test::selecting("app=bulk,index=3"));
    CHECK(some["items"].size() == 43);  // i % 7 == 3 for i < 300

    // Watch from the list's resourceVersion until KWOK has made every pod Running.
    std::map<std::string, json> state;
    for (const auto& item : all["items"]) state[item["metadata"]["name"]] = item;
    auto all_running = [&] {
        return std::all_of(state.begin(), state.end(),
                           [](const auto& kv) { return is_running(kv.second); });
    };
    kube::WatchOptions wo;
    wo.resource_version = all["metadata"]["resourceVersion"];
    wo.timeout = 60s;
    auto stream = client.watch(kube::resources::pods, ns.name(), wo);
    kube::WatchEvent ev;
    int modified = 0;
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!all_running() && std::chrono::steady_clock::now() < deadline && stream.next(ev)) {
        REQUIRE(ev.type != kube::WatchEventType::Error);
        if (ev.type == kube::WatchEventType::Bookmark) continue;
        CHECK(ev.type == kube::WatchEventType::Modified);
        ++modified;
        state[ev.object["metadata"]["name"]] = ev.object;
    }
    CHECK(all_running());
    CHECK(state.size() == kPods);
    INFO("MODIFIED events seen: " << modified);

    // Deletions arrive as DELETED events, one per pod.
    std::string rv = client.list(kube::resources::pods, ns.name(),
                                 kube_test::selecting("", "", 1))["metadata"]["resourceVersion"];
    wo.resource_version = rv;
    auto deletions = client.watch(kube::resources::pods, ns.name(), wo);
    std::thread deleter([&] {
        for (int i = 0; i < kPods; i += 3) {
            client.remove(kube::resources::pods, ns.name(), "bulk-" + std::to_string(i),
                          kube_test::immediately());
        }
    });
    std::set<std::string> deleted;
    deadline = std::chrono::steady_clock::now() + 60s;
    while (deleted.size() < kPods / 3 && std::chrono::steady_clock::now() < deadline &&
           deletions.next(ev)) {
        if (ev.type == kube::WatchEventType::Deleted)
            CHECK(deleted.insert(ev.object["metadata"]["name"]).second);
    }
    deleter.join();
    CHECK(deleted.size() == kPods / 3);
    CHECK(client.list_all(kube::resources::pods, ns.name())["items"].size() == kPods - kPods / 3);
}

TEST_CASE("objects: create, get, update, patches, apply, delete, typed errors",
          "[integration][crud]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-crud");
    const auto& cms = kube::resources::config_maps;
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "settings"}}},
               {"data", {{"a", "1"}}}};
    json created = client.create(cms, ns.name(), cm);
    CHECK(created["metadata"]["namespace"] == ns.name());
    CHECK_THROWS_AS(client.create(cms, ns.name(), cm), kube::Conflict);
    try {
        client.create(cms, ns.name(), cm);
    } catch (const kube::Conflict& e) {
        CHECK(e.reason() == "AlreadyExists");
        CHECK(e.status() == 409);
    }

    json got = client.get(cms, ns.name(), "settings");
    CHECK(got["data"]["a"] == "1");

    // Update with a stale resourceVersion: 409 Conflict; with the current one: accepted.
    json stale = got;
    got["data"]["b"] = "2";
    json updated = client.update(cms, ns.name(), got);
    CHECK(updated["data"]["b"] == "2");
    stale["data"]["c"] = "3";
    try {
        client.update(cms, ns.name(), stale);
        FAIL("a stale update was accepted");
    } catch (const kube::Conflict& e) {
        CHECK(e.reason() == "Conflict");
        CHECK_THAT(e.what(),
                   Catch::Contains("PUT /api/v1/namespaces/" + ns.name() + "/configmaps/settings"));
    }

    json merged =
        client.patch(cms, ns.name(), "settings", json{{"data", {{"c", "3"}, {"a", nullptr}}}},
                     kube::PatchType::Merge);
    CHECK(merged["data"] == json({{"b", "2"}, {"c", "3"}}));
    json patched =
        client.patch(cms, ns.name(), "settings",
                     json::array({json{{"op", "add"}, {"path", "/data/d"}, {"value", "4"}},
                                  json{{"op", "test"}, {"path", "/data/b"}, {"value", "2"}}}),
                     kube::PatchType::Json);
    CHECK(patched["data"]["d"] == "4");
    // A failing JSON patch test operation is rejected.
    CHECK_THROWS_AS(
        client.patch(cms, ns.name(), "settings",
                     json::array({json{{"op", "test"}, {"path", "/data/b"}, {"value", "nope"}}}),
                     kube::PatchType::Json),
        kube::ApiError);

    // Strategic merge on a core type: containers merge by name.
    client.create(kube::resources::pods, ns.name(), make_pod("sm", node(0)));
    json sm = client.patch(kube::resources::pods, ns.name(), "sm",
                           json{{"metadata", {{"labels", {{"tier", "gold"}}}}}},
                           kube::PatchType::StrategicMerge);
    CHECK(sm["metadata"]["labels"]["tier"] == "gold");
    CHECK(sm["spec"]["containers"].size() == 1);

    // Server-side apply: fields owned by a manager; another manager's conflicting change needs
    // force.
    json applied =
        client.apply(cms, ns.name(),
                     json{{"metadata", {{"name", "applied"}}}, {"data", {{"owner", "phasescale"}}}},
                     "phasescale");
    CHECK(applied["data"]["owner"] == "phasescale");
    bool managed = false;
    for (const auto& mf : applied["metadata"]["managedFields"]) {
        managed = managed || (mf["manager"] == "phasescale" && mf["operation"] == "Apply");
    }
    CHECK(managed);
    try {
        client.apply(cms, ns.name(),
                     json{{"metadata", {{"name", "applied"}}}, {"data", {{"owner", "intruder"}}}},
                     "other");
        FAIL("conflicting apply accepted");
    } catch (const kube::Conflict& e) {
        CHECK_THAT(e.api_message(), Catch::Contains("conflict"));
    }
    json forced =
        client.apply(cms, ns.name(),
                     json{{"metadata", {{"name", "applied"}}}, {"data", {{"owner", "intruder"}}}},
                     "other", true);
    CHECK(forced["data"]["owner"] == "intruder");

    // Delete, then 404 everywhere; a dry run changes nothing.
    client.remove(cms, ns.name(), "applied", kube_test::dry_run_delete());
    CHECK(client.try_get(cms, ns.name(), "applied").has_value());
    client.remove(cms, ns.name(), "applied");
    CHECK_FALSE(client.try_get(cms, ns.name(), "applied").has_value());
    try {
        client.get(cms, ns.name(), "applied");
        FAIL("no NotFound");
    } catch (const kube::NotFound& e) {
        CHECK(e.status() == 404);
        CHECK(e.reason() == "NotFound");
        CHECK(e.method() == "GET");
    }
    CHECK_THROWS_AS(client.remove(cms, ns.name(), "applied"), kube::NotFound);

    // 422 with the server's causes.
    try {
        client.create(cms, ns.name(), json{{"metadata", {{"name", "Not_A_Valid_Name"}}}});
        FAIL("invalid name accepted");
    } catch (const kube::Invalid& e) {
        CHECK(e.status() == 422);
        CHECK(e.status_object()["details"]["causes"].size() >= 1);
    }
}

TEST_CASE("pods: eviction and the scale subresource", "[integration][subresources]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-sub");
    client.create(kube::resources::pods, ns.name(), make_pod("victim", node(1)));
    REQUIRE(wait_until(
        [&] { return is_running(client.get(kube::resources::pods, ns.name(), "victim")); }, 30s));
    client.evict(ns.name(), "victim", kube_test::immediately());
    CHECK(wait_until([&] { return !client.try_get(kube::resources::pods, ns.name(), "victim"); },
                     30s));
    CHECK_THROWS_AS(client.evict(ns.name(), "victim"), kube::NotFound);

    // A Deployment's scale (the controller-manager runs; KWOK makes its pods Running).
    json deployment = {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "web"}}},
        {"spec",
         {{"replicas", 1},
          {"selector", {{"matchLabels", {{"app", "web"}}}}},
          {"template",
           {{"metadata", {{"labels", {{"app", "web"}}}}},
            {"spec",
             {{"containers", json::array({json{{"name", "main"}, {"image", "web"}}})}}}}}}}};
    client.create(kube::resources::deployments, ns.name(), deployment);
    json scale = client.get_scale(kube::resources::deployments, ns.name(), "web");
    CHECK(scale["kind"] == "Scale");
    CHECK(scale["spec"]["replicas"] == 1);
    json rescaled = client.set_scale(kube::resources::deployments, ns.name(), "web", 3);
    CHECK(rescaled["spec"]["replicas"] == 3);
    CHECK(client.get(kube::resources::deployments, ns.name(), "web")["spec"]["replicas"] == 3);
}

TEST_CASE("auth: token, client certificate, token file, RBAC denial", "[integration][auth]") {
    const auto& env = testenv();
    auto review = [](const kube::Client& c) {
        json body = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
        return c.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {},
                         body)["status"]["userInfo"]["username"];
    };
    CHECK(review(kube_test::admin_client()) == "admin");
    CHECK(review(kube_test::admin_client("testenv-cert")) == "admin");

    kube_test::TempDir tmp;
    kube_test::write_file(tmp.path() / "token", env.admin_token + "\n");
    auto cfg = kube::Config::from_kubeconfig(env.kubeconfig);
    cfg.token.clear();
    cfg.token_file = tmp.path() / "token";
    CHECK(review(kube::Client(cfg)) == "admin");

    auto viewer = kube::Client(kube::Config::from_kubeconfig(env.kubeconfig, "testenv-viewer"));
    CHECK(review(viewer) == "viewer");
    try {
        viewer.list(kube::resources::pods, "default");
        FAIL("viewer may list pods");
    } catch (const kube::Forbidden& e) {
        CHECK(e.status() == 403);
        CHECK_THAT(e.api_message(), Catch::Contains("\"viewer\" cannot list resource \"pods\""));
    }

    auto nobody = kube::Config::from_kubeconfig(env.kubeconfig);
    nobody.token = "not-a-token";
    CHECK_THROWS_AS(kube::Client(nobody).list(kube::resources::pods, "default"),
                    kube::Unauthorized);

    json version = kube_test::admin_client().server_version();
    CHECK(version["gitVersion"].get<std::string>().rfind("v1.", 0) == 0);
}

TEST_CASE("auth: a rotated token file is read again while the client runs",
          "[integration][token-rotation]") {
    // The kubelet rewrites a projected service-account token before it expires; a client that
    // kept the first one would be refused within the hour. Here the file changes from the
    // viewer's token to the admin's under a running client.
    const auto& env = testenv();
    kube_test::TempDir tmp;
    const auto file = tmp.path() / "token";
    kube_test::write_file(file, env.viewer_token + "\n");
    auto cfg = kube::Config::from_kubeconfig(env.kubeconfig);
    cfg.token.clear();
    cfg.token_file = file;
    cfg.token_file_refresh = 500ms;
    kube::Client client(cfg);
    auto user = [&] {
        json body = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
        return client
            .request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {},
                     body)["status"]["userInfo"]["username"]
            .get<std::string>();
    };
    CHECK(user() == "viewer");
    CHECK_THROWS_AS(client.list(kube::resources::pods, "default"), kube::Forbidden);
    kube_test::write_file(file, env.admin_token + "\n");  // rotated
    CHECK(kube_test::wait_until([&] { return user() == "admin"; }, 5s));
    client.list(kube::resources::pods, "default");
    kube_test::write_file(file, "");  // being rewritten: the last good token stays
    CHECK(user() == "admin");
}

TEST_CASE("tls: a serving certificate from the wrong CA, or for another name, is refused",
          "[integration][tls]") {
    const auto& env = testenv();
    kube_test::TempDir tmp;
    const std::string d = tmp.path().string();
    kube_test::run("cd '" + d +
                   "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                   "-keyout other-ca.key "
                   "-out other-ca.crt -days 1 -subj /CN=other-ca");

    // The real API server, but trusting another CA: refused during the handshake.
    auto wrong_ca = kube::Config::from_kubeconfig(env.kubeconfig);
    wrong_ca.ca_pem = kube_test::read_file(tmp.path() / "other-ca.crt");
    wrong_ca.max_retries = 0;
    try {
        kube::Client(wrong_ca).server_version();
        FAIL("a certificate from the wrong CA was accepted");
    } catch (const kube::TransportError& e) {
        CHECK_THAT(e.what(), Catch::Contains("handshake") || Catch::Contains("certificate"));
    }
    // The same, when the kubeconfig says to skip verification explicitly, works.
    wrong_ca.insecure_skip_tls_verify = true;
    CHECK(kube::Client(wrong_ca).server_version().contains("gitVersion"));

    // Another server with a certificate from the right CA but for other names: refused; with the
    // right name (IP 127.0.0.1): accepted. openssl s_server -WWW serves files, as /version here.
    kube_test::write_file(tmp.path() / "version", R"({"gitVersion":"v0.0.0-s_server"})");
    auto serve = [&](const std::string& san) {
        std::string ext = d + "/" + san.substr(0, 3) + ".ext";
        kube_test::write_file(ext, "subjectAltName=" + san + "\nextendedKeyUsage=serverAuth\n");
        kube_test::run(
            "cd '" + d +
            "' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "
            "s.key "
            "-out s.csr -subj /CN=s && openssl x509 -req -in s.csr -CA '" +
            env.ca_file + "' -CAkey '" + env.dir +
            "/pki/ca.key' -CAcreateserial -CAserial s.srl -out s.crt -days 1 -extfile '" + ext +
            "'");
        int port = kube_test::free_port();
        auto server = std::make_unique<kube_test::ChildProcess>(
            std::vector<std::string>{"openssl", "s_server", "-quiet", "-accept",
                                     "127.0.0.1:" + std::to_string(port), "-cert", d + "/s.crt",
                                     "-key", d + "/s.key", "-WWW"},
            tmp.path() / ("s_server-" + std::to_string(port) + ".log"), tmp.path());
        REQUIRE(kube_test::wait_for_port(port, 10s));
        return std::make_pair(std::move(server), port);
    };
    auto cfg = kube::Config::from_kubeconfig(env.kubeconfig);
    cfg.max_retries = 0;
    {
        auto [server, port] = serve("DNS:wrong.example");
        cfg.server = "https://127.0.0.1:" + std::to_string(port);
        try {
            kube::Client(cfg).server_version();
            FAIL("a certificate for another name was accepted");
        } catch (const kube::TransportError& e) {
            CHECK_THAT(e.what(), Catch::Contains("handshake") || Catch::Contains("certificate"));
        }
        // kubeconfig tls-server-name: verify against that name instead of the URL's host.
        auto named = cfg;
        named.tls_server_name = "wrong.example";
        CHECK(kube::Client(named).server_version()["gitVersion"] == "v0.0.0-s_server");
    }
    {
        auto [server, port] = serve("IP:127.0.0.1");
        cfg.server = "https://127.0.0.1:" + std::to_string(port);
        CHECK(kube::Client(cfg).server_version()["gitVersion"] == "v0.0.0-s_server");
    }
}

TEST_CASE("events: recorded with the involved object, repeats counted", "[integration][events]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-events");
    json pod = client.create(kube::resources::pods, ns.name(), make_pod("trainer", node(2)));
    kube::EventRecorder recorder(client, "phasescale-operator", "test-instance");
    auto ref = kube::reference_to(pod);
    CHECK(ref.kind == "Pod");
    json ev = recorder.record(ref, kube::EventType::Normal, "Resized",
                              "cpu 100m -> 150m (phase training)");
    CHECK(ev["involvedObject"]["uid"] == pod["metadata"]["uid"]);
    recorder.record(ref, kube::EventType::Normal, "Resized", "cpu 100m -> 150m (phase training)");
    recorder.record(ref, kube::EventType::Warning, "ResizeInfeasible", "the node is too small");

    json list =
        client.list_all(kube::resources::events, ns.name(),
                        kube_test::selecting("", "involvedObject.name=trainer,reason=Resized"));
    REQUIRE(list["items"].size() == 1);
    const json& resized = list["items"][0];
    CHECK(resized["count"] == 2);
    CHECK(resized["type"] == "Normal");
    CHECK(resized["source"]["component"] == "phasescale-operator");
    CHECK(resized["involvedObject"]["kind"] == "Pod");
    CHECK(resized["involvedObject"]["namespace"] == ns.name());
    json warnings =
        client.list_all(kube::resources::events, ns.name(),
                        kube_test::selecting("", "involvedObject.name=trainer,type=Warning"));
    REQUIRE(warnings["items"].size() == 1);
    CHECK(warnings["items"][0]["reason"] == "ResizeInfeasible");
}
