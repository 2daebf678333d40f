#include "phasescale/prom/error.hpp"

namespace phasescale::prom {

namespace {

// Queries can be long; the message keeps enough to recognise one.
constexpr std::size_t kMaxQueryInMessage = 300;

std::string where(const std::string& query, const std::string& url) {
    std::string s;
    if (!url.empty()) s += "server " + url;
    if (!query.empty()) {
        if (!s.empty()) s += ", ";
        s += "query: ";
        s += query.size() > kMaxQueryInMessage ? query.substr(0, kMaxQueryInMessage) + "..." : query;
    }
    return s.empty() ? s : " (" + s + ")";
}

std::string query_error_message(const std::string& query, const std::string& url, int status,
                                const std::string& type, const std::string& message) {
    std::string s = "Prometheus query failed:";
    if (status != 0) s += " HTTP " + std::to_string(status);
    if (!type.empty()) s += " " + type;
    s += ": " + message;
    return s + where(query, url);
}

}  // namespace

TransportError::TransportError(std::string query, std::string url, const std::string& what, bool timed_out)
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

}  // namespace phasescale::prom
