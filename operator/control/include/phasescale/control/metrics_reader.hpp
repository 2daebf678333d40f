// What the control loop reads from Prometheus: a namespace's features now, and a short history
// to warm up restarted trackers. Narrow, so that unit tests drive Reconciler::tick with made-up
// answers; the operator uses prometheus_reader().
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <phasescale/prom/client.hpp>
#include <phasescale/prom/features.hpp>

namespace phasescale::control {

class MetricsReader {
public:
    virtual ~MetricsReader() = default;

    // The operator's own Prometheus: what a spec's empty prometheus.url means.
    virtual std::string default_url() const = 0;
    // Failed queries are in the snapshot's failures; throws only for a server that cannot be
    // asked at all (a bad URL).
    virtual prom::FeatureSnapshot features(const std::string& url,
                                           const prom::FeatureQueries& queries,
                                           const std::string& ns, std::chrono::milliseconds window,
                                           const prom::QueryOptions& options) = 0;
    // Throws when the range queries fail.
    virtual prom::FeatureHistory history(const std::string& url,
                                         const prom::FeatureQueries& queries, const std::string& ns,
                                         std::chrono::milliseconds window, prom::TimePoint start,
                                         prom::TimePoint end, std::chrono::milliseconds step,
                                         const prom::QueryOptions& options) = 0;
};

// Prometheus servers: `defaults` for the operator's own ("" URL), and a client of the same
// settings for each other URL a spec names (its queries wait at most `defaults.timeout`).
std::unique_ptr<MetricsReader> prometheus_reader(prom::ClientConfig defaults);

}  // namespace phasescale::control
