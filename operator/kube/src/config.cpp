#include "phasescale/kube/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "pem.hpp"
#include "phasescale/kube/error.hpp"

namespace phasescale::kube {

namespace fs = std::filesystem;

namespace {

// Reads a whole file; throws ConfigError "<what>: cannot read <path>: <reason>".
std::string read_file(const fs::path& path, const std::string& what) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        throw ConfigError(what + ": cannot read " + path.string() + ": " + std::strerror(errno));
    }
    std::string data;
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
    bool failed = std::ferror(f) != 0;
    int err = errno;
    std::fclose(f);
    if (failed)
        throw ConfigError(what + ": cannot read " + path.string() + ": " + std::strerror(err));
    return data;
}

std::string trim(std::string s) {
    auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

// One named entry (cluster, user or context) and where it came from.
struct Entry {
    YAML::Node node;
    std::string origin;
    fs::path base_dir;
};

struct Kubeconfig {
    std::map<std::string, Entry> clusters, users, contexts;
    std::string current_context;
    std::string current_context_origin;
    std::string origins;  // all files, for messages
};

std::string scalar(const YAML::Node& node, const std::string& key, const std::string& what) {
    YAML::Node v = node[key];
    if (!v || v.IsNull()) return {};
    if (!v.IsScalar()) throw ConfigError(what + "." + key + ": expected a string");
    return v.as<std::string>();
}

bool boolean(const YAML::Node& node, const std::string& key, const std::string& what) {
    YAML::Node v = node[key];
    if (!v || v.IsNull()) return false;
    try {
        return v.as<bool>();
    } catch (const YAML::Exception&) {
        throw ConfigError(what + "." + key + ": expected true or false, got \"" +
                          v.as<std::string>("?") + "\"");
    }
}

void collect(const YAML::Node& root, const char* list_key, const char* item_key,
             const std::string& origin, const fs::path& base_dir,
             std::map<std::string, Entry>& into) {
    YAML::Node list = root[list_key];
    if (!list || list.IsNull()) return;
    if (!list.IsSequence()) throw ConfigError(origin + ": " + list_key + " must be a list");
    std::size_t i = 0;
    for (const auto& item : list) {
        std::string where = origin + ": " + list_key + "[" + std::to_string(i++) + "]";
        if (!item.IsMap())
            throw ConfigError(where + ": expected a mapping with name and " + item_key);
        std::string name = scalar(item, "name", where);
        if (name.empty()) throw ConfigError(where + ": has no name");
        YAML::Node body = item[item_key];
        if (body && !body.IsNull() && !body.IsMap()) {
            throw ConfigError(where + "." + item_key + ": expected a mapping");
        }
        into.try_emplace(name,
                         Entry{body ? body : YAML::Node(YAML::NodeType::Map), origin, base_dir});
    }
}

void merge_text(Kubeconfig& kc, const std::string& text, const std::string& origin,
                const fs::path& base_dir) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw ConfigError(origin + ": not valid YAML: " + e.what());
    }
    if (!kc.origins.empty()) kc.origins += ", ";
    kc.origins += origin;
    if (!root || root.IsNull()) return;  // an empty file is an empty config
    if (!root.IsMap())
        throw ConfigError(origin + ": not a kubeconfig (expected a mapping at the top)");
    std::string kind = scalar(root, "kind", origin);
    if (!kind.empty() && kind != "Config")
        throw ConfigError(origin + ": kind is \"" + kind + "\", not Config");
    collect(root, "clusters", "cluster", origin, base_dir, kc.clusters);
    collect(root, "users", "user", origin, base_dir, kc.users);
    collect(root, "contexts", "context", origin, base_dir, kc.contexts);
    std::string current = scalar(root, "current-context", origin);
    if (kc.current_context.empty() && !current.empty()) {
        kc.current_context = current;
        kc.current_context_origin = origin;
    }
}

fs::path resolve(const fs::path& base_dir, const std::string& file) {
    fs::path p(file);
    if (p.is_relative() && !base_dir.empty()) p = base_dir / p;
    return p;
}

std::string names_of(const std::map<std::string, Entry>& entries) {
    std::string s;
    for (const auto& [name, entry] : entries) s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none" : s;
}

// data (base64) or file, whichever is given; empty if neither.
std::string data_or_file(const Entry& e, const std::string& data_key, const std::string& file_key,
                         const std::string& what) {
    std::string data = scalar(e.node, data_key, what);
    if (!data.empty()) return detail::base64_decode(data, what + "." + data_key);
    std::string file = scalar(e.node, file_key, what);
    if (!file.empty()) return read_file(resolve(e.base_dir, file), what + "." + file_key);
    return {};
}

