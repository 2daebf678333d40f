// The Prometheus answer parser (prom::parse_response) on any body: QueryError or a typed result.
#include <phasescale/prom/error.hpp>
#include <phasescale/prom/features.hpp>
#include <phasescale/prom/result.hpp>

#include <stdexcept>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

void check(const prom::QueryResult& result) {
    // The result is of its type, or the accessors (and the operator's readers of it) say so.
    try {
        (void)result.as_vector("q");
    } catch (const prom::QueryError&) {
    }
    try {
        (void)result.as_matrix("q");
    } catch (const prom::QueryError&) {
    }
    try {
        (void)prom::container_values(result);
    } catch (const prom::QueryError&) {
    }
    try {
        (void)prom::container_series(result);
    } catch (const prom::QueryError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string body = fuzz::text_of(data, size);
    try {
        check(prom::parse_response(body, "up", "http://prometheus:9090", 200));
    } catch (const prom::QueryError& e) {
        (void)prom::describe_without_reply(e);
    }
    // The same bytes as one sample value.
    try {
        (void)prom::parse_value(body);
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
