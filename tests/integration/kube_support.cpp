#include "kube_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
        throw std::runtime_error(std::string(name) +
                                 " is not set: run this test through ctest (it starts the test control plane "
                                 "with tests/testenv), or under tests/testenv/with-testenv.sh");
    }
    return v;
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
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
    client_.create(kube::resources::namespaces, "",
                   json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name_}}}});
    // Pods need the namespace's default service account; the controller-manager makes it, but
    // not at once.
    try {
        client_.create(kube::resources::service_accounts, name_,
                       json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}});
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

json make_pod(const std::string& name, const std::string& node, const PodResources& r, const json& labels) {
    json resources = json::object();
    if (!r.cpu_request.empty()) resources["requests"]["cpu"] = r.cpu_request;
    if (!r.memory_request.empty()) resources["requests"]["memory"] = r.memory_request;
    if (!r.cpu_limit.empty()) resources["limits"]["cpu"] = r.cpu_limit;
    if (!r.memory_limit.empty()) resources["limits"]["memory"] = r.memory_limit;
    return json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", labels}}},
                {"spec",
                 {{"nodeName", node},
                  {"automountServiceAccountToken", false},
                  {"terminationGracePeriodSeconds", 0},
                  {"containers", json::array({json{{"name", "main"}, {"image", "trainer:latest"}, {"resources", resources}}})}}}};
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

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (condition()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(interval);
    }
}

std::map<std::string, std::string> server_state(const kube::Client& client, const kube::Resource& resource,
                                                const std::string& ns) {
    std::map<std::string, std::string> state;
    json list = client.list_all(resource, ns);
    for (const auto& item : list["items"]) {
        state[kube::object_key(item["metadata"].value("namespace", ""), item["metadata"]["name"].get<std::string>())] =
            item["metadata"]["resourceVersion"].get<std::string>();
    }
    return state;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& log) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        setpgid(0, 0);
        // Dies with the test, even if the test itself is killed.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (chdir(cwd.c_str()) != 0) _exit(127);
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null_fd = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (null_fd >= 0) dup2(null_fd, 0);
        execvp(args[0], args.data());
        _exit(127);
    }
}

bool ChildProcess::running() {
    if (pid_ <= 0) return false;
    int status;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

ChildProcess::~ChildProcess() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGTERM);
    kill(pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        throw std::runtime_error("cannot bind a port");
    }
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

bool wait_for_port(int port, std::chrono::milliseconds timeout) {
    return eventually(
        [port] {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            addr.sin_port = htons(static_cast<uint16_t>(port));
            bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
            close(fd);
            return ok;
        },
        timeout, std::chrono::milliseconds(50));
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
    if (status != 0) throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command + "\n" + out);
    return out;
}

TempDir::TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kube-test.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const fs::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace kube_test
