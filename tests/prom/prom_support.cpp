#include "prom_support.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
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
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
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
    const std::string req =
        "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        r.error = "send failed";
        close(fd);
        return r;
    }
    std::string data;
    char buf[8192];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
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

ScriptedHttpServer::ScriptedHttpServer(Handler handler)
    : FakeHttpServer([handler = std::move(handler)](const SeenRequest& request,
                                                    const test_support::HttpExchange& send) {
          const ScriptedResponse r = handler(request);
          if (r.delay.count() > 0 && !send.pause(r.delay)) return;
          send(response(r.status, r.body, "Connection: close\r\n", r.content_type));
      }) {}

// ------------------------------------------------------------------------------ certificates

namespace {

struct PkeyDel {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Del {
    void operator()(X509* x) const { X509_free(x); }
};
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

Cert make_cert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key,
               bool ca) {
    Cert cert(X509_new());
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                               -1, -1, 0);
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
    bool ok = cert != nullptr
                  ? PEM_write_X509(f, cert) == 1
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
