#include "serve.hpp"

#include <stdexcept>

#include <cpprest/http_listener.h>
#include <boost/asio/ssl.hpp>

namespace phasescale::replay {

namespace {

namespace http = web::http;
namespace ssl = boost::asio::ssl;
using web::http::experimental::listener::http_listener;
using web::http::experimental::listener::http_listener_config;

constexpr const char* kPlainType = "text/plain; charset=utf-8";

// Loads the certificate chain and its key into `ctx`, TLS 1.2 or later (Go's clients, as
// metrics-server, refuse less). Returns what failed, empty when all went well.
std::string load_tls(ssl::context& ctx, const TlsFiles& files) {
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    if (ctx.use_certificate_chain_file(files.cert, ec))
        return "--kubelet-tls-cert " + files.cert +
               ": not a PEM certificate chain: " + ec.message();
    if (ctx.use_private_key_file(files.key, ssl::context::pem, ec))
        return "--kubelet-tls-key " + files.key + ": not the PEM private key of " + files.cert +
               ": " + ec.message();
    return "";
}

void answer(const std::map<std::string, Page>& pages, http::http_request req) {
    const auto path = req.relative_uri().path();
    if (const auto it = pages.find(path); it != pages.end()) {
        try {
            req.reply(http::status_codes::OK, it->second.text(), it->second.content_type);
        } catch (const std::exception& e) {
            req.reply(http::status_codes::InternalError, std::string(e.what()) + "\n", kPlainType);
        }
    } else if (path == "/healthz" || path == "/") {
        req.reply(http::status_codes::OK, "ok\n", kPlainType);
    } else {
        std::string known;
        for (const auto& [p, page] : pages) known += (known.empty() ? "" : ", ") + p;
        req.reply(http::status_codes::NotFound, "not found: " + path + " (try " + known + ")\n",
                  kPlainType);
    }
}

}  // namespace

TlsFiles check_kubelet_tls(const std::string& cert, const std::string& key) {
    if (cert.empty() || key.empty()) {
        throw std::invalid_argument(
            "--kubelet-listen needs --kubelet-tls-cert and --kubelet-tls-key (the kubelet "
            "endpoint is HTTPS only)");
    }
    TlsFiles files{cert, key};
    ssl::context trial(ssl::context::tls_server);
    if (const std::string error = load_tls(trial, files); !error.empty())
        throw std::invalid_argument(error);
    return files;
}

Server::Server() = default;
Server::~Server() {
    close();
}

void Server::serve(const std::string& url, const std::string& flag_value,
                   std::map<std::string, Page> pages, std::optional<TlsFiles> tls) {
    http_listener_config config;
    if (tls) {
        // Called for every connection; cpprest drops the connection on a boost system_error
        // (and only on that), so a file broken since the start fails that connection alone.
        config.set_ssl_context_callback([files = *tls](ssl::context& ctx) {
            if (!load_tls(ctx, files).empty())
                throw boost::system::system_error(
                    make_error_code(boost::system::errc::invalid_argument));
        });
    }
    auto listener = std::make_unique<http_listener>(url, config);
    listener->support(http::methods::GET, [pages = std::move(pages)](http::http_request req) {
        answer(pages, std::move(req));
    });
    try {
        listener->open().wait();
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot listen on " + flag_value + ": " + e.what());
    }
    listeners_.push_back(std::move(listener));
}

void Server::close() {
    for (auto& l : listeners_) l->close().wait();
    listeners_.clear();
}

}  // namespace phasescale::replay
