// How to reach and authenticate to a Kubernetes API server: from a kubeconfig (current or a named
// context) or from inside a pod (service-account token and CA). TLS is verified unless the
// kubeconfig says insecure-skip-tls-verify.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phasescale::kube {

// A kubeconfig user's exec credential plugin (kubeconfig users[].user.exec): a command that
// prints a client.authentication.k8s.io ExecCredential (a token and/or a client certificate,
// with an expiry). Loading a kubeconfig only reads this; the Client runs the command when it
// needs a credential (exec_credential.hpp).
struct ExecPlugin {
    std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
    // As kubectl runs it: a bare name is looked up on PATH; a relative path with a '/' is
    // relative to the kubeconfig's folder (resolved when the kubeconfig is read).
    std::string command;
    std::vector<std::string> args;
    // Set for the command on top of our own environment.
    std::vector<std::pair<std::string, std::string>> env;
    std::string install_hint;  // shown when the command is not found
    // Pass the cluster's server, CA, ... in KUBERNETES_EXEC_INFO (spec.cluster).
    bool provide_cluster_info = false;
    // Never or IfAvailable (the same to us: we never have a terminal). Always is refused.
    std::string interactive_mode = "IfAvailable";
    // How long the command may run before it is killed and the request fails.
    std::chrono::milliseconds timeout{60000};
    // Names it in messages: "kubeconfig FILE: users["NAME"].exec (COMMAND)".
    std::string what;
};

struct Config {
    // https://host:port (a path prefix is allowed). Plain http only with allow_http (tests of
    // our own): the token would travel in clear.
    std::string server;
    bool allow_http = false;

    // Asked before every attempt of every request but a GET: false refuses the write (Fenced).
    // The operator closes it while its replica does not hold a fresh leader lease, so that a
    // replica that lost the lease mid-tick writes nothing. Null: always open.
    std::function<bool()> write_fence;

    // PEM certificates the server's certificate must chain to. Empty: the system trust store.
    std::string ca_pem;
    bool insecure_skip_tls_verify = false;
    // Name to verify the serving certificate against (and to send as SNI) instead of the
    // server's host (kubeconfig tls-server-name).
    std::string tls_server_name;

    // Bearer token, or a file holding it (re-read every token_file_refresh: projected
    // service-account tokens rotate, the kubelet rewrites the file well before the old one
    // expires). token wins when both are set.
    std::string token;
    std::filesystem::path token_file;
    std::chrono::milliseconds token_file_refresh{60000};
    // Client certificate (chain) and private key, PEM.
    std::string client_cert_pem;
    std::string client_key_pem;
    // Credentials from a plugin instead (or on top of a client certificate): its token and
    // certificate win over the ones above.
    std::optional<ExecPlugin> exec;

    // http://[user:password@]host[:port] (kubeconfig proxy-url): every connection goes through
    // this proxy, an https server's through a CONNECT tunnel. Empty: direct.
    std::string proxy_url;

    // Where the client's own messages go (an exec plugin's stderr, its runs): level ("info",
    // "warning") and text. Null: standard error.
    std::function<void(const std::string& level, const std::string& message)> log;

    // The context's namespace ("default" when it names none); in-cluster: the pod's namespace.
    std::string default_namespace = "default";

    // Client-side rate limit over all requests of a Client: a token bucket refilled at qps with
    // room for burst requests.
    double qps = 20.0;
    int burst = 40;
    // Per attempt, for everything but watches (which use their timeoutSeconds plus a margin).
    std::chrono::milliseconds request_timeout{30000};
    // Retries of a request that may be retried (reads on 5xx and transport errors, any request
    // on 429), with exponential backoff from retry_backoff_initial up to retry_backoff_max.
    int max_retries = 5;
    std::chrono::milliseconds retry_backoff_initial{200};
    std::chrono::milliseconds retry_backoff_max{10000};
    std::string user_agent = "phasescale/0.1";

    // Where this came from, for messages ("kubeconfig /root/.kube/config, context testenv").
    std::string source;

    // A kubeconfig file; an empty context means current-context. Relative file paths in it are
    // relative to the kubeconfig's folder, as kubectl reads them.
    static Config from_kubeconfig(const std::filesystem::path& file,
                                  const std::string& context = {});
    // Several kubeconfig files merged as kubectl merges KUBECONFIG=a:b (the first file that sets
    // a name or current-context wins).
    static Config from_kubeconfig(const std::vector<std::filesystem::path>& files,
                                  const std::string& context = {});
    // A kubeconfig given as text; `origin` names it in messages, `base_dir` resolves relative
    // paths.
    static Config from_kubeconfig_text(const std::string& yaml, const std::string& origin,
                                       const std::filesystem::path& base_dir,
                                       const std::string& context = {});

    // Inside a pod: KUBERNETES_SERVICE_HOST/_PORT and the service account's token, ca.crt and
    // namespace in `service_account_dir`.
    static Config in_cluster(const std::filesystem::path& service_account_dir =
                                 "/var/run/secrets/kubernetes.io/serviceaccount");

    // What a controller normally wants: $KUBECONFIG (a colon-separated list) if set, else
    // ~/.kube/config if it exists, else in-cluster.
    static Config load_default(const std::string& context = {});
};

// Throws ConfigError (naming `what`) unless `pem` holds at least one X.509 certificate.
void check_certificates_pem(const std::string& pem, const std::string& what);
// Throws ConfigError unless `pem` holds a private key.
void check_private_key_pem(const std::string& pem, const std::string& what);

}  // namespace phasescale::kube
