// Helpers of the Prometheus client's tests: temporary folders, free ports, child processes that
// are always stopped, a raw HTTP GET, a scripted local HTTP server, bounded waits.
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

#include <sys/types.h>

namespace prom_test {

// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "phasescale-prom-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    // Writes `text` to path()/name and returns the full path.
    std::string write(const std::string& name, const std::string& text) const;

private:
    std::filesystem::path path_;
};

// A loopback TCP port nobody listens on right now.
int free_port();

std::string read_file(const std::filesystem::path& path);

// A child process in a process group of its own, its stdout and stderr in `log`. The destructor
// (and stop()) sends SIGTERM to the group, then SIGKILL if it has not ended within a grace time.
// If this test process dies, the kernel kills the child (PR_SET_PDEATHSIG).
class ChildProcess {
public:
    ChildProcess(std::vector<std::string> argv, std::filesystem::path log);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // False once the process has ended; then exit_code() tells how (-signal if killed).
    bool running();
    int exit_code() const { return exit_code_; }
    // Waits at most `timeout` for the process to end; returns its exit code, or throws.
    int wait(std::chrono::milliseconds timeout);
    void stop();
    // The end of the log, for failure messages.
    std::string log_tail(std::size_t bytes = 4000) const;
    std::string describe() const;  // "argv[0] (pid N)"

private:
    std::vector<std::string> argv_;
    std::filesystem::path log_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    int exit_code_ = 0;
};

struct HttpResult {
    int status = 0;  // 0: no answer (error tells why)
    std::string body;
    std::string error;
};

// GET http://127.0.0.1:port/path with a bounded wait.
HttpResult http_get(int port, const std::string& path, std::chrono::milliseconds timeout = std::chrono::seconds(2));

// Polls `ready` every `interval` until it returns true or `timeout` passes; returns whether it did.
bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds(100));

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
