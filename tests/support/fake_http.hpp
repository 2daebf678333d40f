// A tiny plain-HTTP/1.1 server on 127.0.0.1 for tests of clients' own mechanics (retries,
// timeouts, bearer tokens, stream decoding, malformed answers) that real servers do not produce
// on demand. It records every request and lets a handler write the answer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test_support {

struct HttpRequest {
    std::string method;
    std::string target;   // path?query
    std::string headers;  // the raw header lines (not the request line)
    std::string body;
    std::string header(const std::string& name) const;  // case-insensitive; "" if absent
};

class FakeHttpServer;

// What a handler answers with: call it to send bytes (a whole response, or a piece of a chunked
// one); it returns false once the client has gone or the server stops.
class HttpExchange {
public:
    bool operator()(const std::string& data) const { return send_(data); }
    // Waits `duration`, cut short when the server stops; false if it stopped.
    bool pause(std::chrono::milliseconds duration) const;

private:
    friend class FakeHttpServer;
    HttpExchange(FakeHttpServer& server, std::function<bool(const std::string&)> send)
        : server_(server), send_(std::move(send)) {}
    FakeHttpServer& server_;
    std::function<bool(const std::string&)> send_;
};

// The handler answers one request. The connection then serves the next request, unless the
// answer was chunked (a stream, ended by closing) or said "Connection: close".
using HttpHandler = std::function<void(const HttpRequest& request, const HttpExchange& send)>;

class FakeHttpServer {
public:
    explicit FakeHttpServer(HttpHandler handler);
    ~FakeHttpServer();
    FakeHttpServer(const FakeHttpServer&) = delete;
    FakeHttpServer& operator=(const FakeHttpServer&) = delete;
    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::vector<HttpRequest> requests() const;
    int connections() const { return connections_; }  // accepted so far

    // A complete response.
    static std::string response(int status, const std::string& body,
                                const std::string& extra_headers = {},
                                const std::string& content_type = "application/json");
    // One chunk of a chunked body.
    static std::string chunk(const std::string& data);

private:
    friend class HttpExchange;
    void serve();
    void handle(int fd);

    HttpHandler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    mutable std::mutex mutex_;
    std::condition_variable stopped_;
    std::vector<HttpRequest> requests_;
    std::vector<std::thread> workers_;
    std::thread thread_;
};

}  // namespace test_support
