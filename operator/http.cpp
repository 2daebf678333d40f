#include "http.hpp"

#include <CivetServer.h>

#include <vector>

namespace phasescale::app {

class HttpEndpoints::Handler : public CivetHandler {
public:
    Handler(Page page, std::string content_type)
        : page_(std::move(page)), type_(std::move(content_type)) {}
    bool handleGet(CivetServer*, struct mg_connection* conn) override {
        const auto [status, text] = page_();
        mg_printf(conn,
                  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: "
                  "close\r\n\r\n",
                  status, status == 200 ? "OK" : "Service Unavailable", type_.c_str(), text.size());
        mg_write(conn, text.data(), text.size());
        return true;
    }

private:
    Page page_;
    std::string type_;
};

HttpEndpoints::HttpEndpoints(const std::string& address, Page metrics, Page healthz, Page readyz)
    : metrics_(std::make_unique<Handler>(std::move(metrics), "text/plain; version=0.0.4")),
      healthz_(std::make_unique<Handler>(std::move(healthz), "text/plain")),
      readyz_(std::make_unique<Handler>(std::move(readyz), "text/plain")) {
    const std::vector<std::string> options{"listening_ports", address, "num_threads", "2"};
    server_ = std::make_unique<CivetServer>(options);
    server_->addHandler("/metrics", *metrics_);
    server_->addHandler("/healthz", *healthz_);
    server_->addHandler("/readyz", *readyz_);
}

HttpEndpoints::~HttpEndpoints() {
    close();
}

void HttpEndpoints::close() {
    if (server_) server_->close();
}

}  // namespace phasescale::app
