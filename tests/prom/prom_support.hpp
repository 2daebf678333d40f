// Helpers of the Prometheus client's tests: a raw HTTP GET and a scripted local HTTP server, and
// (from tests/support) temporary folders, free ports, child processes, bounded waits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"

namespace prom_test {

using test_support::ChildProcess;
using test_support::free_port;
using test_support::read_file;
using test_support::TempDir;
using test_support::wait_until;

struct HttpResult {
    int status = 0;  // 0: no answer (error tells why)
    std::string body;
    std::string error;
};

// GET http://127.0.0.1:port/path with a bounded wait.
HttpResult http_get(int port, const std::string& path, std::chrono::milliseconds timeout = std::chrono::seconds(2));

// A tiny HTTP/1.1 server on 127.0.0.1 that records each request and answers with a scripted
// response, optionally after a delay (cut short when the server stops).
struct SeenRequest {
    std::string method;
    std::string target;
    std::string headers;  // raw header lines
    std::string body;
    std::string header(const std::string& name) const;  // case-insensitive; "" if absent
};

struct ScriptedResponse {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
    std::chrono::milliseconds delay{0};
};

class FakeHttpServer {
public:
    using Handler = std::function<ScriptedResponse(const SeenRequest&)>;
    explicit FakeHttpServer(Handler handler);
    ~FakeHttpServer();
    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::vector<SeenRequest> requests() const;

private:
    void serve();
    void handle(int fd);

    Handler handler_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::condition_variable stopped_;
    std::vector<SeenRequest> requests_;
    std::vector<std::thread> workers_;
    std::thread thread_;
};

// A self-signed CA and a server certificate it signed for IP 127.0.0.1, as PEM files in `dir`:
// ca.crt, server.crt, server.key.
void write_test_certificates(const std::filesystem::path& dir);

}  // namespace prom_test
