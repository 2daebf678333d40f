#include "prom_support.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace prom_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;


// --------------------------------------------------------------------------------------- HTTP

namespace {

// Connects to 127.0.0.1:port within the deadline; -1 on failure (error set).
int connect_loopback(int port, std::chrono::steady_clock::time_point deadline, std::string& error) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
        error = std::string("connect: ") + strerror(errno);
        close(fd);
        return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count()))) != 1) {
        error = "connect timed out";
        close(fd);
        return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        error = std::string("connect: ") + strerror(err);
        close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

HttpResult http_get(int port, const std::string& path, std::chrono::milliseconds timeout) {
    HttpResult r;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int fd = connect_loopback(port, deadline, r.error);
    if (fd < 0) return r;
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        r.error = "send failed";
        close(fd);
        return r;
    }
    std::string data;
    char buf[8192];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1) {
            r.error = "no complete answer within " + std::to_string(timeout.count()) + " ms";
            close(fd);
            return r;
        }
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0) {
            r.error = std::string("recv: ") + strerror(errno);
            close(fd);
            return r;
        }
        if (n == 0) break;
        data.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    auto header_end = data.find("\r\n\r\n");
    if (data.rfind("HTTP/", 0) != 0 || header_end == std::string::npos) {
        r.error = "not an HTTP answer: " + data.substr(0, 100);
        return r;
    }
    r.status = std::atoi(data.c_str() + data.find(' ') + 1);
    r.body = data.substr(header_end + 4);
    return r;
}

std::string SeenRequest::header(const std::string& name) const {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
    };
    std::istringstream in(headers);
    std::string line;
    const std::string want = lower(name);
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        if (lower(line.substr(0, colon)) != want) continue;
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        return value;
    }
    return {};
}

FakeHttpServer::FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 16) != 0) {
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
    thread_.join();
    for (auto& w : workers_) w.join();
    close(listen_fd_);
}

std::vector<SeenRequest> FakeHttpServer::requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
}

void FakeHttpServer::serve() {
    while (!stop_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        workers_.emplace_back([this, fd] { handle(fd); });
    }
}

void FakeHttpServer::handle(int fd) {
    // Reads one request (headers, then Content-Length bytes), answers it, closes.
    std::string data;
    char buf[4096];
    std::size_t header_end = std::string::npos;
    std::size_t need = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!stop_ && std::chrono::steady_clock::now() < deadline) {
        if (header_end != std::string::npos && data.size() >= header_end + 4 + need) break;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        data.append(buf, static_cast<std::size_t>(n));
        if (header_end == std::string::npos && (header_end = data.find("\r\n\r\n")) != std::string::npos) {
            SeenRequest probe;
            probe.headers = data.substr(0, header_end);
            std::string cl = probe.header("Content-Length");
            need = cl.empty() ? 0 : std::stoul(cl);
        }
    }
    if (header_end == std::string::npos) {
        close(fd);
        return;
    }
    SeenRequest req;
    std::string head = data.substr(0, header_end);
    std::string first = head.substr(0, head.find("\r\n"));
    req.method = first.substr(0, first.find(' '));
    req.target = first.substr(first.find(' ') + 1);
    req.target = req.target.substr(0, req.target.find(' '));
    req.headers = head.substr(std::min(head.size(), first.size() + 2));
    req.body = data.substr(header_end + 4, need);
    {
        std::lock_guard lock(mutex_);
        requests_.push_back(req);
    }
    ScriptedResponse resp = handler_(req);
    if (resp.delay.count() > 0) {
        std::unique_lock lock(mutex_);
        stopped_.wait_for(lock, resp.delay, [this] { return stop_.load(); });
        if (stop_) {
            close(fd);
            return;
        }
    }
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " X\r\nContent-Type: " + resp.content_type +
                      "\r\nContent-Length: " + std::to_string(resp.body.size()) + "\r\nConnection: close\r\n\r\n" +
                      resp.body;
    send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    close(fd);
}

// ------------------------------------------------------------------------------ certificates

namespace {

struct PkeyDel { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct X509Del { void operator()(X509* x) const { X509_free(x); } };
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDel>;
using Cert = std::unique_ptr<X509, X509Del>;

void check(bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("test certificates: ") + what + " failed");
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    check(ext != nullptr, "extension");
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

Cert make_cert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key, bool ca) {
    Cert cert(X509_new());
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
    X509* signer = issuer != nullptr ? issuer : cert.get();
    X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
    if (ca) {
        add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        add_ext(cert.get(), signer, NID_basic_constraints, "CA:FALSE");
        add_ext(cert.get(), signer, NID_ext_key_usage, "serverAuth");
        add_ext(cert.get(), signer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    }
    check(X509_sign(cert.get(), issuer_key, EVP_sha256()) > 0, "signing");
    return cert;
}

void write_pem(const fs::path& path, X509* cert, EVP_PKEY* key) {
    FILE* f = fopen(path.c_str(), "w");
    check(f != nullptr, "opening a PEM file");
    bool ok = cert != nullptr ? PEM_write_X509(f, cert) == 1
                              : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    fclose(f);
    check(ok, "writing a PEM file");
}

}  // namespace

void write_test_certificates(const fs::path& dir) {
    Pkey ca_key(EVP_EC_gen("P-256"));
    Pkey server_key(EVP_EC_gen("P-256"));
    check(ca_key && server_key, "key generation");
    Cert ca = make_cert(ca_key.get(), "phasescale test CA", 1, nullptr, ca_key.get(), true);
    Cert server = make_cert(server_key.get(), "127.0.0.1", 2, ca.get(), ca_key.get(), false);
    write_pem(dir / "ca.crt", ca.get(), nullptr);
    write_pem(dir / "server.crt", server.get(), nullptr);
    write_pem(dir / "server.key", nullptr, server_key.get());
}

}  // namespace prom_test
