// Informers against the real kube-apiserver: the store equals the server's state after creates,
// updates and deletes, after a kube-apiserver restart in the middle of a watch, and after a
// 410 Gone (too old resourceVersion) relist, with every change reported exactly once.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <set>

#include "kube_support.hpp"
#include "phasescale/kube/informer.hpp"

namespace kube = phasescale::kube;
using kube_test::make_pod;
using kube_test::TestNamespace;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string node(int i) {
    return "kwok-node-" + std::to_string(i % std::max(1, kube_test::testenv().nodes));
}

// What the handlers were told, kept apart from the informer's store.
struct Recorder {
    std::mutex mutex;
    std::map<std::string, std::string> view;  // key -> resourceVersion, as the handlers saw it
    std::map<std::string, int> adds, deletes;
    int updates = 0;
    int resync_updates = 0;
    bool duplicate_add = false;   // an add for a key the view already had
    bool unknown_delete = false;  // a delete for a key the view did not have

    kube::EventHandlers handlers() {
        return {
            [this](const json& o) {
                std::lock_guard lock(mutex);
                auto key = kube::object_key(o);
                if (view.count(key)) duplicate_add = true;
                view[key] = o["metadata"]["resourceVersion"];
                ++adds[key];
            },
            [this](const json& old_o, const json& new_o) {
                std::lock_guard lock(mutex);
                if (&old_o == &new_o ||
                    old_o["metadata"]["resourceVersion"] == new_o["metadata"]["resourceVersion"]) {
                    ++resync_updates;
                }
                view[kube::object_key(new_o)] = new_o["metadata"]["resourceVersion"];
                ++updates;
            },
            [this](const json& o) {
                std::lock_guard lock(mutex);
                auto key = kube::object_key(o);
                if (!view.erase(key)) unknown_delete = true;
                ++deletes[key];
            },
        };
    }

    std::map<std::string, std::string> snapshot() {
        std::lock_guard lock(mutex);
        return view;
    }
};

std::map<std::string, std::string> store_state(const kube::Informer& informer) {
    std::map<std::string, std::string> state;
    for (const auto& obj : informer.store().list()) {
        state[kube::object_key(*obj)] = (*obj)["metadata"]["resourceVersion"];
    }
    return state;
}

// The store, the handlers' view and the server agree (the server listed last, so a change
// still travelling shows up as a retry of wait_until()).
bool consistent(const kube::Client& client, const kube::Informer& informer, Recorder& rec,
                const std::string& ns) {
    auto server = kube_test::server_state(client, kube::resources::pods, ns);
    return store_state(informer) == server && rec.snapshot() == server;
}

void create_pods(const kube::Client& client, const std::string& ns, const std::string& prefix,
                 int from, int to) {
    for (int i = from; i < to; ++i) {
        client.create(kube::resources::pods, ns,
                      make_pod(prefix + std::to_string(i), node(i), {}, json{{"app", "inf"}}));
    }
}

void label_pods(const kube::Client& client, const std::string& ns, const std::string& prefix,
                int from, int to, const std::string& value) {
    for (int i = from; i < to; ++i) {
        client.patch(kube::resources::pods, ns, prefix + std::to_string(i),
                     json{{"metadata", {{"labels", {{"step", value}}}}}}, kube::PatchType::Merge);
    }
}

void delete_pods(const kube::Client& client, const std::string& ns, const std::string& prefix,
                 int from, int to) {
    for (int i = from; i < to; ++i) {
        client.remove(kube::resources::pods, ns, prefix + std::to_string(i),
                      kube_test::immediately());
    }
}

kube::InformerOptions options_for(const std::string& ns) {
    kube::InformerOptions o;
    o.ns = ns;
    o.page_size = 20;  // several pages
    o.backoff_initial = 100ms;
    o.backoff_max = 1s;
    return o;
}

}  // namespace

TEST_CASE("informer: the store equals the server after creates, updates and deletes",
          "[integration][informer]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-inf");
    create_pods(client, ns.name(), "p", 0, 50);

    Recorder rec;
    auto opts = options_for(ns.name());
    opts.resync_period = 1s;
    kube::Informer informer(client, kube::resources::pods, opts);
    informer.add_handlers(rec.handlers());
    CHECK_FALSE(informer.has_synced());
    informer.start();
    REQUIRE(informer.wait_for_sync(30s));
    CHECK(informer.store().size() >= 50);

    create_pods(client, ns.name(), "p", 50, 80);
    label_pods(client, ns.name(), "p", 0, 20, "one");
    delete_pods(client, ns.name(), "p", 60, 80);
    label_pods(client, ns.name(), "p", 10, 30, "two");
    CHECK(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 30s));
    CHECK(informer.store().size() == 60);
    auto key = ns.name() + "/p5";
    auto p5 = informer.store().get(key);
    REQUIRE(p5);
    CHECK((*p5)["metadata"]["labels"]["step"] == "one");
    CHECK((*informer.store().get(ns.name() + "/p15"))["metadata"]["labels"]["step"] == "two");
    CHECK_FALSE(informer.store().contains(ns.name() + "/p70"));

    // KWOK's status updates and ours were reported as updates; periodic resyncs too.
    CHECK(wait_until([&] { return informer.stats().resyncs >= 1; }, 10s));
    {
        std::lock_guard lock(rec.mutex);
        CHECK_FALSE(rec.duplicate_add);
        CHECK_FALSE(rec.unknown_delete);
        CHECK(rec.adds.size() == 80);
        for (const auto& [k, n] : rec.adds) CHECK(n == 1);
        CHECK(rec.deletes.size() == 20);
        CHECK(rec.resync_updates > 0);
    }
    CHECK(informer.stats().lists == 1);
    informer.stop();
    CHECK_FALSE(informer.running());

    // Nodes: cluster-scoped, keyed by name.
    kube::Informer nodes(client, kube::resources::nodes);
    nodes.start();
    REQUIRE(nodes.wait_for_sync(30s));
    CHECK(nodes.store().contains("kwok-node-0"));
    CHECK(nodes.store().size() >= static_cast<std::size_t>(kube_test::testenv().nodes));
}

