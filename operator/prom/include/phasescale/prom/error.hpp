// Errors of the Prometheus client. Every error names the query it belongs to and the server.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace phasescale::prom {

// Base of everything this client throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A client configuration that cannot be used (bad URL, unreadable token or CA file, bad template).
class ConfigError : public Error {
public:
    using Error::Error;
};

// The request got no HTTP answer: connection refused, TLS handshake or certificate verification
// failed, the connection broke, or the client-side timeout passed (timed_out()).
class TransportError : public Error {
public:
    TransportError(std::string query, std::string url, const std::string& what, bool timed_out);
    const std::string& query() const { return query_; }
    const std::string& url() const { return url_; }
    bool timed_out() const { return timed_out_; }

private:
    std::string query_;
    std::string url_;
    bool timed_out_;
};

// Prometheus answered, but not with a result: an API error (status "error") or an HTTP error.
// error_type() is Prometheus' errorType ("bad_data", "timeout", "canceled", "execution",
// "internal", "unavailable", "not_found"), "bad_response" when the answer could not be understood
// (not JSON, unexpected shape), or "" for an HTTP error without a Prometheus body (a proxy's 502).
// error_message() is Prometheus' own message (or the start of the body).
class QueryError : public Error {
public:
    QueryError(std::string query, std::string url, int http_status, std::string error_type,
               std::string error_message);
    const std::string& query() const { return query_; }
    const std::string& url() const { return url_; }
    int http_status() const { return http_status_; }  // 0 when not known (parsing a stored answer)
    const std::string& error_type() const { return error_type_; }
    const std::string& error_message() const { return error_message_; }

private:
    std::string query_;
    std::string url_;
    int http_status_;
    std::string error_type_;
    std::string error_message_;
};

// The URL with any user:password@ (or token@) part replaced by "***@": credentials never reach a
// message, a log line or a status.
std::string redact_url(std::string_view url);

// What went wrong, in words of our own: for a QueryError, its HTTP status, errorType and query but
// not the text of the reply (a reply's body must not land in a status, an Event or an info log);
// for any other error, what(). The reply's text stays in QueryError::error_message().
std::string describe_without_reply(const std::exception& e);

}  // namespace phasescale::prom
