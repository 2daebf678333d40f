// The operator's HTTP endpoints on --metrics-addr: /metrics, /healthz and /readyz (civetweb).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

class CivetServer;

namespace phasescale::app {

// A page: its HTTP status (200 or 503) and text, made anew at each request.
using Page = std::function<std::pair<int, std::string>()>;

class HttpEndpoints {
public:
    // Serves on `address` (HOST:PORT); throws when it cannot listen there.
    HttpEndpoints(const std::string& address, Page metrics, Page healthz, Page readyz);
    ~HttpEndpoints();
    HttpEndpoints(const HttpEndpoints&) = delete;
    HttpEndpoints& operator=(const HttpEndpoints&) = delete;

    void close();

private:
    class Handler;
    std::unique_ptr<Handler> metrics_, healthz_, readyz_;  // outlive the server
    std::unique_ptr<CivetServer> server_;
};

}  // namespace phasescale::app
