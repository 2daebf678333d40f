// Leader election on a coordination.k8s.io/v1 Lease of the real kube-apiserver: two candidates,
// exactly one leads at a time; when the leader stops renewing, the other takes over once the
// lease has expired, within the lease duration (plus a retry period or two); a released lease is
// taken over at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "kube_support.hpp"
#include "phasescale/kube/leader_election.hpp"

namespace kube = phasescale::kube;
using kube_test::TestNamespace;
using kube_test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_CASE("leader election: one leader at a time, takeover when the leader stops renewing",
          "[integration][lease]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-lease");

    kube::LeaderElectionConfig base;
    base.lease_namespace = ns.name();
    base.lease_name = "phasescale-operator";
    base.lease_duration = 4s;
    base.renew_deadline = 3s;
    base.retry_period = 500ms;
    base.release_on_stop = false;  // a crash: the lease is left to expire

    std::atomic<int> started_a{0}, started_b{0}, stopped_a{0}, stopped_b{0};
    auto cfg_a = base, cfg_b = base;
    cfg_a.identity = "candidate-a";
    cfg_b.identity = "candidate-b";
    kube::LeaderElector a(client, cfg_a, {[&] { ++started_a; }, [&] { ++stopped_a; }, {}});
    kube::LeaderElector b(client, cfg_b, {[&] { ++started_b; }, [&] { ++stopped_b; }, {}});

    CHECK_THROWS_AS(kube::LeaderElector(client,
                                        [&] {
                                            auto c = cfg_a;
                                            c.renew_deadline = 5s;
                                            return c;
                                        }()),
                    std::invalid_argument);

    a.start();
    b.start();
    REQUIRE(wait_until([&] { return a.is_leader() || b.is_leader(); }, 15s));

    // For a few seconds (several renewals): never two leaders, and the Lease names the one.
    auto until = std::chrono::steady_clock::now() + 3s;
    int samples = 0;
    while (std::chrono::steady_clock::now() < until) {
        bool la = a.is_leader(), lb = b.is_leader();
        CHECK_FALSE((la && lb));
        if (la != lb) {
            json lease = client.get(kube::resources::leases, ns.name(), "phasescale-operator");
            std::string holder = lease["spec"]["holderIdentity"];
            // The holder may have just changed hands between the two reads; it must not be "".
            CHECK((holder == "candidate-a" || holder == "candidate-b"));
        }
        ++samples;
        std::this_thread::sleep_for(50ms);
    }
    CHECK(samples > 10);
    CHECK(started_a + started_b == 1);

    kube::LeaderElector& leader = a.is_leader() ? a : b;
    kube::LeaderElector& follower = a.is_leader() ? b : a;
    const std::string leader_id = leader.config().identity;
    CHECK(follower.leader() == leader_id);
    json lease = client.get(kube::resources::leases, ns.name(), "phasescale-operator");
    CHECK(lease["spec"]["holderIdentity"] == leader_id);
    CHECK(lease["spec"]["leaseDurationSeconds"] == 4);

    // The leader stops renewing without releasing.
    auto stopped_at = std::chrono::steady_clock::now();
    leader.stop();
    CHECK_FALSE(leader.is_leader());
    CHECK(stopped_a + stopped_b == 1);
    bool early = false;
    REQUIRE(wait_until(
        [&] {
            // Not before the lease could have expired: the last renewal was at most one retry
            // period before the stop.
            if (follower.is_leader() && std::chrono::steady_clock::now() - stopped_at <
                                            base.lease_duration - base.retry_period - 200ms) {
                early = true;
            }
            return follower.is_leader();
        },
        20s, 20ms));
    auto takeover = std::chrono::steady_clock::now() - stopped_at;
    CHECK_FALSE(early);
    INFO(
        "takeover after " << std::chrono::duration_cast<std::chrono::milliseconds>(takeover).count()
                          << " ms");
    CHECK(takeover <= base.lease_duration + 2 * base.retry_period + 1s);
    lease = client.get(kube::resources::leases, ns.name(), "phasescale-operator");
    CHECK(lease["spec"]["holderIdentity"] == follower.config().identity);
    CHECK(lease["spec"]["leaseTransitions"] == 1);

    follower.stop();
}

