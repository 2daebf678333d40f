// The HTTP side of the client, on cpprestsdk (Boost.Asio and OpenSSL underneath). Nothing of
// cpprest leaks into the public headers.
#include "phasescale/kube/client.hpp"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <sstream>

#include "pem.hpp"
#include "phasescale/kube/exec_credential.hpp"
#include "phasescale/kube/rate_limit.hpp"

namespace phasescale::kube {

namespace http = web::http;
namespace hc = web::http::client;

namespace {

// A watch's client-side inactivity timeout is its timeoutSeconds plus this: the server ends the
// stream itself first (and sends bookmarks before that), so our timer only fires when the
// connection is really dead.
constexpr auto kWatchTimeoutMargin = std::chrono::seconds(30);
// Never wait longer than this for a Retry-After.
constexpr auto kMaxRetryAfter = std::chrono::seconds(60);

std::string percent_encode(std::string_view s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    return out;
}

std::string query_string(const std::map<std::string, std::string>& query) {
    std::string q;
    for (const auto& [k, v] : query) {
        if (!q.empty()) q += "&";
        q += percent_encode(k) + "=" + percent_encode(v);
    }
    return q;
}

bool is_ip_literal(const std::string& host) {
    if (host.empty()) return false;
    if (host.front() == '[') return true;
    return std::all_of(host.begin(), host.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
    });
}

std::string trim(std::string s) {
    auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

std::optional<std::chrono::seconds> parse_retry_after(const http::http_headers& headers) {
    auto it = headers.find("Retry-After");
    if (it == headers.end()) return std::nullopt;
    try {
        long v = std::stol(it->second);
        if (v < 0) return std::nullopt;
        return std::chrono::seconds(v);
    } catch (...) {
        return std::nullopt;  // an HTTP date: not sent by the API server
    }
}

// The material TLS needs, parsed once and shared by every connection.
struct Tls {
    std::vector<detail::X509Ptr> ca;
    std::vector<detail::X509Ptr> client_chain;
    detail::PkeyPtr client_key;

    // Throws ConfigError (naming `what`) unless the key belongs to the certificate.
    void set_client_certificate(const std::string& cert_pem, const std::string& key_pem,
                                const std::string& what) {
        client_chain = detail::parse_certificates(cert_pem, what + ": client certificate");
        client_key = detail::parse_private_key(key_pem, what + ": client key");
        if (X509_check_private_key(client_chain.front().get(), client_key.get()) != 1) {
            detail::openssl_error();
            throw ConfigError(what + ": the client key does not belong to the client certificate");
        }
    }

    void apply(boost::asio::ssl::context& ctx) const {
        SSL_CTX* native = ctx.native_handle();
        SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
        if (!ca.empty()) {
            // Trust exactly the configured CAs, not the system store cpprest loaded.
            X509_STORE* store = X509_STORE_new();
            for (const auto& cert : ca) X509_STORE_add_cert(store, cert.get());
            SSL_CTX_set_cert_store(native, store);
        }
        if (!client_chain.empty()) {
            SSL_CTX_use_certificate(native, client_chain.front().get());
            for (std::size_t i = 1; i < client_chain.size(); ++i) {
                X509_up_ref(client_chain[i].get());
                SSL_CTX_add_extra_chain_cert(native, client_chain[i].get());
            }
            SSL_CTX_use_PrivateKey(native, client_key.get());
        }
    }
};

class TokenSource {
public:
    TokenSource(std::string token, std::filesystem::path file, std::chrono::milliseconds refresh)
        : token_(std::move(token)), file_(std::move(file)), refresh_(refresh) {}

    std::string get() {
        if (file_.empty()) return token_;
        std::lock_guard lock(mutex_);
        auto now = std::chrono::steady_clock::now();
        if (token_.empty() || now - read_at_ >= refresh_) {
            std::ifstream in(file_);
            std::stringstream ss;
            ss << in.rdbuf();
            std::string t = trim(ss.str());
            if (in && !t.empty()) {
                token_ = t;
                read_at_ = now;
            } else if (token_.empty()) {
                throw ConfigError("token file " + file_.string() + " cannot be read or is empty");
            }
        }
        return token_;
    }

private:
    std::mutex mutex_;
    std::string token_;
    std::filesystem::path file_;
    std::chrono::milliseconds refresh_;
    std::chrono::steady_clock::time_point read_at_{};
};

struct Response {
    int status = 0;
    std::string body;
    std::optional<std::chrono::seconds> retry_after;
};

json parse_body(const std::string& body, const std::string& method, const std::string& path) {
    if (body.empty()) return json::object();
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded()) {
        throw TransportError(method, path, "response is not JSON: " + body.substr(0, 200));
    }
    return j;
}

}  // namespace

