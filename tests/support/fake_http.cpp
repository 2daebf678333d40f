#include "fake_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace test_support {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
    std::istringstream in(headers);
    std::string line;
    const std::string want = lower(name);
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto colon = line.find(':');
        if (colon == std::string::npos || lower(line.substr(0, colon)) != want) continue;
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        return value;
    }
    return {};
}

bool HttpExchange::pause(std::chrono::milliseconds duration) const {
    std::unique_lock lock(server_.mutex_);
    return !server_.stopped_.wait_for(lock, duration, [this] { return server_.stop_.load(); });
}

FakeHttpServer::FakeHttpServer(HttpHandler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 16) != 0) {
        close(listen_fd_);
        throw std::runtime_error("FakeHttpServer: cannot listen");
    }
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
}

FakeHttpServer::~FakeHttpServer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    stopped_.notify_all();
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();  // no worker is added after this
    for (auto& w : workers_) w.join();
    close(listen_fd_);
}

std::vector<HttpRequest> FakeHttpServer::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

std::string FakeHttpServer::response(int status, const std::string& body,
                                     const std::string& extra_headers,
                                     const std::string& content_type) {
    std::ostringstream out;
    out << "HTTP/1.1 " << status << " X\r\nContent-Type: " << content_type
        << "\r\nContent-Length: " << body.size() << "\r\n"
        << extra_headers << "\r\n"
        << body;
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
        if (poll(&p, 1, 50) != 1) continue;
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        ++connections_;
        workers_.emplace_back([this, fd] { handle(fd); });
    }
}

void FakeHttpServer::handle(int fd) {
    std::string buffer;
    char chunk[4096];
    while (!stop_) {
        // The headers, then Content-Length bytes of body.
        std::size_t header_end;
        while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos && !stop_) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 50) != 1) continue;
            ssize_t n = recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) {
                close(fd);
                return;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
        if (stop_) break;
        HttpRequest req;
        const std::string head = buffer.substr(0, header_end);
        buffer.erase(0, header_end + 4);
        const std::string first = head.substr(0, head.find("\r\n"));
        std::istringstream line(first);
        line >> req.method >> req.target;
        req.headers = head.substr(std::min(head.size(), first.size() + 2));
        const std::string length = req.header("Content-Length");
        const std::size_t content_length = length.empty() ? 0 : std::stoul(length);
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
        bool open = true, last = false;
        handler_(req, HttpExchange(*this, [&](const std::string& data) {
                     if (data.find("Transfer-Encoding: chunked") != std::string::npos ||
                         data.find("Connection: close") != std::string::npos)
                         last = true;
                     if (!open || stop_) return false;
                     for (std::size_t sent = 0; sent < data.size();) {
                         ssize_t n =
                             ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
                         if (n <= 0) return open = false;
                         sent += static_cast<std::size_t>(n);
                     }
                     return true;
                 }));
        if (!open || last) break;
    }
    close(fd);
}

}  // namespace test_support
