#include "phasescale/prom/result.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "phasescale/prom/error.hpp"

#include <phasescale/kube/json.hpp>

namespace phasescale::prom {

using nlohmann::json;

namespace {

// How much of an unexpected body an error message quotes.
constexpr std::size_t kMaxBodyInMessage = 200;

struct Context {
    std::string_view query;
    std::string_view url;
    int status;

    [[noreturn]] void bad(const std::string& what) const {
        throw QueryError(std::string(query), std::string(url), status, "bad_response", what);
    }
};

// [<unix seconds>, "<value>"]
Sample parse_sample(const json& j, const Context& cx, const char* where) {
    if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_string()) {
        cx.bad(std::string(where) +
               " is not [time, \"value\"]: " + j.dump().substr(0, kMaxBodyInMessage));
    }
    Sample s;
    s.time = j[0].get<double>();
    const auto& text = j[1].get_ref<const std::string&>();
    try {
        s.value = parse_value(text);
    } catch (const std::invalid_argument&) {
        cx.bad(std::string(where) + " has a value that is not a number: \"" + text + "\"");
    }
    return s;
}

Labels parse_labels(const json& j, const Context& cx) {
    if (!j.is_object()) cx.bad("a series' \"metric\" is not an object");
    Labels labels;
    for (const auto& [name, value] : j.items()) {
        if (!value.is_string()) cx.bad("label " + name + " is not a string");
        labels.emplace(name, value.get<std::string>());
    }
    return labels;
}

}  // namespace

const char* to_string(ResultType type) {
    switch (type) {
        case ResultType::Vector: return "vector";
        case ResultType::Matrix: return "matrix";
        case ResultType::Scalar: return "scalar";
        case ResultType::String: return "string";
    }
    return "?";
}

const std::vector<InstantSeries>& QueryResult::as_vector(std::string_view query) const {
    if (type != ResultType::Vector) {
        throw QueryError(std::string(query), {}, 0, "bad_response",
                         std::string("expected a vector result, got a ") + to_string(type));
    }
    return vector;
}

const std::vector<RangeSeries>& QueryResult::as_matrix(std::string_view query) const {
    if (type != ResultType::Matrix) {
        throw QueryError(std::string(query), {}, 0, "bad_response",
                         std::string("expected a matrix result, got a ") + to_string(type));
    }
    return matrix;
}

double parse_value(std::string_view text) {
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
    if (text == "-Inf") return -std::numeric_limits<double>::infinity();
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
        throw std::invalid_argument("not a sample value: \"" + std::string(text) + "\"");
    }
    return value;
}

QueryResult parse_response(std::string_view body, std::string_view query, std::string_view url,
                           int http_status) {
    const Context cx{query, url, http_status};
    json j = json::parse(body.begin(), body.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::string start(body.substr(0, kMaxBodyInMessage));
        // An HTTP error from something that is not Prometheus (a proxy): say so plainly.
        if (http_status >= 400) {
            throw QueryError(std::string(query), std::string(url), http_status, "",
                             start.empty() ? std::string("empty body") : start);
        }
        cx.bad("the answer is not a JSON object: " +
               (start.empty() ? std::string("(empty body)") : start));
    }
    // Not value("status", ""): a status that is not a string would throw json::type_error.
    const std::string status = kube::string_field(j, "status");
    if (status == "error") {
        std::string type = kube::string_field(j, "errorType");
        std::string message = kube::string_field(j, "error");
        throw QueryError(std::string(query), std::string(url), http_status, std::move(type),
                         std::move(message));
    }
    if (status != "success") {
        if (http_status >= 400) {
            throw QueryError(std::string(query), std::string(url), http_status, "",
                             std::string(body.substr(0, kMaxBodyInMessage)));
        }
        cx.bad("the answer's status is neither \"success\" nor \"error\"");
    }
    QueryResult r;
    if (j.contains("warnings") && j["warnings"].is_array()) {
        for (const auto& w : j["warnings"]) {
            if (w.is_string()) r.warnings.push_back(w.get<std::string>());
        }
    }
    if (!j.contains("data") || !j["data"].is_object()) cx.bad("the answer has no \"data\" object");
    const json& data = j["data"];
    if (!data.contains("resultType") || !data["resultType"].is_string())
        cx.bad("the answer has no \"resultType\"");
    if (!data.contains("result")) cx.bad("the answer has no \"result\"");
    const std::string type = data["resultType"].get<std::string>();
    const json& result = data["result"];
    if (type == "vector") {
        r.type = ResultType::Vector;
        if (!result.is_array()) cx.bad("a vector result is not an array");
        r.vector.reserve(result.size());
        for (const auto& e : result) {
            if (!e.is_object()) cx.bad("a vector element is not an object");
            if (!e.contains("value")) {
                if (e.contains("histogram")) continue;  // native histograms are not used
                cx.bad("a vector element has no \"value\"");
            }
            InstantSeries s;
            s.metric = e.contains("metric") ? parse_labels(e["metric"], cx) : Labels{};
            s.sample = parse_sample(e["value"], cx, "a vector element's value");
            r.vector.push_back(std::move(s));
        }
    } else if (type == "matrix") {
        r.type = ResultType::Matrix;
        if (!result.is_array()) cx.bad("a matrix result is not an array");
        r.matrix.reserve(result.size());
        for (const auto& e : result) {
            if (!e.is_object()) cx.bad("a matrix series is not an object");
            if (!e.contains("values")) {
                if (e.contains("histograms")) continue;  // native histograms are not used
                cx.bad("a matrix series has no \"values\"");
            }
            if (!e["values"].is_array()) cx.bad("a matrix series' \"values\" is not an array");
            RangeSeries s;
            s.metric = e.contains("metric") ? parse_labels(e["metric"], cx) : Labels{};
            s.samples.reserve(e["values"].size());
            for (const auto& v : e["values"])
                s.samples.push_back(parse_sample(v, cx, "a matrix sample"));
            r.matrix.push_back(std::move(s));
        }
    } else if (type == "scalar") {
        r.type = ResultType::Scalar;
        r.scalar = parse_sample(result, cx, "a scalar result");
    } else if (type == "string") {
        r.type = ResultType::String;
        if (!result.is_array() || result.size() != 2 || !result[0].is_number() ||
            !result[1].is_string()) {
            cx.bad("a string result is not [time, \"text\"]");
        }
        r.scalar.time = result[0].get<double>();
        r.scalar.value = std::numeric_limits<double>::quiet_NaN();
        r.string_value = result[1].get<std::string>();
    } else {
        cx.bad("unknown resultType \"" + type + "\"");
    }
    return r;
}

}  // namespace phasescale::prom
