// A client of the Prometheus HTTP API: instant and range queries, sent as POST form bodies,
// answers parsed into typed results (result.hpp), failures thrown as error.hpp's errors.
//
// A Client is cheap to copy; copies share connections, the token and the counters. All methods
// are thread-safe. cpprestsdk stays inside: this header does not include it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "phasescale/prom/error.hpp"
#include "phasescale/prom/result.hpp"

namespace phasescale::prom {

using TimePoint = std::chrono::system_clock::time_point;

// What became of one request, for the operator's own metrics.
enum class Outcome {
    Ok,
    ApiError,  // Prometheus answered with an error (QueryError with an errorType or an HTTP error)
    BadResponse,  // an answer that could not be understood (QueryError "bad_response")
    Transport,    // no answer (TransportError)
    Timeout,      // no answer within the timeout (TransportError, timed_out())
};
const char* to_string(Outcome outcome);

struct RequestRecord {
    std::string_view endpoint;  // "query" or "query_range"
    std::chrono::duration<double> latency{};
    Outcome outcome = Outcome::Ok;
    int http_status = 0;          // 0 without an answer
    std::string_view error_type;  // Prometheus' errorType, if any
};

// Called once per request, after it ended, on the calling thread. Must not throw.
using RequestObserver = std::function<void(const RequestRecord&)>;

// Counters since the client was made (shared by its copies).
struct ClientStats {
    std::uint64_t requests = 0;
    std::uint64_t errors = 0;    // every outcome but Ok
    std::uint64_t timeouts = 0;  // of which Timeout
    double latency_seconds_sum = 0;
    double latency_seconds_max = 0;
};

struct ClientConfig {
    // Base URL: http(s)://host:port, optionally with a path prefix (a Prometheus behind
    // --web.route-prefix or a proxy): the API is at URL/api/v1/.
    std::string url;
    // Sent as "Authorization: Bearer ...". A token file is read again when it changes (projected
    // service-account tokens rotate); the token wins if both are set.
    std::string bearer_token;
    std::string bearer_token_file;
    // TLS (https URLs): certificates are verified, against the system's CAs plus ca_file's.
    std::string ca_file;
    bool insecure_skip_tls_verify = false;
    // Per request, unless QueryOptions says otherwise.
    std::chrono::milliseconds timeout{10'000};
    std::string user_agent = "phasescale";
    RequestObserver observer;
};

struct QueryOptions {
    // How long the client waits for the answer, when shorter than ClientConfig::timeout.
    std::optional<std::chrono::milliseconds> timeout;
    // Prometheus' own evaluation timeout (its `timeout` parameter); the server answers with
    // errorType "timeout" past it. Not sent when unset (the server's --query.timeout applies).
    std::optional<std::chrono::microseconds> eval_timeout;
};

class Client {
public:
    // Throws ConfigError for a URL that is not http(s), or a token or CA file that cannot be read.
    explicit Client(ClientConfig config);
    ~Client();
    Client(const Client&);
    Client& operator=(const Client&);
    Client(Client&&) noexcept;
    Client& operator=(Client&&) noexcept;

    // /api/v1/query at `time` (the server's now when unset).
    QueryResult query(std::string_view promql, std::optional<TimePoint> time = {},
                      const QueryOptions& options = {}) const;

    // /api/v1/query_range over [start, end] every `step` (at least 1 ms).
    QueryResult query_range(std::string_view promql, TimePoint start, TimePoint end,
                            std::chrono::milliseconds step, const QueryOptions& options = {}) const;

    ClientStats stats() const;
    const ClientConfig& config() const;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

// application/x-www-form-urlencoded encoding of one key or value (RFC 3986 unreserved characters
// stay, everything else is %XX).
std::string form_encode(std::string_view text);
// Unix seconds with millisecond precision, as the API takes them ("1712345678.123").
std::string format_time(TimePoint time);
// Seconds, as the API takes a step or timeout ("15", "0.5", "0.000001").
std::string format_seconds(std::chrono::microseconds duration);

}  // namespace phasescale::prom
