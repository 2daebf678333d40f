// kubeconfig exec credential plugins (client.authentication.k8s.io/v1 and v1beta1
// ExecCredential): running the command, reading what it prints, and keeping the credential until
// it is about to expire or the API server refuses it. The Client uses an ExecCredentialSource
// when Config::exec is set; the command runner and the clock are interfaces so that the logic is
// testable without processes or waiting.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "phasescale/kube/config.hpp"

namespace phasescale::kube {

// What a plugin handed out. Either part may be empty, not both.
struct ExecCredential {
    std::string token;
    std::string client_cert_pem;
    std::string client_key_pem;
    // status.expirationTimestamp; none: good until the server refuses it.
    std::optional<std::chrono::system_clock::time_point> expiry;
};

// Reads a plugin's standard output; throws CredentialError (naming plugin.what) unless it is an
// ExecCredential of the plugin's apiVersion with a token or a certificate and its key.
ExecCredential parse_exec_credential(const std::string& output, const ExecPlugin& plugin);

// The KUBERNETES_EXEC_INFO the plugin gets: apiVersion, kind, spec.interactive=false, and
// spec.cluster (server, tls-server-name, insecure-skip-tls-verify, certificate-authority-data,
// proxy-url) when the plugin asks for provideClusterInfo.
nlohmann::json exec_info(const ExecPlugin& plugin, const Config& cluster);

// The outcome of running a command.
struct CommandResult {
    bool started = true;  // false: could not be started (start_error says why)
    int start_error = 0;  // errno of the failed start (ENOENT: not found)
    bool timed_out = false;
    int exit_code = 0;  // -signal if killed by a signal
    std::string out;
    std::string err;
};

class CommandRunner {
public:
    virtual ~CommandRunner() = default;
    // Runs argv[0] (looked up on PATH unless it has a '/') with argv, our environment plus
    // `env`, standard input from /dev/null; kills it (and its process group) after `timeout`.
    virtual CommandResult run(const std::vector<std::string>& argv,
                              const std::vector<std::pair<std::string, std::string>>& env,
                              std::chrono::milliseconds timeout) = 0;
};

// The real one: posix_spawn, pipes, poll.
std::shared_ptr<CommandRunner> process_runner();

using Clock = std::function<std::chrono::system_clock::time_point()>;

// One plugin's credential, shared by all requests of a Client (thread-safe; a refresh runs the
// plugin once while other callers wait for it).
class ExecCredentialSource {
public:
    // Refresh this long before the expiry, or a quarter of the credential's lifetime if that is
    // shorter (so that a token good for a minute is not fetched again on every request).
    static constexpr std::chrono::seconds kRefreshMargin{30};

    ExecCredentialSource(ExecPlugin plugin, nlohmann::json exec_info,
                         std::shared_ptr<CommandRunner> runner, Clock clock,
                         std::function<void(const std::string&, const std::string&)> log);

    // The credential to send now: the cached one, or a fresh one from the plugin when there is
    // none, it expires within the margin, or it was refused. Throws CredentialError.
    std::shared_ptr<const ExecCredential> get();
    // The server answered 401 to a request made with `used`: the next get() runs the plugin
    // (unless another caller has refreshed it since).
    void refused(const std::shared_ptr<const ExecCredential>& used);

    const ExecPlugin& plugin() const { return plugin_; }

private:
    bool fresh(std::chrono::system_clock::time_point now) const;
    std::shared_ptr<const ExecCredential> run_plugin();
    std::string failure(const CommandResult& result) const;

    ExecPlugin plugin_;
    nlohmann::json exec_info_;
    std::shared_ptr<CommandRunner> runner_;
    Clock clock_;
    std::function<void(const std::string&, const std::string&)> log_;
    std::mutex mutex_;
    std::shared_ptr<const ExecCredential> current_;
    std::chrono::system_clock::time_point obtained_at_{};
};

}  // namespace phasescale::kube
