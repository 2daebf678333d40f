#include "phasescale/kube/exec_credential.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <set>

#include "phasescale/kube/error.hpp"
#include "phasescale/kube/time.hpp"

extern char** environ;

namespace phasescale::kube {

using nlohmann::json;
using std::chrono::system_clock;

namespace {

std::string base64_encode(const std::string& data) {
    std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(data.data()),
                            static_cast<int>(data.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

// A string field of `status`, or empty; throws if it is there but not a string.
std::string status_string(const json& status, const char* key, const std::string& what) {
    if (!status.contains(key) || status[key].is_null()) return {};
    if (!status[key].is_string())
        throw CredentialError(what + ": status." + key + " is not a string");
    return status[key].get<std::string>();
}

// The last line of a plugin's stderr that says something, for an error message.
std::string last_line(const std::string& text) {
    std::string s = text;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    auto nl = s.find_last_of('\n');
    std::string line = nl == std::string::npos ? s : s.substr(nl + 1);
    return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// ----------------------------------------------------------------------------- process runner

// Closes a pipe's ends on scope exit.
struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (::pipe2(fd, O_CLOEXEC) != 0) throw CredentialError(std::strerror(errno));
    }
    ~Pipe() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
    void close(int end) {
        if (fd[end] >= 0) ::close(fd[end]);
        fd[end] = -1;
    }
};

// Our environment with `extra` set on top, as NAME=VALUE strings.
std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& extra) {
    std::set<std::string> overridden;
    for (const auto& [name, value] : extra) overridden.insert(name);
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry = *e;
        if (!overridden.contains(entry.substr(0, entry.find('=')))) env.push_back(entry);
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

class ProcessRunner : public CommandRunner {
public:
    CommandResult run(const std::vector<std::string>& argv_in,
                      const std::vector<std::pair<std::string, std::string>>& extra_env,
                      std::chrono::milliseconds timeout) override {
        CommandResult result;
        std::vector<std::string> argv_strings = argv_in;
        std::vector<std::string> env_strings = environment_with(extra_env);
        auto argv = c_strings(argv_strings);
        auto envp = c_strings(env_strings);
        Pipe out, err;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
        posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        // A process group of its own: a timeout kills what the plugin started too.
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        pid_t pid = -1;
        int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            result.started = false;
            result.start_error = rc;
            return result;
        }
        out.close(1);
        err.close(1);
        result.timed_out = !read_until_closed(out.fd[0], err.fd[0], timeout, result);
        if (result.timed_out) ::kill(-pid, SIGKILL);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        return result;
    }

private:
    // Reads both pipes until both are closed (true) or the deadline passes (false).
    static bool read_until_closed(int out_fd, int err_fd, std::chrono::milliseconds timeout,
                                  CommandResult& result) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
        std::string* sinks[2] = {&result.out, &result.err};
        int open = 2;
        while (open > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            int n = ::poll(fds, 2, static_cast<int>(left.count()));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || fds[i].revents == 0) continue;
                char buf[8192];
                ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
                if (got > 0) {
                    sinks[i]->append(buf, static_cast<std::size_t>(got));
                } else if (got == 0 || errno != EINTR) {
                    fds[i].fd = -1;  // poll ignores negative descriptors
                    --open;
                }
            }
        }
        return true;
    }
};

}  // namespace

// ------------------------------------------------------------------------------- credential

ExecCredential parse_exec_credential(const std::string& output, const ExecPlugin& plugin) {
    const std::string& what = plugin.what;
    json j = json::parse(output, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        throw CredentialError(what +
                              ": the plugin's output is not an ExecCredential (not a JSON "
                              "object; " +
                              std::to_string(output.size()) + " bytes)");
    }
    std::string api_version = j.value("apiVersion", "");
    if (api_version != plugin.api_version) {
        throw CredentialError(what + ": the plugin printed apiVersion \"" +
                              api_version.substr(0, 80) + "\", the kubeconfig asks for \"" +
                              plugin.api_version + "\"");
    }
    if (j.value("kind", "") != "ExecCredential") {
        throw CredentialError(what + ": the plugin printed kind \"" +
                              j.value("kind", "").substr(0, 80) + "\", not ExecCredential");
    }
    if (!j.contains("status") || !j["status"].is_object())
        throw CredentialError(what + ": the plugin's ExecCredential has no status");
    const json& status = j["status"];
    ExecCredential c;
    c.token = status_string(status, "token", what);
    c.client_cert_pem = status_string(status, "clientCertificateData", what);
    c.client_key_pem = status_string(status, "clientKeyData", what);
    if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
        throw CredentialError(
            what + ": the plugin's ExecCredential has status." +
            (c.client_cert_pem.empty() ? "clientKeyData" : "clientCertificateData") +
            " without status." +
            (c.client_cert_pem.empty() ? "clientCertificateData" : "clientKeyData"));
    }
    if (c.token.empty() && c.client_cert_pem.empty()) {
        throw CredentialError(what +
                              ": the plugin's ExecCredential has neither status.token nor "
                              "status.clientCertificateData");
    }
    std::string expiry = status_string(status, "expirationTimestamp", what);
    if (!expiry.empty()) {
        auto t = parse_time(expiry);
        if (!t) {
            throw CredentialError(what + ": status.expirationTimestamp \"" + expiry.substr(0, 80) +
                                  "\" is not an RFC 3339 time in UTC");
        }
        c.expiry = system_clock::time_point(
            std::chrono::duration_cast<system_clock::duration>(std::chrono::duration<double>(*t)));
    }
    return c;
}

