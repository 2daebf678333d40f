#include "phasescale/prom/client.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include <cpprest/http_client.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>

namespace phasescale::prom {

namespace http = web::http;
namespace hc = web::http::client;

namespace {

std::string trim(std::string s) {
    auto not_space = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
    return s;
}

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    std::string h = host;
    if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    boost::asio::ip::make_address(h, ec);
    return !ec;
}

// A bearer token, from a value or a file read again whenever the file changes.
class TokenSource {
public:
    TokenSource(std::string token, std::string file)
        : token_(std::move(token)), file_(std::move(file)) {
        if (token_.empty() && !file_.empty()) reload(true);
    }

    std::string get() {
        if (!token_.empty() || file_.empty()) return token_;
        std::lock_guard lock(mutex_);
        std::error_code ec;
        auto mtime = std::filesystem::last_write_time(file_, ec);
        // Keep the last good token while the file is being replaced.
        if (!ec && mtime != mtime_) reload(false);
        return file_token_;
    }

private:
    void reload(bool strict) {
        std::ifstream in(file_);
        if (!in) {
            if (strict) throw ConfigError("bearer token file " + file_ + " cannot be read");
            return;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        std::string token = trim(ss.str());
        if (token.empty()) {
            if (strict) throw ConfigError("bearer token file " + file_ + " is empty");
            return;
        }
        std::error_code ec;
        mtime_ = std::filesystem::last_write_time(file_, ec);
        file_token_ = std::move(token);
    }

    std::string token_;
    std::string file_;
    std::mutex mutex_;
    std::string file_token_;
    std::filesystem::file_time_type mtime_{};
};

struct Counters {
    std::mutex mutex;
    ClientStats stats;
};

// The wait a request gets: the configured timeout, or a shorter wait rounded down to the 1-2-5
// grid (1 ms, 2 ms, 5 ms, 10 ms, ...), so that few distinct waits (and clients) ever exist.
std::chrono::milliseconds wait_on_grid(std::chrono::milliseconds wanted,
                                       std::chrono::milliseconds configured) {
    if (wanted >= configured) return configured;
    long long grid = 1;
    for (long long decade = 1; decade <= wanted.count(); decade *= 10) {
        for (long long step : {1, 2, 5}) {
            if (step * decade <= wanted.count()) grid = step * decade;
        }
    }
    return std::chrono::milliseconds(grid);
}

}  // namespace

const char* to_string(Outcome outcome) {
    switch (outcome) {
        case Outcome::Ok: return "ok";
        case Outcome::ApiError: return "api_error";
        case Outcome::BadResponse: return "bad_response";
        case Outcome::Transport: return "transport";
        case Outcome::Timeout: return "timeout";
    }
    return "?";
}

std::string form_encode(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size() * 3);
    for (unsigned char c : text) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
        }
    }
    return out;
}

std::string format_seconds(std::chrono::microseconds duration) {
    const long long us = duration.count();
    const long long whole = us / 1'000'000;
    const long long frac = std::abs(us % 1'000'000);
    std::string s = (us < 0 && whole == 0 ? "-" : "") + std::to_string(whole);
    if (frac != 0) {
        char buf[16];
        std::snprintf(buf, sizeof buf, ".%06lld", frac);
        std::string f = buf;
        while (f.back() == '0') f.pop_back();
        s += f;
    }
    return s;
}

std::string format_time(TimePoint time) {
    return format_seconds(
        std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()));
}

// ------------------------------------------------------------------------------------------ Impl

struct Client::Impl {
    ClientConfig config;
    std::string base;  // the URL without a trailing slash
    bool https = false;
    bool sni = true;
    TokenSource tokens;
    Counters counters;
    // One HTTP client (and connection pool) per wait on the 1-2-5 grid: the operator cuts each
    // query's wait to what is left of its tick, and a client per exact wait leaked a pool per
    // tick. (Cancelling a cpprest request instead aborts the process on an unobserved exception.)
    std::mutex clients_mutex;
    std::map<long long, std::shared_ptr<hc::http_client>> clients;  // by wait (ms)

    explicit Impl(ClientConfig c)
        : config(std::move(c)), tokens(config.bearer_token, config.bearer_token_file) {
        if (config.url.empty()) throw ConfigError("Prometheus URL is empty");
        web::uri uri;
        try {
            uri = web::uri(config.url);
        } catch (const std::exception& e) {
            throw ConfigError("Prometheus URL \"" + redact_url(config.url) + "\" is not a URL");
        }
        if (uri.scheme() != "http" && uri.scheme() != "https") {
            throw ConfigError("Prometheus URL \"" + redact_url(config.url) +
                              "\" must start with http:// or https://");
        }
        if (uri.host().empty())
            throw ConfigError("Prometheus URL \"" + redact_url(config.url) + "\" has no host");
        if (!uri.query().empty() || !uri.fragment().empty()) {
            throw ConfigError("Prometheus URL \"" + redact_url(config.url) +
                              "\" must not have a query or fragment");
        }
        if (config.timeout.count() <= 0) throw ConfigError("Prometheus timeout must be positive");
        https = uri.scheme() == "https";
        sni = !is_ip_literal(uri.host());
        base = config.url;
        while (!base.empty() && base.back() == '/') base.pop_back();
        if (!config.ca_file.empty()) {
            // Fail now, not at the first request, for a CA file that cannot be used.
            try {
                boost::asio::ssl::context probe(boost::asio::ssl::context::tls_client);
                probe.load_verify_file(config.ca_file);
            } catch (const std::exception& e) {
                throw ConfigError("CA file " + config.ca_file + " cannot be used: " + e.what());
            }
        }
    }

