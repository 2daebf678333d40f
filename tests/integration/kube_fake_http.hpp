// A tiny plain-HTTP server on 127.0.0.1 for unit tests of the client's own mechanics (retries,
// Retry-After, rate limiting, watch stream decoding) that a real API server does not produce on
// demand. The API's behaviour itself is tested against the real kube-apiserver.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kube_test {

struct HttpRequestSeen {
    std::string method;
    std::string target;  // path?query
    std::string headers; // raw
    std::string body;
};

// The handler writes the whole response (status line, headers, body) with `send`; it may call
// send several times with pauses to stream a chunked body. Returning closes the connection.
using HttpHandler = std::function<void(const HttpRequestSeen& request, const std::function<bool(const std::string&)>& send)>;

class FakeHttpServer {
public:
    explicit FakeHttpServer(HttpHandler handler);
    ~FakeHttpServer();
    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::vector<HttpRequestSeen> requests() const;

    // A complete response with a JSON body.
    static std::string response(int status, const std::string& body, const std::string& extra_headers = {});
    // One chunk of a chunked body.
    static std::string chunk(const std::string& data);

private:
    void serve();
    void handle(int fd);

    HttpHandler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<HttpRequestSeen> requests_;
    std::vector<std::thread> workers_;
    std::thread thread_;
};

}  // namespace kube_test