json exec_info(const ExecPlugin& plugin, const Config& cluster) {
    json info = {{"apiVersion", plugin.api_version},
                 {"kind", "ExecCredential"},
                 {"spec", {{"interactive", false}}}};
    if (plugin.provide_cluster_info) {
        json c = {{"server", cluster.server}};
        if (!cluster.tls_server_name.empty()) c["tls-server-name"] = cluster.tls_server_name;
        if (cluster.insecure_skip_tls_verify) c["insecure-skip-tls-verify"] = true;
        if (!cluster.ca_pem.empty())
            c["certificate-authority-data"] = base64_encode(cluster.ca_pem);
        if (!cluster.proxy_url.empty()) c["proxy-url"] = cluster.proxy_url;
        info["spec"]["cluster"] = c;
    }
    return info;
}

std::shared_ptr<CommandRunner> process_runner() {
    return std::make_shared<ProcessRunner>();
}

ExecCredentialSource::ExecCredentialSource(
    ExecPlugin plugin, json exec_info, std::shared_ptr<CommandRunner> runner, Clock clock,
    std::function<void(const std::string&, const std::string&)> log)
    : plugin_(std::move(plugin)),
      exec_info_(std::move(exec_info)),
      runner_(std::move(runner)),
      clock_(std::move(clock)),
      log_(std::move(log)) {
    if (!clock_) clock_ = [] { return system_clock::now(); };
    if (!log_) {
        log_ = [](const std::string& level, const std::string& message) {
            std::cerr << level << ": " << message << "\n";
        };
    }
}

bool ExecCredentialSource::fresh(system_clock::time_point now) const {
    if (!current_) return false;
    if (!current_->expiry) return true;
    auto lifetime = *current_->expiry - obtained_at_;
    auto margin = std::min<system_clock::duration>(kRefreshMargin, lifetime / 4);
    return now < *current_->expiry - std::max<system_clock::duration>(margin, {});
}

std::shared_ptr<const ExecCredential> ExecCredentialSource::get() {
    std::lock_guard lock(mutex_);
    if (!fresh(clock_())) current_ = run_plugin();
    return current_;
}

void ExecCredentialSource::refused(const std::shared_ptr<const ExecCredential>& used) {
    std::lock_guard lock(mutex_);
    if (current_ == used) current_.reset();
}

std::shared_ptr<const ExecCredential> ExecCredentialSource::run_plugin() {
    std::vector<std::string> argv{plugin_.command};
    argv.insert(argv.end(), plugin_.args.begin(), plugin_.args.end());
    auto env = plugin_.env;
    env.emplace_back("KUBERNETES_EXEC_INFO", exec_info_.dump());
    auto started = clock_();
    CommandResult r = runner_->run(argv, env, plugin_.timeout);
    // The plugin's stderr is for people (kubectl shows it on the terminal): our log.
    for (std::size_t pos = 0; pos < r.err.size();) {
        auto nl = r.err.find('\n', pos);
        std::string line = r.err.substr(pos, nl == std::string::npos ? nl : nl - pos);
        if (!line.empty()) log_("info", plugin_.what + ": " + line);
        pos = nl == std::string::npos ? r.err.size() : nl + 1;
    }
    if (!r.started || r.timed_out || r.exit_code != 0) throw CredentialError(failure(r));
    auto credential = std::make_shared<ExecCredential>(parse_exec_credential(r.out, plugin_));
    obtained_at_ = started;
    std::string until =
        credential->expiry
            ? "until " +
                  format_time(
                      std::chrono::duration<double>(credential->expiry->time_since_epoch()).count())
            : "with no expiry";
    log_("info", plugin_.what + ": new credential (" +
                     (credential->token.empty() ? "client certificate" : "token") + ") " + until);
    return credential;
}

std::string ExecCredentialSource::failure(const CommandResult& r) const {
    std::string what = plugin_.what + ": ";
    if (!r.started) {
        if (r.start_error == ENOENT) {
            return what + "command \"" + plugin_.command + "\" not found" +
                   (plugin_.install_hint.empty() ? " (is it installed and on PATH?)"
                                                 : ": " + plugin_.install_hint);
        }
        return what + "cannot run \"" + plugin_.command + "\": " + std::strerror(r.start_error);
    }
    if (r.timed_out) {
        return what + "\"" + plugin_.command + "\" did not finish within " +
               std::to_string(plugin_.timeout.count()) + " ms and was killed";
    }
    std::string how = r.exit_code > 0 ? "exited with status " + std::to_string(r.exit_code)
                                      : "was killed by signal " + std::to_string(-r.exit_code);
    std::string said = last_line(r.err);
    return what + "\"" + plugin_.command + "\" " + how + (said.empty() ? "" : ": " + said);
}

}  // namespace phasescale::kube
