// The start-up check of the API server (server_check.hpp) over a fake discovery: what the
// operator decides when pods/resize is there, missing, or cannot be read. The real discovery
// call against the test control plane is in server_check_integration_test.cpp.
#include <catch2/catch.hpp>

#include <stdexcept>

#include <phasescale/control/server_check.hpp>

using namespace phasescale::control;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

class FakeDiscovery final : public ServerDiscovery {
public:
    json version_answer = {{"gitVersion", "v1.35.0"}};
    json resources = {{"kind", "APIResourceList"},
                      {"resources", {{{"name", "pods"}}, {{"name", "pods/resize"}}}}};
    bool fail_resources = false, fail_version = false;

    json version() override {
        if (fail_version) throw std::runtime_error("connection refused");
        return version_answer;
    }
    json core_v1_resources() override {
        if (fail_resources) throw std::runtime_error("403 Forbidden");
        return resources;
    }
};

}  // namespace

TEST_CASE("server check: pods/resize served, missing, or not readable", "[unit]") {
    FakeDiscovery d;
    ServerSupport s = check_server(d);
    CHECK(s.pod_resize);
    CHECK(s.version == "v1.35.0");
    CHECK(s.message.empty());

    // A 1.30 server: pods, no pods/resize.
    d.version_answer = {{"gitVersion", "v1.30.4"}};
    d.resources["resources"] = {{{"name", "pods"}}, {{"name", "pods/status"}}};
    s = check_server(d);
    CHECK_FALSE(s.pod_resize);
    CHECK_THAT(s.message, Contains("v1.30.4") && Contains("pods/resize"));

    // Discovery refused: InPlace is not trusted, and the message says why.
    d.fail_resources = true;
    s = check_server(d);
    CHECK_FALSE(s.pod_resize);
    CHECK_THAT(s.message, Contains("403 Forbidden"));

    // No version (only for the message): discovery still decides.
    d.fail_resources = false;
    d.fail_version = true;
    d.resources["resources"] = {{{"name", "pods/resize"}}};
    s = check_server(d);
    CHECK(s.pod_resize);
    CHECK(s.version.empty());
}