// Strings of a YAML list (exec args); throws unless it is one.
std::vector<std::string> string_list(const YAML::Node& node, const std::string& key,
                                     const std::string& what) {
    std::vector<std::string> out;
    YAML::Node list = node[key];
    if (!list || list.IsNull()) return out;
    if (!list.IsSequence()) throw ConfigError(what + "." + key + ": expected a list of strings");
    for (const auto& item : list) {
        if (!item.IsScalar()) throw ConfigError(what + "." + key + ": expected a list of strings");
        out.push_back(item.as<std::string>());
    }
    return out;
}

// exec.env: a list of {name, value}.
std::vector<std::pair<std::string, std::string>> exec_env(const YAML::Node& exec,
                                                          const std::string& what) {
    std::vector<std::pair<std::string, std::string>> out;
    YAML::Node list = exec["env"];
    if (!list || list.IsNull()) return out;
    if (!list.IsSequence()) throw ConfigError(what + ".env: expected a list of {name, value}");
    std::size_t i = 0;
    for (const auto& item : list) {
        std::string where = what + ".env[" + std::to_string(i++) + "]";
        if (!item.IsMap()) throw ConfigError(where + ": expected {name, value}");
        std::string name = scalar(item, "name", where);
        if (name.empty() || name.find('=') != std::string::npos)
            throw ConfigError(where + ": needs a name (without '=')");
        out.emplace_back(name, scalar(item, "value", where));
    }
    return out;
}

// The user's exec credential plugin, if it has one. Nothing is run here.
std::optional<ExecPlugin> exec_plugin(const Entry& user, const std::string& user_what) {
    YAML::Node exec = user.node["exec"];
    if (!exec || exec.IsNull()) return std::nullopt;
    std::string what = user_what + ".exec";
    if (!exec.IsMap()) throw ConfigError(what + ": expected a mapping");
    ExecPlugin p;
    p.api_version = scalar(exec, "apiVersion", what);
    if (p.api_version != "client.authentication.k8s.io/v1" &&
        p.api_version != "client.authentication.k8s.io/v1beta1") {
        throw ConfigError(what + ".apiVersion: \"" + p.api_version +
                          "\" is not supported (client.authentication.k8s.io/v1 or v1beta1; "
                          "v1alpha1 was removed in Kubernetes 1.24)");
    }
    p.command = scalar(exec, "command", what);
    if (p.command.empty()) throw ConfigError(what + ": has no command");
    // kubectl: a relative path with a slash is relative to the kubeconfig's folder; a bare
    // name is looked up on PATH.
    if (p.command.find('/') != std::string::npos)
        p.command = resolve(user.base_dir, p.command).string();
    p.args = string_list(exec, "args", what);
    p.env = exec_env(exec, what);
    p.install_hint = trim(scalar(exec, "installHint", what));
    p.provide_cluster_info = boolean(exec, "provideClusterInfo", what);
    std::string mode = scalar(exec, "interactiveMode", what);
    if (mode == "Always") {
        throw ConfigError(what +
                          ".interactiveMode: Always needs a terminal, and phasescale "
                          "never has one: use a plugin that works without a prompt "
                          "(e.g. with a service principal or workload identity) and set "
                          "interactiveMode to Never or IfAvailable");
    }
    if (!mode.empty() && mode != "Never" && mode != "IfAvailable") {
        throw ConfigError(what + ".interactiveMode: \"" + mode +
                          "\" is not Never, IfAvailable or Always");
    }
    if (!mode.empty()) p.interactive_mode = mode;
    p.what = what + " (" + p.command + ")";
    return p;
}

// auth-provider (in-tree gcp, azure, oidc) was removed from kubectl in 1.26: refused, pointing
// to the exec plugin that replaced it.
void refuse_auth_provider(const YAML::Node& user, const std::string& user_what) {
    YAML::Node n = user["auth-provider"];
    if (!n || n.IsNull()) return;
    std::string name = n.IsMap() ? scalar(n, "name", user_what + ".auth-provider") : "";
    throw ConfigError(user_what + ".auth-provider" + (name.empty() ? "" : " (" + name + ")") +
                      ": auth-provider is not supported (kubectl removed it in 1.26): use an exec "
                      "credential plugin instead, e.g. gke-gcloud-auth-plugin for GKE, kubelogin "
                      "for AKS or OIDC, aws eks get-token for EKS");
}

