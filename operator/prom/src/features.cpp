#include "phasescale/prom/features.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <future>
#include <limits>

namespace phasescale::prom {

namespace {

constexpr std::string_view kNamespacePlaceholder = "{namespace}";
constexpr std::string_view kWindowPlaceholder = "{window}";

bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    std::size_t pos = 0;
    while ((pos = text.find(from, pos)) != std::string::npos) {
        text.replace(pos, from.size(), to);
        pos += to.size();
    }
    return text;
}

std::optional<ContainerKey> key_of(const Labels& metric) {
    auto ns = metric.find("namespace");
    auto pod = metric.find("pod");
    auto container = metric.find("container");
    if (ns == metric.end() || pod == metric.end() || container == metric.end()) return std::nullopt;
    return ContainerKey{ns->second, pod->second, container->second};
}

FeatureQueryFailure failure_of(const std::string& feature, const std::string& ns,
                               const std::exception& e) {
    FeatureQueryFailure f{feature, ns, describe_without_reply(e), false, {}};
    if (const auto* te = dynamic_cast<const TransportError*>(&e)) f.timed_out = te->timed_out();
    if (const auto* qe = dynamic_cast<const QueryError*>(&e)) {
        f.timed_out = qe->error_type() == "timeout";
        f.reply = qe->error_message();
    }
    return f;
}

}  // namespace

std::string promql_duration(std::chrono::milliseconds duration) {
    if (duration.count() <= 0) throw ConfigError("a PromQL duration must be positive");
    if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + "s";
    return std::to_string(duration.count()) + "ms";
}

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '"': out += "\\\""; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: out.push_back(c);
        }
    }
    return out;
}

// A placeholder is a name in braces, starting with a letter: {namespace}. PromQL's own braces
// hold label matchers ({a="b"}) and regex repeats ({2,3}), never a bare name.
void validate_template(std::string_view t) {
    if (t.find(kNamespacePlaceholder) == std::string_view::npos) {
        throw ConfigError(
            "feature query template must use {namespace} (one query per namespace): " +
            std::string(t));
    }
    for (std::size_t pos = t.find('{'); pos != std::string_view::npos; pos = t.find('{', pos + 1)) {
        if (pos + 1 >= t.size() || std::isalpha(static_cast<unsigned char>(t[pos + 1])) == 0)
            continue;
        std::size_t end = pos + 1;
        while (end < t.size() && name_char(t[end])) ++end;
        if (end < t.size() && std::string_view("=!~, \t\n").find(t[end]) != std::string_view::npos)
            continue;  // a matcher
        if (end == t.size() || t[end] != '}') {
            throw ConfigError("feature query template has an unclosed placeholder: " +
                              std::string(t));
        }
        const std::string_view name = t.substr(pos, end - pos + 1);
        if (name != kNamespacePlaceholder && name != kWindowPlaceholder) {
            throw ConfigError("feature query template has an unknown placeholder " +
                              std::string(name) +
                              " (known: {namespace}, {window}): " + std::string(t));
        }
    }
}

FeatureQueries::FeatureQueries()
    : queries_{{std::string(kCpuFeature), std::string(kDefaultCpuTemplate)},
               {std::string(kMemoryFeature), std::string(kDefaultMemoryTemplate)}} {}

FeatureQueries::FeatureQueries(std::vector<FeatureQuery> queries) {
    if (queries.empty()) throw ConfigError("no feature queries");
    for (auto& q : queries) set_template(q.feature, q.promql_template);
}

void FeatureQueries::set_template(std::string_view feature, std::string_view promql_template) {
    if (feature.empty()) throw ConfigError("a feature query needs a feature name");
    try {
        validate_template(promql_template);
    } catch (const ConfigError& e) {
        throw ConfigError("feature " + std::string(feature) + ": " + e.what());
    }
    for (auto& q : queries_) {
        if (q.feature == feature) {
            q.promql_template = promql_template;
            return;
        }
    }
    queries_.push_back({std::string(feature), std::string(promql_template)});
}

std::vector<std::string> FeatureQueries::features() const {
    std::vector<std::string> out;
    for (const auto& q : queries_) out.push_back(q.feature);
    return out;
}

