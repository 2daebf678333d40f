#include "kube_fake_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <stdexcept>

namespace kube_test {

FakeHttpServer::FakeHttpServer(HttpHandler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 16) != 0) {
        throw std::runtime_error("fake server: cannot listen");
    }
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
}

FakeHttpServer::~FakeHttpServer() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    if (thread_.joinable()) thread_.join();
    for (auto& w : workers_) {
        if (w.joinable()) w.join();
    }
}

std::vector<HttpRequestSeen> FakeHttpServer::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

std::string FakeHttpServer::response(int status, const std::string& body, const std::string& extra_headers) {
    std::ostringstream out;
    out << "HTTP/1.1 " << status << " X\r\nContent-Type: application/json\r\nContent-Length: " << body.size()
        << "\r\n" << extra_headers << "\r\n" << body;
    return out.str();
}

std::string FakeHttpServer::chunk(const std::string& data) {
    std::ostringstream out;
    out << std::hex << data.size() << "\r\n" << data << "\r\n";
    return out.str();
}

void FakeHttpServer::serve() {
    while (!stop_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        int fd = accept(listen_fd_, nullptr, nullptr);
        if (fd < 0) continue;
        std::lock_guard lock(mutex_);
        workers_.emplace_back([this, fd] { handle(fd); });
    }
}

void FakeHttpServer::handle(int fd) {
    std::string buffer;
    char chunk[4096];
    // Serve requests on this connection until the client closes it or a handler returns
    // without a Content-Length (streams end by closing).
    while (!stop_) {
        std::size_t header_end;
        while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
            pollfd p{fd, POLLIN, 0};
            int r = poll(&p, 1, 100);
            if (stop_) break;
            if (r <= 0) continue;
            ssize_t n = recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) {
                close(fd);
                return;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
        if (stop_) break;
        HttpRequestSeen req;
        std::string head = buffer.substr(0, header_end);
        buffer.erase(0, header_end + 4);
        std::istringstream hs(head);
        std::string version;
        hs >> req.method >> req.target >> version;
        req.headers = head;
        std::size_t content_length = 0;
        std::string lower = head;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (auto pos = lower.find("content-length:"); pos != std::string::npos) {
            content_length = std::stoul(lower.substr(pos + 15));
        }
        while (buffer.size() < content_length) {
            ssize_t n = recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) break;
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
        req.body = buffer.substr(0, content_length);
        buffer.erase(0, content_length);
        {
            std::lock_guard lock(mutex_);
            requests_.push_back(req);
        }
        bool keep = true;
        bool streamed = false;
        handler_(req, [&](const std::string& data) {
            if (data.find("Transfer-Encoding: chunked") != std::string::npos) streamed = true;
            if (!keep || stop_) return false;
            std::size_t sent = 0;
            while (sent < data.size()) {
                ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
                if (n <= 0) {
                    keep = false;
                    return false;
                }
                sent += static_cast<std::size_t>(n);
            }
            return true;
        });
        if (!keep || streamed) break;
    }
    close(fd);
}

}  // namespace kube_test
