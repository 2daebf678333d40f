#include "kube_support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kube_test {

namespace fs = std::filesystem;

namespace {

std::string env_or_throw(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        throw std::runtime_error(
            std::string(name) +
            " is not set: run this test through ctest (it starts the test control plane "
            "with tests/testenv), or under tests/testenv/with-testenv.sh");
    }
    return v;
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

}  // namespace

const TestEnv& testenv() {
    static const TestEnv env = [] {
        TestEnv e;
        e.dir = env_or_throw("PHASESCALE_TESTENV_DIR");
        e.kubeconfig = env_or_throw("KUBECONFIG");
        e.apiserver_url = env_or_throw("PHASESCALE_TESTENV_APISERVER_URL");
        e.etcd_url = env_or_throw("PHASESCALE_TESTENV_ETCD_URL");
        e.ca_file = env_or_throw("PHASESCALE_TESTENV_CA_FILE");
        e.client_cert_file = env_or_throw("PHASESCALE_TESTENV_CLIENT_CERT_FILE");
        e.client_key_file = env_or_throw("PHASESCALE_TESTENV_CLIENT_KEY_FILE");
        e.admin_token = env_or_throw("PHASESCALE_TESTENV_ADMIN_TOKEN");
        e.viewer_token = env_or_throw("PHASESCALE_TESTENV_VIEWER_TOKEN");
        e.nodes = std::atoi(env_or_throw("PHASESCALE_TESTENV_NODES").c_str());
        return e;
    }();
    return env;
}

kube::Client admin_client(const std::string& context) {
    auto cfg = kube::Config::from_kubeconfig(testenv().kubeconfig, context);
    cfg.qps = 500;
    cfg.burst = 1000;
    return kube::Client(cfg);
}

void testenv_command(const std::vector<std::string>& args) {
    std::string cmd = shell_quote(PHASESCALE_TESTENV_SCRIPT);
    cmd += " " + shell_quote(args.at(0)) + " " + shell_quote(testenv().dir);
    for (std::size_t i = 1; i < args.size(); ++i) cmd += " " + shell_quote(args[i]);
    run(cmd);
}

std::string suffix(std::size_t n) {
    static std::mt19937_64 rng(std::random_device{}());
    static std::mutex m;
    std::lock_guard lock(m);
    const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += alphabet[rng() % 36];
    return s;
}

TestNamespace::TestNamespace(const kube::Client& client, const std::string& prefix)
    : client_(client), name_(prefix + "-" + suffix()) {
    client_.create(
        kube::resources::namespaces, "",
        json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name_}}}});
    // Pods need the namespace's default service account; the controller-manager makes it, but
    // not at once.
    try {
        client_.create(kube::resources::service_accounts, name_,
                       json{{"apiVersion", "v1"},
                            {"kind", "ServiceAccount"},
                            {"metadata", {{"name", "default"}}}});
    } catch (const kube::Conflict&) {
    }
}

TestNamespace::~TestNamespace() {
    try {
        kube::DeleteOptions o;
        o.propagation_policy = "Background";
        client_.remove(kube::resources::namespaces, "", name_, o);
    } catch (...) {
    }
}

json make_pod(const std::string& name, const std::string& node, const PodResources& r,
              const json& labels) {
    json resources = json::object();
    if (!r.cpu_request.empty()) resources["requests"]["cpu"] = r.cpu_request;
    if (!r.memory_request.empty()) resources["requests"]["memory"] = r.memory_request;
    if (!r.cpu_limit.empty()) resources["limits"]["cpu"] = r.cpu_limit;
    if (!r.memory_limit.empty()) resources["limits"]["memory"] = r.memory_limit;
    return json{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"labels", labels}}},
        {"spec",
         {{"nodeName", node},
          {"automountServiceAccountToken", false},
          {"terminationGracePeriodSeconds", 0},
          {"containers",
           json::array(
               {json{{"name", "main"}, {"image", "trainer:latest"}, {"resources", resources}}})}}}};
}

kube::ListOptions selecting(const std::string& labels, const std::string& fields, int limit) {
    kube::ListOptions o;
    o.label_selector = labels;
    o.field_selector = fields;
    o.limit = limit;
    return o;
}

kube::DeleteOptions immediately() {
    kube::DeleteOptions o;
    o.grace_period_seconds = 0;
    return o;
}

kube::DeleteOptions dry_run_delete() {
    kube::DeleteOptions o;
    o.dry_run = true;
    return o;
}

kube::PatchOptions on_subresource(const std::string& subresource) {
    kube::PatchOptions o;
    o.subresource = subresource;
    return o;
}

std::map<std::string, std::string> server_state(const kube::Client& client,
                                                const kube::Resource& resource,
                                                const std::string& ns) {
    std::map<std::string, std::string> state;
    json list = client.list_all(resource, ns);
    for (const auto& item : list["items"]) {
        state[kube::object_key(item["metadata"].value("namespace", ""),
                               item["metadata"]["name"].get<std::string>())] =
            item["metadata"]["resourceVersion"].get<std::string>();
    }
    return state;
}

std::string run(const std::string& command) {
    std::string full = command + " 2>&1";
    FILE* p = popen(full.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("cannot run: " + command);
    std::string out;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    int status = pclose(p);
    if (status != 0)
        throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command +
                                 "\n" + out);
    return out;
}

}  // namespace kube_test
