// Helpers of the Prometheus client's tests: a raw HTTP GET, a scripted local HTTP server, test
// certificates, and (from tests/support) temporary folders, free ports, child processes, waits.
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

#include "fake_http.hpp"
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
HttpResult http_get(int port, const std::string& path,
                    std::chrono::milliseconds timeout = std::chrono::seconds(2));

using SeenRequest = test_support::HttpRequest;

struct ScriptedResponse {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
    std::chrono::milliseconds delay{0};
};

// A test_support::FakeHttpServer that answers each request with the handler's ScriptedResponse,
// after its delay (cut short when the server stops), and closes the connection.
class ScriptedHttpServer : public test_support::FakeHttpServer {
public:
    using Handler = std::function<ScriptedResponse(const SeenRequest&)>;
    explicit ScriptedHttpServer(Handler handler);
};

// A self-signed CA and a server certificate it signed for IP 127.0.0.1, as PEM files in `dir`:
// ca.crt, server.crt, server.key.
void write_test_certificates(const std::filesystem::path& dir);

}  // namespace prom_test
