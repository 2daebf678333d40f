#include "phasescale/kube/error.hpp"
#include "phasescale/kube/json.hpp"

namespace phasescale::kube {

TransportError::TransportError(std::string method, std::string path, std::string what,
                               bool timed_out)
    : Error(method + " " + path + ": " + what),
      method_(std::move(method)),
      path_(std::move(path)),
      timed_out_(timed_out) {}

namespace {

std::string describe(int status, const std::string& reason, const std::string& message,
                     const std::string& method, const std::string& path) {
    std::string text = method + " " + path + ": " + std::to_string(status);
    if (!reason.empty()) text += " " + reason;
    if (!message.empty()) text += ": " + message;
    return text;
}

std::string default_reason(int status) {
    switch (status) {
        case 400: return "BadRequest";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "NotFound";
        case 405: return "MethodNotAllowed";
        case 409: return "Conflict";
        case 410: return "Expired";
        case 415: return "UnsupportedMediaType";
        case 422: return "Invalid";
        case 429: return "TooManyRequests";
        case 500: return "InternalError";
        case 503: return "ServiceUnavailable";
        case 504: return "Timeout";
        default: return {};
    }
}

template <class E>
[[noreturn]] void raise(int status, std::string reason, std::string message,
                        const std::string& method, const std::string& path,
                        nlohmann::json status_object,
                        std::optional<std::chrono::seconds> retry_after) {
    throw E(status, std::move(reason), std::move(message), method, path, std::move(status_object),
            retry_after);
}

[[noreturn]] void throw_for(int status, std::string reason, std::string message,
                            const std::string& method, const std::string& path, nlohmann::json obj,
                            std::optional<std::chrono::seconds> retry_after) {
    if (reason.empty()) reason = default_reason(status);
    switch (status) {
        case 400: raise<BadRequest>(status, reason, message, method, path, obj, retry_after);
        case 401: raise<Unauthorized>(status, reason, message, method, path, obj, retry_after);
        case 403: raise<Forbidden>(status, reason, message, method, path, obj, retry_after);
        case 404: raise<NotFound>(status, reason, message, method, path, obj, retry_after);
        case 409: raise<Conflict>(status, reason, message, method, path, obj, retry_after);
        case 410: raise<Gone>(status, reason, message, method, path, obj, retry_after);
        case 422: raise<Invalid>(status, reason, message, method, path, obj, retry_after);
        case 429: raise<TooManyRequests>(status, reason, message, method, path, obj, retry_after);
        default: break;
    }
    if (status >= 500) raise<ServerError>(status, reason, message, method, path, obj, retry_after);
    raise<ApiError>(status, reason, message, method, path, obj, retry_after);
}

}  // namespace

ApiError::ApiError(int status, std::string reason, std::string api_message, std::string method,
                   std::string path, nlohmann::json status_object,
                   std::optional<std::chrono::seconds> retry_after)
    : Error(describe(status, reason, api_message, method, path)),
      status_(status),
      reason_(std::move(reason)),
      api_message_(std::move(api_message)),
      method_(std::move(method)),
      path_(std::move(path)),
      status_object_(std::move(status_object)),
      retry_after_(retry_after) {}

void throw_api_error(int status, const std::string& body, const std::string& method,
                     const std::string& path, std::optional<std::chrono::seconds> retry_after) {
    nlohmann::json obj = nlohmann::json::parse(body, nullptr, false);
    if (string_field(obj, "kind") == "Status") {
        throw_for(status, string_field(obj, "reason"), string_field(obj, "message"), method, path,
                  obj, retry_after);
    }
    std::string text = body;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.size() > 500) text = text.substr(0, 500) + "...";
    throw_for(status, {}, text, method, path, nullptr, retry_after);
}

void throw_status(const nlohmann::json& status, const std::string& method,
                  const std::string& path) {
    const bool has_code =
        status.is_object() && status.contains("code") && status["code"].is_number_integer() &&
        status["code"].get<long long>() >= 100 && status["code"].get<long long>() <= 599;
    const int code = has_code ? status["code"].get<int>() : 500;
    throw_for(code, string_field(status, "reason"), string_field(status, "message"), method, path,
              status, std::nullopt);
}

}  // namespace phasescale::kube