// proxy-url: http:// only (cpprest speaks plain HTTP to a proxy, and tunnels https servers
// through it with CONNECT). The port defaults to 80, as in kubectl.
std::string proxy_url(const std::string& url, const std::string& what) {
    if (url.empty()) return {};
    auto scheme_end = url.find("://");
    std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme == "socks5" || scheme == "socks5h") {
        throw ConfigError(what +
                          ": SOCKS proxies are not supported (the HTTP library has no "
                          "SOCKS client): use an http:// proxy that allows CONNECT");
    }
    if (scheme == "https") {
        throw ConfigError(what +
                          ": an https:// proxy (TLS to the proxy itself) is not "
                          "supported: use http://; the API traffic stays TLS end to end "
                          "inside the CONNECT tunnel");
    }
    if (scheme != "http") {
        throw ConfigError(what + ": not an http:// URL (scheme \"" + scheme + "\")");
    }
    std::string rest = url.substr(scheme_end + 3);
    std::string authority = rest.substr(0, rest.find_first_of("/?#"));
    auto at = authority.find('@');  // user:password@ (never in a message)
    std::string hostport = at == std::string::npos ? authority : authority.substr(at + 1);
    if (hostport.empty() || hostport.front() == ':') throw ConfigError(what + ": has no host");
    return url;
}

Config build(const Kubeconfig& kc, const std::string& context_arg) {
    std::string context_name = context_arg.empty() ? kc.current_context : context_arg;
    if (context_name.empty()) {
        throw ConfigError(kc.origins + ": no current-context set and no context given (contexts: " +
                          names_of(kc.contexts) + ")");
    }
    auto ctx_it = kc.contexts.find(context_name);
    if (ctx_it == kc.contexts.end()) {
        throw ConfigError(kc.origins + ": context \"" + context_name +
                          "\" not found (contexts: " + names_of(kc.contexts) + ")");
    }
    const Entry& ctx = ctx_it->second;
    std::string ctx_what = ctx.origin + ": contexts[\"" + context_name + "\"]";
    std::string cluster_name = scalar(ctx.node, "cluster", ctx_what);
    std::string user_name = scalar(ctx.node, "user", ctx_what);
    if (cluster_name.empty()) throw ConfigError(ctx_what + ": names no cluster");

    Config cfg;
    cfg.source = "kubeconfig " + kc.origins + ", context " + context_name;
    std::string ns = scalar(ctx.node, "namespace", ctx_what);
    if (!ns.empty()) cfg.default_namespace = ns;

    auto cl_it = kc.clusters.find(cluster_name);
    if (cl_it == kc.clusters.end()) {
        throw ConfigError(ctx_what + ": cluster \"" + cluster_name +
                          "\" not found (clusters: " + names_of(kc.clusters) + ")");
    }
    const Entry& cl = cl_it->second;
    std::string cl_what = cl.origin + ": clusters[\"" + cluster_name + "\"]";
    cfg.server = scalar(cl.node, "server", cl_what);
    while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
    // Checked after the trailing slashes go: "server: /" names no server either.
    if (cfg.server.empty()) throw ConfigError(cl_what + ": has no server");
    cfg.insecure_skip_tls_verify = boolean(cl.node, "insecure-skip-tls-verify", cl_what);
    cfg.tls_server_name = scalar(cl.node, "tls-server-name", cl_what);
    cfg.ca_pem = data_or_file(cl, "certificate-authority-data", "certificate-authority", cl_what);
    if (!cfg.ca_pem.empty()) {
        std::string which =
            cl_what + (scalar(cl.node, "certificate-authority-data", cl_what).empty()
                           ? ".certificate-authority"
                           : ".certificate-authority-data");
        check_certificates_pem(cfg.ca_pem, which);
    }
    cfg.proxy_url = proxy_url(scalar(cl.node, "proxy-url", cl_what), cl_what + ".proxy-url");

    if (!user_name.empty()) {
        auto us_it = kc.users.find(user_name);
        if (us_it == kc.users.end()) {
            throw ConfigError(ctx_what + ": user \"" + user_name +
                              "\" not found (users: " + names_of(kc.users) + ")");
        }
        const Entry& us = us_it->second;
        std::string us_what = us.origin + ": users[\"" + user_name + "\"]";
        refuse_auth_provider(us.node, us_what);
        if (!scalar(us.node, "username", us_what).empty() ||
            !scalar(us.node, "password", us_what).empty()) {
            throw ConfigError(us_what +
                              ": basic authentication (username/password) is not supported");
        }
        cfg.exec = exec_plugin(us, us_what);
        if (cfg.exec && (!scalar(us.node, "token", us_what).empty() ||
                         !scalar(us.node, "tokenFile", us_what).empty())) {
            throw ConfigError(us_what +
                              ": has both exec and a token or tokenFile: keep one of them");
        }
        cfg.token = trim(scalar(us.node, "token", us_what));
        std::string token_file = scalar(us.node, "tokenFile", us_what);
        if (cfg.token.empty() && !token_file.empty()) {
            cfg.token_file = resolve(us.base_dir, token_file);
            if (trim(read_file(cfg.token_file, us_what + ".tokenFile")).empty()) {
                throw ConfigError(us_what + ".tokenFile: " + cfg.token_file.string() + " is empty");
            }
        }
        bool cert_data = !scalar(us.node, "client-certificate-data", us_what).empty();
        bool key_data = !scalar(us.node, "client-key-data", us_what).empty();
        cfg.client_cert_pem =
            data_or_file(us, "client-certificate-data", "client-certificate", us_what);
        cfg.client_key_pem = data_or_file(us, "client-key-data", "client-key", us_what);
        if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
            throw ConfigError(us_what + ": has a client " +
                              (cfg.client_cert_pem.empty() ? "key" : "certificate") +
                              " but no client " +
                              (cfg.client_cert_pem.empty() ? "certificate" : "key"));
        }
        if (!cfg.client_cert_pem.empty()) {
            check_certificates_pem(
                cfg.client_cert_pem,
                us_what + (cert_data ? ".client-certificate-data" : ".client-certificate"));
            check_private_key_pem(cfg.client_key_pem,
                                  us_what + (key_data ? ".client-key-data" : ".client-key"));
        }
    }
    return cfg;
}

}  // namespace

