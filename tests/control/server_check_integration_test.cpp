// The start-up check's real discovery calls (GET /version, GET /api/v1) against the test
// control plane, whose kube-apiserver serves pods/resize. Run through
// tests/testenv/run-in-testenv.sh (KUBECONFIG set).
#include <catch2/catch.hpp>

#include <cstdlib>

#include <phasescale/control/server_check.hpp>
#include <phasescale/kube/config.hpp>

using namespace phasescale;

TEST_CASE("server check: the test control plane serves pods/resize", "[integration]") {
    REQUIRE(std::getenv("KUBECONFIG") != nullptr);
    const kube::Config config = kube::Config::load_default("");  // $KUBECONFIG
    const control::ServerSupport s =
        control::check_server(*control::kube_discovery(kube::Client(config)));
    CHECK(s.pod_resize);
    CHECK(s.message.empty());
    CHECK(s.version.rfind("v1.", 0) == 0);
}