TEST_CASE("informer: consistent again after kube-apiserver restarts in the middle of a watch",
          "[integration][informer-restart]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-restart");
    create_pods(client, ns.name(), "r", 0, 40);

    Recorder rec;
    kube::Informer informer(client, kube::resources::pods, options_for(ns.name()));
    informer.add_handlers(rec.handlers());
    informer.start();
    REQUIRE(informer.wait_for_sync(30s));
    REQUIRE(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 30s));
    const auto watches_before = informer.stats().watches;

    // A graceful restart (SIGTERM: the server closes the watch), then a crash (SIGKILL: the
    // connection just breaks) with changes made in between.
    kube_test::testenv_command({"restart-component", "apiserver"});
    create_pods(client, ns.name(), "r", 40, 50);
    delete_pods(client, ns.name(), "r", 0, 10);
    label_pods(client, ns.name(), "r", 10, 20, "after-restart");
    CHECK(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 60s));
    CHECK(informer.stats().watches > watches_before);

    kube_test::testenv_command({"kill-component", "apiserver"});
    std::this_thread::sleep_for(1s);  // the informer retries against a closed port meanwhile
    kube_test::testenv_command({"start-component", "apiserver"});
    create_pods(client, ns.name(), "r", 50, 55);
    delete_pods(client, ns.name(), "r", 10, 15);
    label_pods(client, ns.name(), "r", 20, 30, "after-crash");
    CHECK(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 60s));
    CHECK(informer.store().size() == 40);

    std::lock_guard lock(rec.mutex);
    CHECK_FALSE(rec.duplicate_add);
    CHECK_FALSE(rec.unknown_delete);
    for (const auto& [k, n] : rec.adds) CHECK(n == 1);
    for (const auto& [k, n] : rec.deletes) CHECK(n == 1);
    CHECK(rec.deletes.size() == 15);
    INFO("stats: lists " << informer.stats().lists << ", watches " << informer.stats().watches
                         << ", gone " << informer.stats().gone << ", errors "
                         << informer.stats().errors);
}

TEST_CASE(
    "informer: a too-old resourceVersion gets 410 and the informer relists without loss or "
    "duplicates",
    "[integration][informer-gone]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-gone");
    create_pods(client, ns.name(), "g", 0, 30);

    Recorder rec;
    kube::Informer informer(client, kube::resources::pods, options_for(ns.name()));
    informer.add_handlers(rec.handlers());
    informer.start();
    REQUIRE(informer.wait_for_sync(30s));
    REQUIRE(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 30s));

    // Stopped and started again with a recent resourceVersion: it resumes the watch, no relist.
    informer.stop();
    create_pods(client, ns.name(), "g", 30, 35);
    delete_pods(client, ns.name(), "g", 0, 3);
    informer.start();
    CHECK(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 30s));
    CHECK(informer.stats().lists == 1);
    CHECK(informer.stats().gone == 0);

    // Stopped; changes; the kube-apiserver restarts, so its watch cache begins after the
    // informer's resourceVersion. A plain watch from there gets 410 Gone...
    informer.stop();
    const std::string old_rv = informer.last_resource_version();
    create_pods(client, ns.name(), "g", 35, 45);
    delete_pods(client, ns.name(), "g", 3, 13);
    label_pods(client, ns.name(), "g", 13, 23, "changed");
    kube_test::testenv_command({"restart-component", "apiserver"});
    REQUIRE(wait_until(
        [&] {
            try {
                client.server_version();
                return true;
            } catch (...) {
                return false;
            }
        },
        30s));
    bool gone = false;
    try {
        kube::WatchOptions wo;
        wo.resource_version = old_rv;
        wo.timeout = 5s;
        auto stream = client.watch(kube::resources::pods, ns.name(), wo);
        kube::WatchEvent ev;
        while (stream.next(ev)) {
            if (ev.type == kube::WatchEventType::Error) {
                gone = ev.object.value("code", 0) == 410;
                CHECK_THAT(ev.object.value("message", ""),
                           Catch::Contains("too old resource version"));
                break;
            }
        }
    } catch (const kube::Gone& e) {
        gone = true;
    }
    REQUIRE(gone);

    // ... and the informer, resuming from the same resourceVersion, relists.
    informer.start();
    CHECK(wait_until([&] { return consistent(client, informer, rec, ns.name()); }, 30s));
    CHECK(wait_until([&] { return informer.stats().lists == 2; }, 10s));
    CHECK(informer.stats().gone >= 1);
    CHECK(informer.store().size() == 32);

    std::lock_guard lock(rec.mutex);
    CHECK_FALSE(rec.duplicate_add);
    CHECK_FALSE(rec.unknown_delete);
    CHECK(rec.adds.size() == 45);
    for (const auto& [k, n] : rec.adds) CHECK(n == 1);
    CHECK(rec.deletes.size() == 13);
    for (const auto& [k, n] : rec.deletes) CHECK(n == 1);
}