Config Config::from_kubeconfig_text(const std::string& yaml, const std::string& origin,
                                    const fs::path& base_dir, const std::string& context) {
    Kubeconfig kc;
    merge_text(kc, yaml, origin, base_dir);
    return build(kc, context);
}

Config Config::from_kubeconfig(const fs::path& file, const std::string& context) {
    return from_kubeconfig(std::vector<fs::path>{file}, context);
}

Config Config::from_kubeconfig(const std::vector<fs::path>& files, const std::string& context) {
    if (files.empty()) throw ConfigError("no kubeconfig file given");
    Kubeconfig kc;
    for (const auto& file : files) {
        std::string origin = "kubeconfig " + file.string();
        std::string text = read_file(file, origin);
        fs::path base = file.parent_path();
        merge_text(kc, text, file.string(), base.empty() ? fs::path(".") : base);
    }
    return build(kc, context);
}

Config Config::in_cluster(const fs::path& sa_dir) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
        throw ConfigError(
            "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
            "set (not "
            "running in a pod?)");
    }
    Config cfg;
    std::string h = host;
    if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // IPv6
    cfg.server = "https://" + h + ":" + port;
    std::string what = "in-cluster configuration";
    cfg.token_file = sa_dir / "token";
    if (trim(read_file(cfg.token_file, what + ": service-account token")).empty()) {
        throw ConfigError(what + ": service-account token " + cfg.token_file.string() +
                          " is empty");
    }
    cfg.ca_pem = read_file(sa_dir / "ca.crt", what + ": service-account CA");
    check_certificates_pem(cfg.ca_pem, what + ": " + (sa_dir / "ca.crt").string());
    std::error_code ec;
    if (fs::exists(sa_dir / "namespace", ec)) {
        std::string ns = trim(read_file(sa_dir / "namespace", what + ": namespace"));
        if (!ns.empty()) cfg.default_namespace = ns;
    }
    cfg.source = "in-cluster (" + cfg.server + ", " + sa_dir.string() + ")";
    return cfg;
}

Config Config::load_default(const std::string& context) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
        std::vector<fs::path> files;
        std::string missing;
        std::stringstream ss(env);
        std::string item;
        while (std::getline(ss, item, ':')) {
            if (item.empty()) continue;
            std::error_code ec;
            if (fs::exists(item, ec)) {
                files.emplace_back(item);
            } else {
                missing += (missing.empty() ? "" : ", ") + item;
            }
        }
        if (files.empty()) {
            throw ConfigError("KUBECONFIG=" + std::string(env) + ": no such file (" + missing +
                              ")");
        }
        return from_kubeconfig(files, context);
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        fs::path file = fs::path(home) / ".kube" / "config";
        std::error_code ec;
        if (fs::exists(file, ec)) return from_kubeconfig(file, context);
    }
    try {
        return in_cluster();
    } catch (const ConfigError& e) {
        throw ConfigError(
            std::string(
                "no Kubernetes configuration: KUBECONFIG is not set, ~/.kube/config does not "
                "exist, and ") +
            e.what());
    }
}

}  // namespace phasescale::kube
