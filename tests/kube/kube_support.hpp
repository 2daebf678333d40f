// Helpers for the Kubernetes client tests: the test control plane's settings (from the
// environment that tests/testenv/run-in-testenv.sh or with-testenv.sh sets), namespaces that
// clean up after themselves, pods, waiting, and child processes.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "phasescale/kube/client.hpp"
#include "process.hpp"

namespace kube_test {

namespace kube = phasescale::kube;
using nlohmann::json;
// From tests/support: temporary folders, files, free ports, waits, child processes.
using test_support::ChildProcess;
using test_support::free_port;
using test_support::read_file;
using test_support::TempDir;
using test_support::wait_for_port;
using test_support::wait_until;
using test_support::write_file;

struct TestEnv {
    std::string dir;
    std::string kubeconfig;
    std::string apiserver_url;
    std::string etcd_url;
    std::string ca_file;
    std::string client_cert_file;
    std::string client_key_file;
    std::string admin_token;
    std::string viewer_token;
    int nodes = 0;
};

// The running control plane; throws (failing the test) when not run through the testenv scripts.
const TestEnv& testenv();

// A client of the admin user (token), with a rate limit high enough for bulk tests.
kube::Client admin_client(const std::string& context = {});

// Runs tests/testenv/testenv.sh ARGS... on the test's control plane (e.g. restart-component
// apiserver); throws if it fails.
void testenv_command(const std::vector<std::string>& args);

// Random lowercase suffix for names.
std::string suffix(std::size_t n = 6);

// A namespace made for one test (with its default service account), deleted afterwards.
class TestNamespace {
public:
    TestNamespace(const kube::Client& client, const std::string& prefix);
    ~TestNamespace();
    TestNamespace(const TestNamespace&) = delete;
    TestNamespace& operator=(const TestNamespace&) = delete;
    const std::string& name() const { return name_; }

private:
    kube::Client client_;
    std::string name_;
};

struct PodResources {
    std::string cpu_request = "100m";
    std::string cpu_limit = "200m";
    std::string memory_request = "64Mi";
    std::string memory_limit = "128Mi";
};

// A one-container ("main") pod bound to `node` (KWOK makes it Running).
json make_pod(const std::string& name, const std::string& node, const PodResources& r = {},
              const json& labels = json::object());

// Options, without designated initializers (GCC warns about the members they leave out).
kube::ListOptions selecting(const std::string& labels, const std::string& fields = {},
                            int limit = 0);
kube::DeleteOptions immediately();  // grace period 0
kube::DeleteOptions dry_run_delete();
kube::PatchOptions on_subresource(const std::string& subresource);

// name -> metadata.resourceVersion of every object the server lists.
std::map<std::string, std::string> server_state(const kube::Client& client,
                                                const kube::Resource& resource,
                                                const std::string& ns);

// Runs a shell command; throws with its output if it fails.
std::string run(const std::string& command);

}  // namespace kube_test
