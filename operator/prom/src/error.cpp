#include "phasescale/prom/error.hpp"

namespace phasescale::prom {

namespace {

// Queries can be long; the message keeps enough to recognise one.
constexpr std::size_t kMaxQueryInMessage = 300;

std::string where(const std::string& query, const std::string& url) {
    std::string s;
    if (!url.empty()) s += "server " + redact_url(url);
    if (!query.empty()) {
        if (!s.empty()) s += ", ";
        s += "query: ";
        s +=
            query.size() > kMaxQueryInMessage ? query.substr(0, kMaxQueryInMessage) + "..." : query;
    }
    return s.empty() ? s : " (" + s + ")";
}

// errorType as Prometheus spells them (lower case and '_'); anything else is not repeated.
std::string plain_error_type(const std::string& type) {
    const bool plain = type.size() <= 32 &&
                       type.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
    return plain ? type : "unrecognised errorType";
}

std::string query_error_message(const std::string& query, const std::string& url, int status,
                                const std::string& type, const std::string& message) {
    std::string s = "Prometheus query failed:";
    if (status != 0) s += " HTTP " + std::to_string(status);
    if (!type.empty()) s += " " + plain_error_type(type);
    if (!message.empty()) s += ": " + message;
    return s + where(query, url);
}

}  // namespace

TransportError::TransportError(std::string query, std::string url, const std::string& what,
                               bool timed_out)
    : Error("Prometheus request failed: " + what + where(query, url)),
      query_(std::move(query)),
      url_(std::move(url)),
      timed_out_(timed_out) {}

QueryError::QueryError(std::string query, std::string url, int http_status, std::string error_type,
                       std::string error_message)
    : Error(query_error_message(query, url, http_status, error_type, error_message)),
      query_(std::move(query)),
      url_(std::move(url)),
      http_status_(http_status),
      error_type_(std::move(error_type)),
      error_message_(std::move(error_message)) {}

std::string redact_url(std::string_view url) {
    const std::size_t scheme = url.find("://");
    const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
    const std::size_t end = url.find_first_of("/?#", start);
    const std::size_t at = url.rfind('@', end == std::string_view::npos ? url.size() : end);
    if (at == std::string_view::npos || at < start) return std::string(url);
    return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

std::string describe_without_reply(const std::exception& e) {
    const auto* q = dynamic_cast<const QueryError*>(&e);
    if (q == nullptr) return e.what();
    return query_error_message(q->query(), q->url(), q->http_status(), q->error_type(), "") +
           " (the reply's text is logged at debug level)";
}

}  // namespace phasescale::prom
