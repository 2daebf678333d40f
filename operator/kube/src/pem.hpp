// OpenSSL helpers for PEM certificates and keys (private to the kube library).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/x509.h>

namespace phasescale::kube::detail {

struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::shared_ptr<X509>;
using PkeyPtr = std::shared_ptr<EVP_PKEY>;

// Every certificate in a PEM bundle; throws ConfigError naming `what` if there is none or one is
// malformed.
std::vector<X509Ptr> parse_certificates(const std::string& pem, const std::string& what);
// The private key in a PEM text; throws ConfigError naming `what`.
PkeyPtr parse_private_key(const std::string& pem, const std::string& what);
// The last OpenSSL error as text (and clears the queue).
std::string openssl_error();

std::string base64_decode(const std::string& text, const std::string& what);

}  // namespace phasescale::kube::detail