std::string FeatureQueries::render(std::string_view feature, std::string_view ns,
                                   std::chrono::milliseconds window) const {
    for (const auto& q : queries_) {
        if (q.feature != feature) continue;
        std::string text =
            replace_all(q.promql_template, kWindowPlaceholder, promql_duration(window));
        return replace_all(std::move(text), kNamespacePlaceholder, escape_label_value(ns));
    }
    throw ConfigError("no query for feature " + std::string(feature));
}

std::map<ContainerKey, double> container_values(const QueryResult& result) {
    std::map<ContainerKey, double> out;
    for (const auto& s : result.as_vector()) {
        if (!std::isfinite(s.sample.value)) continue;
        if (auto key = key_of(s.metric)) out[std::move(*key)] = s.sample.value;
    }
    return out;
}

std::map<ContainerKey, std::vector<Sample>> container_series(const QueryResult& result) {
    std::map<ContainerKey, std::vector<Sample>> out;
    for (const auto& s : result.as_matrix()) {
        auto key = key_of(s.metric);
        if (!key) continue;
        auto& samples = out[std::move(*key)];
        for (const auto& sample : s.samples) {
            if (std::isfinite(sample.value)) samples.push_back(sample);
        }
    }
    return out;
}

FeatureSnapshot read_features(const Client& client, const FeatureQueries& queries,
                              const std::vector<std::string>& namespaces,
                              std::chrono::milliseconds window, std::optional<TimePoint> time,
                              const QueryOptions& options) {
    FeatureSnapshot snap;
    snap.features = queries.features();
    const std::size_t n = snap.features.size();
    // Every query at once (the client is thread-safe): a tick waits for the slowest answer, not
    // for the sum of them.
    struct Asked {
        std::string ns;
        std::size_t feature;
        std::future<QueryResult> answer;
    };
    std::vector<Asked> asked;
    for (const auto& ns : namespaces) {
        for (std::size_t f = 0; f < n; ++f) {
            const std::string promql = queries.render(snap.features[f], ns, window);
            asked.push_back(
                {ns, f, std::async(std::launch::async, [&client, promql, time, options] {
                     return client.query(promql, time, options);
                 })});
        }
    }
    for (Asked& a : asked) {
        ++snap.queries;
        try {
            for (auto& [key, value] : container_values(a.answer.get())) {
                if (key.ns != a.ns) continue;
                auto [it, added] = snap.values.try_emplace(key);
                if (added) it->second.assign(n, std::numeric_limits<double>::quiet_NaN());
                it->second[a.feature] = value;
            }
        } catch (const Error& e) {
            snap.failures.push_back(failure_of(snap.features[a.feature], a.ns, e));
        }
    }
    return snap;
}

FeatureHistory read_feature_history(const Client& client, const FeatureQueries& queries,
                                    const std::vector<std::string>& namespaces,
                                    std::chrono::milliseconds window, TimePoint start,
                                    TimePoint end, std::chrono::milliseconds step,
                                    const QueryOptions& options) {
    if (step <= std::chrono::milliseconds(0))
        throw ConfigError("range query step must be positive");
    FeatureHistory hist;
    hist.features = queries.features();
    const std::size_t n = hist.features.size();
    // Prometheus refuses more than 11,000 points per series in one answer: longer ranges are
    // asked in consecutive chunks.
    const auto chunk = step * (kMaxPointsPerQuery - 1);
    for (const auto& ns : namespaces) {
        for (std::size_t f = 0; f < n; ++f) {
            const std::string promql = queries.render(hist.features[f], ns, window);
            for (TimePoint from = start; from <= end; from += chunk + step) {
                const TimePoint to = std::min<TimePoint>(end, from + chunk);
                ++hist.queries;
                try {
                    for (auto& [key, samples] :
                         container_series(client.query_range(promql, from, to, step, options))) {
                        if (key.ns != ns) continue;
                        auto [it, added] = hist.series.try_emplace(key);
                        if (added) it->second.resize(n);
                        auto& all = it->second[f];
                        all.insert(all.end(), samples.begin(), samples.end());
                    }
                } catch (const Error& e) {
                    hist.failures.push_back(failure_of(hist.features[f], ns, e));
                    break;  // the rest of this feature's range would fail alike
                }
            }
        }
    }
    return hist;
}

}  // namespace phasescale::prom