const char* to_string(WatchEventType type) {
    switch (type) {
        case WatchEventType::Added: return "ADDED";
        case WatchEventType::Modified: return "MODIFIED";
        case WatchEventType::Deleted: return "DELETED";
        case WatchEventType::Bookmark: return "BOOKMARK";
        case WatchEventType::Error: return "ERROR";
    }
    return "?";
}

// ------------------------------------------------------------------------------------------ Impl

struct Client::Impl {
    Config config;
    std::string base;  // scheme://host:port[/prefix]
    bool https = false;
    std::string cn_host;             // the host the certificate must name
    std::shared_ptr<const Tls> tls;  // from the configuration
    TokenSource tokens;
    // Config::exec: the plugin's credential, and the TLS material made with its certificate.
    std::shared_ptr<ExecCredentialSource> exec;
    std::mutex exec_tls_mutex;
    std::shared_ptr<const ExecCredential> exec_tls_for;
    std::shared_ptr<const Tls> exec_tls;
    TokenBucket limiter;
    std::mutex clients_mutex;
    struct PooledClient {
        std::shared_ptr<hc::http_client> client;
        std::shared_ptr<const Tls> tls;  // the material it was made with
    };
    std::map<long long, PooledClient> clients;  // by timeout (ms)

    explicit Impl(Config c)
        : config(std::move(c)),
          tokens(config.token, config.token_file, config.token_file_refresh),
          limiter(config.qps, config.burst) {
        const std::string what =
            config.source.empty() ? std::string("configuration") : config.source;
        if (config.server.empty()) throw ConfigError(what + ": no server URL");
        web::uri uri;
        try {
            uri = web::uri(config.server);
        } catch (const std::exception& e) {
            throw ConfigError(what + ": server \"" + config.server +
                              "\" is not a URL: " + e.what());
        }
        if (uri.scheme() != "https" && !(uri.scheme() == "http" && config.allow_http)) {
            throw ConfigError(what + ": server \"" + config.server + "\" must be an https:// URL" +
                              (uri.scheme() == "http"
                                   ? " (http:// only with allow_http, --allow-insecure-kube-http)"
                                   : ""));
        }
        if (uri.host().empty())
            throw ConfigError(what + ": server \"" + config.server + "\" has no host");
        https = uri.scheme() == "https";
        base = config.server;
        while (!base.empty() && base.back() == '/') base.pop_back();
        cn_host = config.tls_server_name.empty() ? uri.host() : config.tls_server_name;
        auto material = std::make_shared<Tls>();
        if (!config.ca_pem.empty())
            material->ca =
                detail::parse_certificates(config.ca_pem, what + ": certificate authority");
        if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
            if (config.client_cert_pem.empty() || config.client_key_pem.empty()) {
                throw ConfigError(what +
                                  ": a client certificate needs its key and a key its certificate");
            }
            material->set_client_certificate(config.client_cert_pem, config.client_key_pem, what);
        }
        tls = material;
        if (!config.proxy_url.empty()) check_proxy(what);
        if (config.exec) {
            // The plugin runs at the first request, not here.
            exec = std::make_shared<ExecCredentialSource>(*config.exec,
                                                          exec_info(*config.exec, config),
                                                          process_runner(), nullptr, config.log);
        }
        if (config.token.empty() && !config.token_file.empty()) {
            try {
                tokens.get();
            } catch (const ConfigError& e) {
                throw ConfigError(what + ": " + e.what());
            }
        }
    }

    // Checks proxy-url, and makes the server's port explicit: cpprest's CONNECT names the port
    // as the server URL has it.
    void check_proxy(const std::string& what) {
        web::uri proxy;
        try {
            proxy = web::uri(config.proxy_url);
        } catch (const std::exception&) {
            throw ConfigError(what + ": proxy-url is not a URL");
        }
        if (proxy.host().empty()) throw ConfigError(what + ": proxy-url has no host");
        web::uri server(base);
        if (server.port() <= 0) {
            web::uri_builder b(server);
            b.set_port(https ? 443 : 80);
            base = b.to_string();
            while (!base.empty() && base.back() == '/') base.pop_back();
        }
    }

    hc::http_client_config http_config(std::chrono::milliseconds timeout,
                                       const std::shared_ptr<const Tls>& material) const {
        hc::http_client_config hcfg;
        hcfg.set_timeout(timeout);
        if (!config.proxy_url.empty()) hcfg.set_proxy(proxy());
        if (https) {
            hcfg.set_validate_certificates(!config.insecure_skip_tls_verify);
            // SNI carries host names only.
            if (is_ip_literal(cn_host)) hcfg.set_tlsext_sni_enabled(false);
            hcfg.set_ssl_context_callback(
                [material](boost::asio::ssl::context& ctx) { material->apply(ctx); });
        }
        return hcfg;
    }

    // proxy-url as cpprest takes it: the port explicit (80 when the URL has none, as kubectl;
    // cpprest would assume 8080) and user:password as basic credentials.
    web::web_proxy proxy() const {
        web::uri url(config.proxy_url);
        web::uri_builder b;
        b.set_scheme(url.scheme()).set_host(url.host()).set_port(url.port() > 0 ? url.port() : 80);
        web::web_proxy p(b.to_uri());
        const std::string user_info = url.user_info();  // percent-encoded user[:password]
        if (!user_info.empty()) {
            auto colon = user_info.find(':');
            p.set_credentials(web::credentials(
                web::uri::decode(user_info.substr(0, colon)),
                colon == std::string::npos ? std::string()
                                           : web::uri::decode(user_info.substr(colon + 1))));
        }
        return p;
    }

    // The credential for the next request: the configuration's token and certificate, or the
    // exec plugin's (run when it has none or it is about to expire).
    struct Auth {
        std::string token;
        std::shared_ptr<const Tls> tls;
        std::shared_ptr<const ExecCredential> exec_credential;  // to report a 401 against
    };

    Auth auth() {
        if (!exec) return Auth{tokens.get(), tls, nullptr};
        auto credential = exec->get();
        return Auth{credential->token.empty() ? tokens.get() : credential->token,
                    tls_with(credential), credential};
    }

    // The configured TLS material with the plugin's client certificate, if it gave one; made
    // once per credential.
    std::shared_ptr<const Tls> tls_with(const std::shared_ptr<const ExecCredential>& credential) {
        if (credential->client_cert_pem.empty()) return tls;
        std::lock_guard lock(exec_tls_mutex);
        if (exec_tls_for != credential) {
            auto material = std::make_shared<Tls>(*tls);
            try {
                material->set_client_certificate(credential->client_cert_pem,
                                                 credential->client_key_pem, config.exec->what);
            } catch (const ConfigError& e) {
                throw CredentialError(e.what());
            }
            exec_tls = material;
            exec_tls_for = credential;
        }
        return exec_tls;
    }

    // One http_client per timeout, made again when the TLS material changes (a new client
    // certificate from the exec plugin).
    std::shared_ptr<hc::http_client> client_for(std::chrono::milliseconds timeout,
                                                const std::shared_ptr<const Tls>& material) {
        std::lock_guard lock(clients_mutex);
        auto& slot = clients[timeout.count()];
        if (!slot.client || slot.tls != material) {
            slot.client =
                std::make_shared<hc::http_client>(web::uri(base), http_config(timeout, material));
            slot.tls = material;
        }
        return slot.client;
    }

    void drop_client(std::chrono::milliseconds timeout,
                     const std::shared_ptr<hc::http_client>& client) {
        std::lock_guard lock(clients_mutex);
        auto it = clients.find(timeout.count());
        if (it != clients.end() && it->second.client == client) clients.erase(it);
    }

    http::http_request make_request(const std::string& method, const std::string& target,
                                    const json* body, const std::string& content_type,
                                    const std::string& token) {
        http::http_request req(method);
        req.set_request_uri(web::uri(target));
        req.headers().add("Accept", "application/json");
        req.headers().add("User-Agent", config.user_agent);
        // cpprest verifies the certificate against the Host header's name when there is one.
        if (!config.tls_server_name.empty()) req.headers().add("Host", config.tls_server_name);
        if (!token.empty()) req.headers().add("Authorization", "Bearer " + token);
        if (body != nullptr && !body->is_null()) req.set_body(body->dump(), content_type);
        return req;
    }

    // One call with its retries. `safe`: the request may be repeated after a server or transport
    // error (reads); 429 is always retried, as the server did not act on the request.
    Response perform(const std::string& method, const std::string& path, const std::string& query,
                     const json* body, const std::string& content_type, bool safe,
                     const RequestOptions& ro) {
        const std::string target = query.empty() ? path : path + "?" + query;
        const int max_retries = ro.max_retries.value_or(config.max_retries);
        const auto timeout = ro.timeout.value_or(config.request_timeout);
        std::shared_ptr<hc::http_client> client;
        bool reauthenticated = false;
        Backoff backoff(config.retry_backoff_initial, config.retry_backoff_max, 2.0, 0.2,
                        std::hash<std::string>{}(target));
        for (int attempt = 0;; ++attempt) {
            if (ro.stop.stop_requested()) throw Cancelled(method + " " + path + ": cancelled");
            if (method != "GET" && config.write_fence && !config.write_fence())
                throw Fenced(method + " " + path +
                             ": not sent: this replica does not hold a fresh leader lease");
            if (!limiter.acquire(ro.stop)) throw Cancelled(method + " " + path + ": cancelled");
            pplx::cancellation_token_source cts;
            std::stop_callback on_stop(ro.stop, [&cts] { cts.cancel(); });
            std::optional<std::chrono::milliseconds> wait;
            try {
                Auth a = auth();
                client = client_for(timeout, a.tls);
                auto req = make_request(method, target, body, content_type, a.token);
                http::http_response resp = client->request(req, cts.get_token()).get();
                Response r;
                r.status = resp.status_code();
                r.retry_after = parse_retry_after(resp.headers());
                r.body = resp.extract_utf8string(true).get();
                if (r.status < 400) return r;
                // The plugin's credential was refused (revoked, or expired early): once more
                // with a fresh one; the server did not act on the request.
                if (r.status == 401 && a.exec_credential && !reauthenticated) {
                    exec->refused(a.exec_credential);
                    reauthenticated = true;
                    continue;
                }
                bool retry = r.status == 429 || (safe && r.status >= 500 && r.status != 501);
                if (!retry || attempt >= max_retries)
                    throw_api_error(r.status, r.body, method, path, r.retry_after);
                if (r.retry_after)
                    wait = std::min<std::chrono::milliseconds>(*r.retry_after, kMaxRetryAfter);
            } catch (const ApiError&) {
                throw;
            } catch (const ConfigError&) {
                throw;
            } catch (const CredentialError&) {
                throw;
            } catch (const std::exception& e) {
                if (ro.stop.stop_requested()) throw Cancelled(method + " " + path + ": cancelled");
                bool timed_out = false;
                bool not_sent = false;
                if (const auto* he = dynamic_cast<const http::http_exception*>(&e)) {
                    timed_out = he->error_code().value() == static_cast<int>(std::errc::timed_out);
                    // Connection refused, or broken while the request was being written (a pooled
                    // connection that the server closed, e.g. when it restarted): the server
                    // never had the whole request, so repeating it is safe whatever it is.
                    not_sent =
                        he->error_code().value() == static_cast<int>(std::errc::host_unreachable) ||
                        std::string_view(he->what()).starts_with("Failed to write request");
                }
                // Pooled connections may all be dead (server restarted): start afresh.
                drop_client(timeout, client);
                std::string what =
                    timed_out ? "timed out after " + std::to_string(timeout.count()) + " ms"
                              : std::string(e.what());
                if (!(safe || not_sent) || attempt >= max_retries) {
                    throw TransportError(method, path, what + " (server " + base + ")", timed_out);
                }
            }
            auto delay = wait.value_or(backoff.next());
            if (!sleep_for(delay, ro.stop)) throw Cancelled(method + " " + path + ": cancelled");
        }
    }

    json call(const std::string& method, const std::string& path,
              const std::map<std::string, std::string>& query, const json* body,
              const std::string& content_type, bool safe, const RequestOptions& ro) {
        Response r = perform(method, path, query_string(query), body, content_type, safe, ro);
        return parse_body(r.body, method, path);
    }
};

