#include "phasescale/control/metrics_reader.hpp"

#include <map>
#include <mutex>

namespace phasescale::control {

namespace {

class PrometheusReader final : public MetricsReader {
public:
    explicit PrometheusReader(prom::ClientConfig defaults) : defaults_(std::move(defaults)) {}

    std::string default_url() const override { return defaults_.url; }

    prom::FeatureSnapshot features(const std::string& url, const prom::FeatureQueries& queries,
                                   const std::string& ns, std::chrono::milliseconds window,
                                   const prom::QueryOptions& options) override {
        return prom::read_features(client(url), queries, {ns}, window, std::nullopt, options);
    }

    prom::FeatureHistory history(const std::string& url, const prom::FeatureQueries& queries,
                                 const std::string& ns, std::chrono::milliseconds window,
                                 prom::TimePoint start, prom::TimePoint end,
                                 std::chrono::milliseconds step,
                                 const prom::QueryOptions& options) override {
        return prom::read_feature_history(client(url), queries, {ns}, window, start, end, step,
                                          options);
    }

private:
    // One client per server, made at its first use (a bad URL throws ConfigError each time).
    const prom::Client& client(const std::string& url) {
        std::lock_guard lock(mutex_);
        auto it = clients_.find(url);
        if (it != clients_.end()) return *it->second;
        prom::ClientConfig c = defaults_;
        if (!url.empty()) c.url = url;
        return *clients_.emplace(url, std::make_unique<prom::Client>(c)).first->second;
    }

    prom::ClientConfig defaults_;
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<prom::Client>> clients_;
};

}  // namespace

std::unique_ptr<MetricsReader> prometheus_reader(prom::ClientConfig defaults) {
    return std::make_unique<PrometheusReader>(std::move(defaults));
}

}  // namespace phasescale::control
