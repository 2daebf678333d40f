// The HTTP side of phasescale-replay-exporter: listeners that answer GET with pages made at each
// request, plain or HTTPS. The pages' text comes from replay.hpp.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace web::http::experimental::listener {
class http_listener;
}

namespace phasescale::replay {

inline constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

// One served path: its content type and its text, made at each request (throwing fails it with
// 500 and the exception's message).
struct Page {
    std::string content_type;
    std::function<std::string()> text;
};

// The certificate (chain) and private key of an HTTPS listener, PEM files.
struct TlsFiles {
    std::string cert;
    std::string key;
};

// The kubelet endpoint's files, checked now (both given, readable, PEM, the key the
// certificate's), so that a bad one fails at start; throws std::invalid_argument naming the flag
// (--kubelet-tls-cert or --kubelet-tls-key).
TlsFiles check_kubelet_tls(const std::string& cert, const std::string& key);

class Server {
public:
    Server();
    ~Server();  // closes what is still open
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Listens on `url` (http:// or, with `tls`, https://HOST:PORT), answering GET for `pages` by
    // path, /healthz and / with "ok", anything else with 404. HTTPS reads `tls` again for every
    // connection, so a renewed certificate is picked up. Throws std::runtime_error "cannot listen
    // on FLAG_VALUE: why".
    void serve(const std::string& url, const std::string& flag_value,
               std::map<std::string, Page> pages, std::optional<TlsFiles> tls = {});
    void close();

private:
    std::vector<std::unique_ptr<web::http::experimental::listener::http_listener>> listeners_;
};

}  // namespace phasescale::replay