// ------------------------------------------------------------------------------------- Watch

struct WatchStream::Impl {
    std::shared_ptr<hc::http_client> client;
    pplx::cancellation_token_source cts;
    http::http_response response;
    concurrency::streams::istream body;
    std::atomic<bool> cancelled{false};
    bool ended = false;
    std::string end_reason;
    std::string method;
    std::string path;
};

WatchStream::WatchStream() = default;
WatchStream::WatchStream(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
WatchStream::~WatchStream() {
    cancel();
}
WatchStream::WatchStream(WatchStream&&) noexcept = default;
WatchStream& WatchStream::operator=(WatchStream&& other) noexcept {
    if (this != &other) {
        cancel();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

void WatchStream::cancel() {
    if (!impl_) return;
    impl_->cancelled = true;
    impl_->cts.cancel();
}

const std::string& WatchStream::end_reason() const {
    static const std::string none;
    return impl_ ? impl_->end_reason : none;
}

std::optional<WatchEvent> decode_watch_event(std::string_view line, std::string& error) {
    json j = json::parse(line, nullptr, false);
    // A type that is not a string is as undecodable as a line that is not JSON: the stream ends
    // with a reason instead of a json::type_error out of next().
    if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
        error = "undecodable watch event: " + std::string(line.substr(0, 200));
        return std::nullopt;
    }
    const std::string type = j["type"].get<std::string>();
    WatchEvent event;
    if (type == "ADDED")
        event.type = WatchEventType::Added;
    else if (type == "MODIFIED")
        event.type = WatchEventType::Modified;
    else if (type == "DELETED")
        event.type = WatchEventType::Deleted;
    else if (type == "BOOKMARK")
        event.type = WatchEventType::Bookmark;
    else if (type == "ERROR")
        event.type = WatchEventType::Error;
    else {
        error = "unknown watch event type " + type.substr(0, 80);
        return std::nullopt;
    }
    if (j.contains("object")) event.object = std::move(j["object"]);
    return event;
}

bool WatchStream::next(WatchEvent& event) {
    if (!impl_) return false;
    Impl& im = *impl_;
    for (;;) {
        if (im.cancelled || im.ended) return false;
        // A fresh buffer for every line: read_line appends to its target.
        concurrency::streams::container_buffer<std::string> line;
        std::size_t n = 0;
        try {
            n = im.body.read_line(line).get();
        } catch (const std::exception& e) {
            im.ended = true;
            if (!im.cancelled) im.end_reason = e.what();
            return false;
        }
        std::string text = trim(std::move(line.collection()));
        if (text.empty()) {
            if (n == 0 && im.body.is_eof()) {
                im.ended = true;
                return false;
            }
            continue;
        }
        std::optional<WatchEvent> decoded = decode_watch_event(text, im.end_reason);
        if (!decoded) {
            im.ended = true;
            return false;
        }
        event = std::move(*decoded);
        return true;
    }
}

// ------------------------------------------------------------------------------------- Client

Client::Client(Config config) : impl_(std::make_shared<Impl>(std::move(config))) {}
Client::~Client() = default;
Client::Client(const Client&) = default;
Client& Client::operator=(const Client&) = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

const Config& Client::config() const {
    return impl_->config;
}

json Client::get(const Resource& res, std::string_view ns, std::string_view name,
                 std::string_view subresource, const RequestOptions& ro) const {
    return impl_->call("GET", res.path(ns, name, subresource), {}, nullptr, {}, true, ro);
}

std::optional<json> Client::try_get(const Resource& res, std::string_view ns, std::string_view name,
                                    const RequestOptions& ro) const {
    try {
        return get(res, ns, name, {}, ro);
    } catch (const NotFound&) {
        return std::nullopt;
    }
}

json Client::list(const Resource& res, std::string_view ns, const ListOptions& o,
                  const RequestOptions& ro) const {
    std::map<std::string, std::string> q;
    if (!o.label_selector.empty()) q["labelSelector"] = o.label_selector;
    if (!o.field_selector.empty()) q["fieldSelector"] = o.field_selector;
    if (o.limit > 0) q["limit"] = std::to_string(o.limit);
    if (!o.continue_token.empty()) q["continue"] = o.continue_token;
    if (!o.resource_version.empty()) q["resourceVersion"] = o.resource_version;
    if (!o.resource_version_match.empty()) q["resourceVersionMatch"] = o.resource_version_match;
    return impl_->call("GET", res.path(ns), q, nullptr, {}, true, ro);
}

json Client::list_all(const Resource& res, std::string_view ns, ListOptions o,
                      const RequestOptions& ro,
                      const std::function<void(json& item)>& each_item) const {
    if (o.limit <= 0) o.limit = 500;
    const ListOptions first = o;
    json result;
    json items = json::array();
    bool restarted = false;
    for (;;) {
        json page;
        try {
            page = list(res, ns, o, ro);
        } catch (const Gone&) {
            // The continue token expired (the snapshot was compacted): start over once.
            if (o.continue_token.empty() || restarted) throw;
            restarted = true;
            o = first;
            o.resource_version.clear();
            result = nullptr;
            items = json::array();
            continue;
        }
        if (page.contains("items") && page["items"].is_array()) {
            for (auto& item : page["items"]) {
                if (each_item) each_item(item);
                items.push_back(std::move(item));
            }
            page.erase("items");
        }
        std::string cont;
        if (page.contains("metadata") && page["metadata"].is_object())
            cont = page["metadata"].value("continue", "");
        if (result.is_null()) result = std::move(page);
        if (cont.empty()) break;
        o.continue_token = cont;
        o.resource_version.clear();
        o.resource_version_match.clear();
    }
    // List items come without apiVersion and kind; give them what watch events carry.
    std::string kind = result.value("kind", "");
    if (kind.size() > 4 && kind.ends_with("List"))
        kind.resize(kind.size() - 4);
    else
        kind = res.kind;
    std::string api_version = result.value("apiVersion", res.api_version());
    for (auto& item : items) {
        if (!item.contains("apiVersion")) item["apiVersion"] = api_version;
        if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
    }
    result["items"] = std::move(items);
    if (result.contains("metadata") && result["metadata"].is_object()) {
        result["metadata"].erase("continue");
        result["metadata"].erase("remainingItemCount");
    }
    return result;
}

namespace {

std::map<std::string, std::string> write_query(const std::string& field_manager, bool dry_run) {
    std::map<std::string, std::string> q;
    if (!field_manager.empty()) q["fieldManager"] = field_manager;
    if (dry_run) q["dryRun"] = "All";
    return q;
}

std::string name_of(const json& body, const char* what) {
    if (!body.contains("metadata") || !body["metadata"].contains("name") ||
        !body["metadata"]["name"].is_string()) {
        throw std::invalid_argument(std::string(what) + ": the object has no metadata.name");
    }
    return body["metadata"]["name"].get<std::string>();
}

}  // namespace

json Client::create(const Resource& res, std::string_view ns, const json& body,
                    const WriteOptions& o, const RequestOptions& ro) const {
    return impl_->call("POST", res.path(ns), write_query(o.field_manager, o.dry_run), &body,
                       "application/json", false, ro);
}

json Client::update(const Resource& res, std::string_view ns, const json& body,
                    const WriteOptions& o, const RequestOptions& ro) const {
    return impl_->call("PUT", res.path(ns, name_of(body, "update")),
                       write_query(o.field_manager, o.dry_run), &body, "application/json", false,
                       ro);
}

json Client::update_status(const Resource& res, std::string_view ns, const json& body,
                           const WriteOptions& o, const RequestOptions& ro) const {
    return impl_->call("PUT", res.path(ns, name_of(body, "update_status"), "status"),
                       write_query(o.field_manager, o.dry_run), &body, "application/json", false,
                       ro);
}

json Client::patch(const Resource& res, std::string_view ns, std::string_view name,
                   const json& body, PatchType type, const PatchOptions& o,
                   const RequestOptions& ro) const {
    std::string content_type;
    switch (type) {
        case PatchType::Merge: content_type = "application/merge-patch+json"; break;
        case PatchType::StrategicMerge:
            content_type = "application/strategic-merge-patch+json";
            break;
        case PatchType::Json: content_type = "application/json-patch+json"; break;
        case PatchType::Apply: content_type = "application/apply-patch+yaml"; break;
    }
    if (type == PatchType::Apply && o.field_manager.empty()) {
        throw std::invalid_argument("server-side apply needs a field manager");
    }
    auto q = write_query(o.field_manager, o.dry_run);
    if (o.force) {
        if (type != PatchType::Apply)
            throw std::invalid_argument("force applies to server-side apply only");
        q["force"] = "true";
    }
    return impl_->call("PATCH", res.path(ns, name, o.subresource), q, &body, content_type, false,
                       ro);
}

json Client::apply(const Resource& res, std::string_view ns, const json& body,
                   const std::string& field_manager, bool force, std::string_view subresource,
                   const RequestOptions& ro) const {
    json full = body;
    if (!full.contains("apiVersion")) full["apiVersion"] = res.api_version();
    if (!full.contains("kind")) full["kind"] = res.kind;
    PatchOptions o;
    o.field_manager = field_manager;
    o.force = force;
    o.subresource = std::string(subresource);
    return patch(res, ns, name_of(full, "apply"), full, PatchType::Apply, o, ro);
}

namespace {

json delete_options_body(const DeleteOptions& o) {
    json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
    if (!o.propagation_policy.empty()) body["propagationPolicy"] = o.propagation_policy;
    if (!o.precondition_uid.empty()) body["preconditions"]["uid"] = o.precondition_uid;
    if (!o.precondition_resource_version.empty()) {
        body["preconditions"]["resourceVersion"] = o.precondition_resource_version;
    }
    if (o.dry_run) body["dryRun"] = json::array({"All"});
    return body;
}

}  // namespace

json Client::remove(const Resource& res, std::string_view ns, std::string_view name,
                    const DeleteOptions& o, const RequestOptions& ro) const {
    json body = delete_options_body(o);
    return impl_->call("DELETE", res.path(ns, name), {}, &body, "application/json", false, ro);
}

json Client::resize(std::string_view ns, std::string_view pod, const json& body, PatchType type,
                    const RequestOptions& ro) const {
    PatchOptions o;
    o.subresource = "resize";
    return patch(resources::pods, ns, pod, body, type, o, ro);
}

void Client::evict(std::string_view ns, std::string_view pod, const DeleteOptions& o,
                   const RequestOptions& ro) const {
    json body = {{"apiVersion", "policy/v1"},
                 {"kind", "Eviction"},
                 {"metadata", {{"name", std::string(pod)}, {"namespace", std::string(ns)}}}};
    json opts = delete_options_body(o);
    if (opts.size() > 2) body["deleteOptions"] = opts;
    impl_->call("POST", resources::pods.path(ns, pod, "eviction"), {}, &body, "application/json",
                false, ro);
}

json Client::get_scale(const Resource& res, std::string_view ns, std::string_view name,
                       const RequestOptions& ro) const {
    return get(res, ns, name, "scale", ro);
}

json Client::set_scale(const Resource& res, std::string_view ns, std::string_view name,
                       int replicas, const RequestOptions& ro) const {
    PatchOptions o;
    o.subresource = "scale";
    return patch(res, ns, name, json{{"spec", {{"replicas", replicas}}}}, PatchType::Merge, o, ro);
}

WatchStream Client::watch(const Resource& res, std::string_view ns, const WatchOptions& o,
                          const RequestOptions& ro) const {
    std::map<std::string, std::string> q{{"watch", "1"}};
    if (!o.resource_version.empty()) q["resourceVersion"] = o.resource_version;
    if (!o.label_selector.empty()) q["labelSelector"] = o.label_selector;
    if (!o.field_selector.empty()) q["fieldSelector"] = o.field_selector;
    if (o.allow_bookmarks) q["allowWatchBookmarks"] = "true";
    if (o.timeout.count() > 0) q["timeoutSeconds"] = std::to_string(o.timeout.count());
    const std::string path = res.path(ns);
    const std::string target = path + "?" + query_string(q);

    if (!impl_->limiter.acquire(ro.stop)) throw Cancelled("GET " + path + " (watch): cancelled");
    auto im = std::make_shared<WatchStream::Impl>();
    im->method = "GET";
    im->path = path;
    // A client of its own: its timeout is the watch's, and the stream holds its connection.
    auto timeout = o.idle_timeout.value_or(std::chrono::duration_cast<std::chrono::milliseconds>(
        (o.timeout.count() > 0 ? o.timeout : std::chrono::seconds(3600)) + kWatchTimeoutMargin));
    std::stop_callback on_stop(ro.stop, [im] { im->cts.cancel(); });
    Impl::Auth auth;
    try {
        auth = impl_->auth();
        im->client = std::make_shared<hc::http_client>(web::uri(impl_->base),
                                                       impl_->http_config(timeout, auth.tls));
        auto req = impl_->make_request("GET", target, nullptr, {}, auth.token);
        im->response = im->client->request(req, im->cts.get_token()).get();
    } catch (const ConfigError&) {
        throw;
    } catch (const CredentialError&) {
        throw;
    } catch (const std::exception& e) {
        if (ro.stop.stop_requested()) throw Cancelled("GET " + path + " (watch): cancelled");
        throw TransportError("GET", path + " (watch)",
                             std::string(e.what()) + " (server " + impl_->base + ")");
    }
    int status = im->response.status_code();
    // A refused plugin credential: the caller's next attempt (an informer retries) gets a new one.
    if (status == 401 && auth.exec_credential) impl_->exec->refused(auth.exec_credential);
    if (status != 200) {
        std::string body;
        try {
            body = im->response.extract_utf8string(true).get();
        } catch (...) {
        }
        throw_api_error(status, body, "GET", path + " (watch)",
                        parse_retry_after(im->response.headers()));
    }
    im->body = im->response.body();
    return WatchStream(im);
}

json Client::request(const std::string& method, const std::string& path,
                     const std::map<std::string, std::string>& q, const json& body,
                     const std::string& content_type, const RequestOptions& ro) const {
    bool safe = method == "GET" || method == "HEAD";
    return impl_->call(method, path, q, body.is_null() ? nullptr : &body, content_type, safe, ro);
}

json Client::server_version(const RequestOptions& ro) const {
    return impl_->call("GET", "/version", {}, nullptr, {}, true, ro);
}

}  // namespace phasescale::kube
