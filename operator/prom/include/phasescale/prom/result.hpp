// Query results of the Prometheus HTTP API (/api/v1/query, /api/v1/query_range), typed, and the
// parser of its JSON answers. Sample values keep Prometheus' special values: "NaN" is a quiet NaN,
// "+Inf" and "-Inf" are infinities.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace phasescale::prom {

using Labels = std::map<std::string, std::string>;

struct Sample {
    double time = 0;  // unix seconds (millisecond resolution)
    double value = 0;
};

// One element of an instant vector.
struct InstantSeries {
    Labels metric;
    Sample sample;
};

// One series of a range matrix, samples in time order.
struct RangeSeries {
    Labels metric;
    std::vector<Sample> samples;
};

enum class ResultType { Vector, Matrix, Scalar, String };
const char* to_string(ResultType type);

struct QueryResult {
    ResultType type = ResultType::Vector;
    std::vector<InstantSeries> vector;  // type Vector
    std::vector<RangeSeries> matrix;    // type Matrix
    Sample scalar;                      // type Scalar; the time of a String too
    std::string string_value;           // type String
    std::vector<std::string> warnings;  // the server's warnings, if any

    // The vector or matrix; throw QueryError("bad_response") naming `query` if the type differs.
    const std::vector<InstantSeries>& as_vector(std::string_view query = {}) const;
    const std::vector<RangeSeries>& as_matrix(std::string_view query = {}) const;
};

// Parses a whole API answer. A "success" answer gives its result; an "error" answer, or anything
// that is not a well-formed answer, throws QueryError carrying `query`, `url` and `http_status`
// (error_type "bad_response" for a malformed one). Native histogram samples are skipped.
QueryResult parse_response(std::string_view body, std::string_view query = {},
                           std::string_view url = {}, int http_status = 0);

// A sample value as Prometheus writes it: a decimal number, "NaN", "+Inf", "-Inf".
// Throws std::invalid_argument for anything else.
double parse_value(std::string_view text);

}  // namespace phasescale::prom
