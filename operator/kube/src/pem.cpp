#include "pem.hpp"

#include <array>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "phasescale/kube/config.hpp"
#include "phasescale/kube/error.hpp"

namespace phasescale::kube::detail {

std::string openssl_error() {
    unsigned long code = ERR_get_error();
    std::string text;
    if (code != 0) {
        char buf[256];
        ERR_error_string_n(code, buf, sizeof buf);
        text = buf;
    }
    ERR_clear_error();
    return text;
}

std::vector<X509Ptr> parse_certificates(const std::string& pem, const std::string& what) {
    if (pem.find("-----BEGIN") == std::string::npos) {
        throw ConfigError(what + ": not a PEM certificate (no -----BEGIN CERTIFICATE----- line)");
    }
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    std::vector<X509Ptr> certs;
    ERR_clear_error();
    while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        certs.emplace_back(cert, X509Free{});
    }
    // Reading stops with "no start line" at the end of the text; anything else is a broken one.
    unsigned long err = ERR_peek_last_error();
    bool clean_end =
        err == 0 || (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE);
    if (!clean_end) {
        throw ConfigError(what + ": malformed PEM certificate (" + openssl_error() + ")");
    }
    ERR_clear_error();
    if (certs.empty()) throw ConfigError(what + ": no PEM certificate in it");
    return certs;
}

PkeyPtr parse_private_key(const std::string& pem, const std::string& what) {
    if (pem.find("-----BEGIN") == std::string::npos) {
        throw ConfigError(what +
                          ": not a PEM private key (no -----BEGIN ... PRIVATE KEY----- line)");
    }
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    ERR_clear_error();
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (key == nullptr)
        throw ConfigError(what + ": not a usable PEM private key (" + openssl_error() + ")");
    return PkeyPtr(key, PkeyFree{});
}

std::string base64_decode(const std::string& text, const std::string& what) {
    static const auto table = [] {
        std::array<int, 256> t{};
        t.fill(-1);
        const std::string alphabet =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (std::size_t i = 0; i < alphabet.size(); ++i)
            t[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
        return t;
    }();
    std::string out;
    out.reserve(text.size() * 3 / 4);
    unsigned buffer = 0;
    int bits = 0;
    bool padding = false;
    for (char c : text) {
        if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
        if (c == '=') {
            padding = true;
            continue;
        }
        int v = table[static_cast<unsigned char>(c)];
        if (v < 0 || padding) throw ConfigError(what + ": not valid base64");
        buffer = (buffer << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xff));
        }
    }
    if (bits >= 6) throw ConfigError(what + ": not valid base64 (truncated)");
    return out;
}

}  // namespace phasescale::kube::detail

namespace phasescale::kube {

void check_certificates_pem(const std::string& pem, const std::string& what) {
    detail::parse_certificates(pem, what);
}

void check_private_key_pem(const std::string& pem, const std::string& what) {
    detail::parse_private_key(pem, what);
}

}  // namespace phasescale::kube
