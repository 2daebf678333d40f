// Errors of the Kubernetes client. Every error says what was asked (method and path, or the
// configuration file and field) and what went wrong; API errors carry the server's Status.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace phasescale::kube {

// Base of everything this client throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A kubeconfig, an in-cluster setup or a certificate that cannot be used. The message names the
// file and the field.
class ConfigError : public Error {
public:
    using Error::Error;
};

// An exec credential plugin failed (not found, exit status, timeout) or printed no usable
// ExecCredential. The message names the plugin, never the credential.
class CredentialError : public Error {
public:
    using Error::Error;
};

// The request never got an HTTP answer: connection refused, TLS handshake or certificate
// verification failed, timed out, the stream broke.
class TransportError : public Error {
public:
    TransportError(std::string method, std::string path, std::string what, bool timed_out = false);
    const std::string& method() const { return method_; }
    const std::string& path() const { return path_; }
    bool timed_out() const { return timed_out_; }

private:
    std::string method_;
    std::string path_;
    bool timed_out_;
};

// The request was cancelled through its stop token.
class Cancelled : public Error {
public:
    using Error::Error;
};

// A write not sent because the client's write fence was closed (Config::write_fence: this
// replica does not hold a fresh leader lease).
class Fenced : public Error {
public:
    using Error::Error;
};

// The API server answered with an HTTP error. status(): the HTTP code; reason(): the Status
// reason ("NotFound", "AlreadyExists", "Conflict", "Invalid", "Expired", ...); api_message(): the
// server's own message; status_object(): the whole Status (details.causes for 422).
class ApiError : public Error {
public:
    ApiError(int status, std::string reason, std::string api_message, std::string method,
             std::string path, nlohmann::json status_object = {},
             std::optional<std::chrono::seconds> retry_after = {});
    int status() const { return status_; }
    const std::string& reason() const { return reason_; }
    const std::string& api_message() const { return api_message_; }
    const std::string& method() const { return method_; }
    const std::string& path() const { return path_; }
    const nlohmann::json& status_object() const { return status_object_; }
    // The server's Retry-After, when it sent one (429, some 5xx).
    std::optional<std::chrono::seconds> retry_after() const { return retry_after_; }

private:
    int status_;
    std::string reason_;
    std::string api_message_;
    std::string method_;
    std::string path_;
    nlohmann::json status_object_;
    std::optional<std::chrono::seconds> retry_after_;
};

class BadRequest : public ApiError {
public:
    using ApiError::ApiError;
};  // 400
class Unauthorized : public ApiError {
public:
    using ApiError::ApiError;
};  // 401
class Forbidden : public ApiError {
public:
    using ApiError::ApiError;
};  // 403
class NotFound : public ApiError {
public:
    using ApiError::ApiError;
};  // 404
class Conflict : public ApiError {
public:
    using ApiError::ApiError;
};  // 409 (reason AlreadyExists or Conflict)
class Gone : public ApiError {
public:
    using ApiError::ApiError;
};  // 410 (resourceVersion or continue token expired)
class Invalid : public ApiError {
public:
    using ApiError::ApiError;
};  // 422
class TooManyRequests : public ApiError {
public:
    using ApiError::ApiError;
};  // 429
class ServerError : public ApiError {
public:
    using ApiError::ApiError;
};  // 5xx

// Throws the ApiError subclass for `status`, built from a response body (a Status object when the
// server sent one, else the raw text).
[[noreturn]] void throw_api_error(int status, const std::string& body, const std::string& method,
                                  const std::string& path,
                                  std::optional<std::chrono::seconds> retry_after = {});

// Throws the ApiError subclass for a Status object (a watch ERROR event).
[[noreturn]] void throw_status(const nlohmann::json& status, const std::string& method,
                               const std::string& path);

}  // namespace phasescale::kube
