// The PromQL that reads the model's features for the operator: one query per feature and
// namespace, whatever the number of pods, each answering with one series per
// (namespace, pod, container).
//
// Templates may use two placeholders, the CRD's: {namespace} (replaced by the namespace, escaped
// for a PromQL string) and {window} (a PromQL duration, for irate() or rate(): the operator's is
// policy::rate_window). Every template must use {namespace}, so that its answer is the
// namespace's containers only.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phasescale/prom/client.hpp"
#include "phasescale/prom/result.hpp"

namespace phasescale::prom {

// The canonical feature names (the trace columns of model/README.md).
inline constexpr std::string_view kCpuFeature = "cpu.usage.cores";
inline constexpr std::string_view kMemoryFeature = "mem.working.set";
// Not a model feature: the share of CPU periods throttled at the CPU limit, which tells the
// policy that usage (capped at the limit) is less than the container wants.
inline constexpr std::string_view kThrottledFeature = "cpu.throttled.share";
// Nor this: the CPU-seconds per second the container was throttled for, summed over the CPUs
// whose run queues were throttled. Usage plus this is about its demand above the limit
// (policy::Sample::cpu_throttled_cores).
inline constexpr std::string_view kThrottledCoresFeature = "cpu.throttled.cores";

// CPU cores used over the latest scrape interval (irate(): the last two scrapes within the
// window). A rate over the whole window would average a container's bursts away: at the
// operator's tick, the policy then met 89.2% of CPU demand on AI4DL's sample.csv and 93.2% on
// generated jobs, 94.1% and 95% with a scrape interval's (measured with CPU down to a quarter per
// resize, before cpu_keep 0.5; docs/savings.md). It is also what the phase model was trained on,
// one trace sample's usage.
inline constexpr std::string_view kDefaultCpuTemplate =
    R"(sum by (namespace, pod, container) (irate(container_cpu_usage_seconds_total{)"
    R"(namespace="{namespace}", container!="", container!="POD"}[{window}])))";
// Working-set bytes now.
inline constexpr std::string_view kDefaultMemoryTemplate =
    R"(max by (namespace, pod, container) (container_memory_working_set_bytes{)"
    R"(namespace="{namespace}", container!="", container!="POD"}))";
// Throttled CFS periods over all CFS periods, over the latest scrape interval as the CPU usage
// (cAdvisor's counters, kept only for a container with a CPU limit; none without one).
inline constexpr std::string_view kDefaultThrottledTemplate =
    R"(sum by (namespace, pod, container) (irate(container_cpu_cfs_throttled_periods_total{)"
    R"(namespace="{namespace}", container!="", container!="POD"}[{window}])) / )"
    R"(sum by (namespace, pod, container) (irate(container_cpu_cfs_periods_total{)"
    R"(namespace="{namespace}", container!="", container!="POD"}[{window}])))";
// Throttled seconds per second, over the latest scrape interval as the CPU usage (the same
// counters' sum of throttled time).
inline constexpr std::string_view kDefaultThrottledCoresTemplate =
    R"(sum by (namespace, pod, container) (irate(container_cpu_cfs_throttled_seconds_total{)"
    R"(namespace="{namespace}", container!="", container!="POD"}[{window}])))";

// A PromQL duration: "60s", "1500ms" (whole seconds when exact). Throws ConfigError if not > 0.
std::string promql_duration(std::chrono::milliseconds duration);

// Escapes text for a double-quoted PromQL string or label value (\\, \", \n, \r, \t).
std::string escape_label_value(std::string_view value);

struct FeatureQuery {
    std::string feature;
    std::string promql_template;
};

class FeatureQueries {
public:
    // The defaults: kCpuFeature and kMemoryFeature, in that order (the operator adds
    // kThrottledFeature and kThrottledCoresFeature; a trace or a model has no use for them).
    FeatureQueries();
    // Throws ConfigError for an empty list, a duplicate feature or a bad template.
    explicit FeatureQueries(std::vector<FeatureQuery> queries);

    // Replaces the template of `feature`, or appends the feature. Throws ConfigError for a bad
    // template (unknown placeholder, no {namespace}).
    void set_template(std::string_view feature, std::string_view promql_template);

    const std::vector<FeatureQuery>& queries() const { return queries_; }
    std::vector<std::string> features() const;

    // The query of one feature for one namespace. Throws ConfigError for an unknown feature.
    std::string render(std::string_view feature, std::string_view ns,
                       std::chrono::milliseconds window) const;

private:
    std::vector<FeatureQuery> queries_;
};

// Throws ConfigError naming the problem if `promql_template` is not usable.
void validate_template(std::string_view promql_template);

struct ContainerKey {
    std::string ns;
    std::string pod;
    std::string container;
    auto operator<=>(const ContainerKey&) const = default;
};

// An instant vector's values by (namespace, pod, container). Series without these three labels,
// and values that are not finite, are left out. Throws QueryError if the result is not a vector.
std::map<ContainerKey, double> container_values(const QueryResult& result);
// A matrix's series by (namespace, pod, container), non-finite samples left out.
std::map<ContainerKey, std::vector<Sample>> container_series(const QueryResult& result);

// One feature query that failed, with the error's message; the others still count.
struct FeatureQueryFailure {
    std::string feature;
    std::string ns;
    std::string message;  // without the text of the reply (describe_without_reply)
    bool timed_out = false;
    std::string reply;  // the reply's own message, if any: for debug logs only
};

// The features of every container found in the namespaces, at one time.
struct FeatureSnapshot {
    std::vector<std::string> features;                   // the column order
    std::map<ContainerKey, std::vector<double>> values;  // NaN: no value for that feature
    std::vector<FeatureQueryFailure> failures;
    std::size_t queries = 0;  // requests made
};

// Runs queries.features() x namespaces instant queries. Series of another namespace than the one
// asked are dropped. A failed query is recorded, not thrown.
FeatureSnapshot read_features(const Client& client, const FeatureQueries& queries,
                              const std::vector<std::string>& namespaces,
                              std::chrono::milliseconds window, std::optional<TimePoint> time = {},
                              const QueryOptions& options = {});

// The same features as range queries over [start, end] every `step` (to rebuild a container's
// recent history after a restart, or to export a trace): per container, one series per feature
// (empty if none). A range of more than kMaxPointsPerQuery steps is asked in chunks, each
// counted in `queries`.
inline constexpr long kMaxPointsPerQuery = 10'000;  // Prometheus allows 11,000
struct FeatureHistory {
    std::vector<std::string> features;
    std::map<ContainerKey, std::vector<std::vector<Sample>>> series;
    std::vector<FeatureQueryFailure> failures;
    std::size_t queries = 0;
};

FeatureHistory read_feature_history(const Client& client, const FeatureQueries& queries,
                                    const std::vector<std::string>& namespaces,
                                    std::chrono::milliseconds window, TimePoint start,
                                    TimePoint end, std::chrono::milliseconds step,
                                    const QueryOptions& options = {});

}  // namespace phasescale::prom