TEST_CASE("leader election: release on stop hands over at once", "[integration][lease-release]") {
    auto client = kube_test::admin_client();
    TestNamespace ns(client, "kube-it-release");
    kube::LeaderElectionConfig cfg;
    cfg.lease_namespace = ns.name();
    cfg.lease_name = "handover";
    cfg.lease_duration = 10s;
    cfg.renew_deadline = 6s;
    cfg.retry_period = 300ms;
    cfg.release_on_stop = true;
    auto cfg_a = cfg, cfg_b = cfg;
    cfg_a.identity = "first";
    cfg_b.identity = "second";
    kube::LeaderElector a(client, cfg_a);
    a.start();
    REQUIRE(wait_until([&] { return a.is_leader(); }, 15s));
    kube::LeaderElector b(client, cfg_b);
    b.start();
    std::this_thread::sleep_for(1s);
    CHECK_FALSE(b.is_leader());
    auto t0 = std::chrono::steady_clock::now();
    a.stop();
    json lease = client.get(kube::resources::leases, ns.name(), "handover");
    CHECK(lease["spec"].value("holderIdentity", "") != "first");
    REQUIRE(wait_until([&] { return b.is_leader(); }, 15s, 20ms));
    // Well before the 10 s lease would have expired.
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    b.stop();
}

TEST_CASE(
    "leader election: writes are fenced on a fresh lease, a replica whose renewals stall writes "
    "nothing",
    "[integration][lease-fence]") {
    auto admin = kube_test::admin_client();
    TestNamespace ns(admin, "kube-it-fence");
    kube::LeaderElectionConfig cfg;
    cfg.lease_namespace = ns.name();
    cfg.lease_name = "phasescale-operator";
    cfg.identity = "fenced";
    cfg.lease_duration = 4s;
    cfg.renew_deadline = 3s;
    cfg.retry_period = 500ms;
    cfg.release_on_stop = false;

    // The Lease's own client can be cut off (its renewals then fail, as against a hung API
    // server); the data client is fenced on the elector's fresh lease, as in the operator.
    auto base = kube::Config::from_kubeconfig(kube_test::testenv().kubeconfig);
    std::atomic<bool> lease_reachable{true};
    auto lease_cfg = base;
    lease_cfg.write_fence = [&] { return lease_reachable.load(); };
    std::unique_ptr<kube::LeaderElector> elector;
    auto data_cfg = base;
    data_cfg.write_fence = [&] { return elector && elector->holds_fresh_lease(); };
    kube::Client data(data_cfg);

    auto config_map = [&](const std::string& name) {
        return json{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", name}}},
                    {"data", {{"k", "v"}}}};
    };
    CHECK_THROWS_AS(data.create(kube::resources::config_maps, ns.name(), config_map("before")),
                    kube::Fenced);
    elector = std::make_unique<kube::LeaderElector>(kube::Client(lease_cfg), cfg);
    elector->start();
    REQUIRE(wait_until([&] { return elector->holds_fresh_lease(); }, 15s));
    data.create(kube::resources::config_maps, ns.name(), config_map("leading"));
    data.get(kube::resources::config_maps, ns.name(), "leading");  // reads are never fenced

    lease_reachable = false;  // renewals fail from now on
    REQUIRE(wait_until([&] { return !elector->holds_fresh_lease(); }, cfg.renew_deadline + 2s));
    CHECK_THROWS_AS(data.create(kube::resources::config_maps, ns.name(), config_map("stale")),
                    kube::Fenced);
    CHECK_FALSE(admin.try_get(kube::resources::config_maps, ns.name(), "stale").has_value());
    CHECK_FALSE(admin.try_get(kube::resources::config_maps, ns.name(), "before").has_value());

    lease_reachable = true;  // the lease is taken again (nobody else wants it)
    REQUIRE(wait_until([&] { return elector->holds_fresh_lease(); }, cfg.lease_duration + 10s));
    data.create(kube::resources::config_maps, ns.name(), config_map("again"));
    elector->stop();
}