    std::shared_ptr<hc::http_client> client_for(std::chrono::milliseconds wait) {
        std::lock_guard lock(clients_mutex);
        auto& slot = clients[wait.count()];
        if (!slot) {
            hc::http_client_config hcfg;
            hcfg.set_timeout(wait);
            if (https) {
                hcfg.set_validate_certificates(!config.insecure_skip_tls_verify);
                // SNI carries host names only.
                hcfg.set_tlsext_sni_enabled(sni);
                if (!config.ca_file.empty()) {
                    std::string ca = config.ca_file;
                    hcfg.set_ssl_context_callback(
                        [ca](boost::asio::ssl::context& ctx) { ctx.load_verify_file(ca); });
                }
            }
            slot = std::make_shared<hc::http_client>(web::uri(base), hcfg);
        }
        return slot;
    }

    void record(std::string_view endpoint, std::chrono::steady_clock::time_point started,
                Outcome outcome, int http_status, std::string_view error_type) {
        RequestRecord rec;
        rec.endpoint = endpoint;
        rec.latency = std::chrono::steady_clock::now() - started;
        rec.outcome = outcome;
        rec.http_status = http_status;
        rec.error_type = error_type;
        {
            std::lock_guard lock(counters.mutex);
            auto& s = counters.stats;
            ++s.requests;
            if (outcome != Outcome::Ok) ++s.errors;
            if (outcome == Outcome::Timeout) ++s.timeouts;
            s.latency_seconds_sum += rec.latency.count();
            s.latency_seconds_max = std::max(s.latency_seconds_max, rec.latency.count());
        }
        if (config.observer) {
            try {
                config.observer(rec);
            } catch (...) {
                // An observer must not turn a result into a failure.
            }
        }
    }

    QueryResult post(std::string_view endpoint, std::string_view promql, std::string form,
                     const QueryOptions& options) {
        const auto timeout = wait_on_grid(options.timeout.value_or(config.timeout), config.timeout);
        if (timeout.count() <= 0) throw ConfigError("Prometheus timeout must be positive");
        if (options.eval_timeout)
            form += "&timeout=" + form_encode(format_seconds(*options.eval_timeout));
        const std::string query(promql);
        const auto started = std::chrono::steady_clock::now();
        int status = 0;
        std::string body;
        try {
            http::http_request req(http::methods::POST);
            req.set_request_uri(web::uri("/api/v1/" + std::string(endpoint)));
            req.headers().add("Accept", "application/json");
            req.headers().add("User-Agent", config.user_agent);
            std::string token = tokens.get();
            if (!token.empty()) req.headers().add("Authorization", "Bearer " + token);
            req.set_body(std::move(form), "application/x-www-form-urlencoded");
            http::http_response resp = client_for(timeout)->request(req).get();
            status = resp.status_code();
            body = resp.extract_utf8string(true).get();
        } catch (const std::exception& e) {
            bool timed_out = false;
            if (const auto* he = dynamic_cast<const http::http_exception*>(&e)) {
                timed_out = he->error_code().value() == static_cast<int>(std::errc::timed_out);
            }
            record(endpoint, started, timed_out ? Outcome::Timeout : Outcome::Transport, status,
                   {});
            std::string what = timed_out ? "no answer within " + format_seconds(timeout) + " s"
                                         : std::string(e.what());
            throw TransportError(query, base, what, timed_out);
        }
        try {
            QueryResult result = parse_response(body, query, base, status);
            if (status >= 300) {
                // A success body with an error status is not an answer to trust.
                throw QueryError(query, base, status, "bad_response",
                                 "HTTP error with a success body");
            }
            record(endpoint, started, Outcome::Ok, status, {});
            return result;
        } catch (const QueryError& e) {
            record(endpoint, started,
                   e.error_type() == "bad_response" ? Outcome::BadResponse : Outcome::ApiError,
                   status, e.error_type());
            throw;
        }
    }
};

// ------------------------------------------------------------------------------------- Client

Client::Client(ClientConfig config) : impl_(std::make_shared<Impl>(std::move(config))) {}
Client::~Client() = default;
Client::Client(const Client&) = default;
Client& Client::operator=(const Client&) = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

const ClientConfig& Client::config() const {
    return impl_->config;
}

ClientStats Client::stats() const {
    std::lock_guard lock(impl_->counters.mutex);
    return impl_->counters.stats;
}

QueryResult Client::query(std::string_view promql, std::optional<TimePoint> time,
                          const QueryOptions& options) const {
    std::string form = "query=" + form_encode(promql);
    if (time) form += "&time=" + form_encode(format_time(*time));
    return impl_->post("query", promql, std::move(form), options);
}

QueryResult Client::query_range(std::string_view promql, TimePoint start, TimePoint end,
                                std::chrono::milliseconds step, const QueryOptions& options) const {
    if (step.count() <= 0) {
        throw QueryError(std::string(promql), impl_->base, 0, "bad_data",
                         "range query step must be at least 1 ms");
    }
    if (end < start) {
        throw QueryError(std::string(promql), impl_->base, 0, "bad_data",
                         "range query ends before it starts");
    }
    std::string form = "query=" + form_encode(promql);
    form += "&start=" + form_encode(format_time(start));
    form += "&end=" + form_encode(format_time(end));
    form += "&step=" + form_encode(format_seconds(step));
    return impl_->post("query_range", promql, std::move(form), options);
}

}  // namespace phasescale::prom
