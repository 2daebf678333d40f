// vpa_reference_compare TRACE.csv REFERENCE.csv
//
// Replays TRACE through policy::VpaRecommender (default VpaOptions, a fresh recommender per
// execution, as `phasescale simulate --policy vpa` makes one) and compares its request after
// every sample with the target the real VPA recommender gave after the same sample (REFERENCE,
// the output of the Go harness in this folder), and likewise its lower and upper bounds (what
// `vpa-updater` acts on). The target is the estimator chain's percentile, safety margin and
// minimum resources; the bounds add the confidence multipliers. A difference is measured in
// histogram buckets:
// |ours - real| over the width of the bucket that holds the real value. Exit status 1 when any
// sample differs by more than one bucket (or the files do not line up), 0 otherwise.
//
// The request our recommender is told was in force follows its own recommendation, as in a
// replay (starting at kInitialRequest): the real VPA's model takes no request with a sample,
// so a recommendation that depended on it would show here.

#include <phasescale/model/error.hpp>
#include <phasescale/model/trace.hpp>
#include <phasescale/policy/vpa.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

using phasescale::model::InputError;
namespace model = phasescale::model;
namespace policy = phasescale::policy;

// The request in force before the first recommendation.
constexpr policy::Amount kInitialRequest{1.0, 1024.0 * 1024 * 1024};
// Disagreements printed in full, per trace.
constexpr int kShown = 10;

double bucket_width(const policy::ExponentialBuckets& buckets, double value) {
    const int b = buckets.find(value);
    if (b + 1 < buckets.count()) return buckets.start(b + 1) - buckets.start(b);
    return buckets.start(b) - buckets.start(b - 1);
}

double buckets_apart(const policy::ExponentialBuckets& buckets, double ours, double real) {
    return std::abs(ours - real) / bucket_width(buckets, real);
}

struct Tally {
    double max_buckets = 0;
    std::size_t equal = 0;       // within 1e-9 relative
    std::size_t within_one = 0;  // more than equal, at most one bucket apart
    std::size_t beyond_one = 0;  // more than one bucket apart
    void add(double ours, double real, double buckets) {
        max_buckets = std::max(max_buckets, buckets);
        if (std::abs(ours - real) <= 1e-9 * std::max(1.0, std::abs(real)))
            ++equal;
        else if (buckets <= 1)
            ++within_one;
        else
            ++beyond_one;
    }
};

int compare(const std::string& trace_path, const std::string& reference_path) {
    const model::Trace trace =
        model::read_trace({trace_path}, {.columns = {"cpu.usage.cores", "mem.working.set"}});
    const model::Trace reference = model::read_trace(
        {reference_path},
        {.columns = {"cpu_target_cores", "memory_target_bytes", "cpu_lower_cores",
                     "memory_lower_bytes", "cpu_upper_cores", "memory_upper_bytes"}});
    if (trace.executions.size() != reference.executions.size())
        throw InputError(reference_path + ": " + std::to_string(reference.executions.size()) +
                         " executions, " + trace_path + " has " +
                         std::to_string(trace.executions.size()));

    // Target, lower bound, upper bound; CPU then memory.
    constexpr int kValues = 6;
    const char* const names[kValues] = {"cpu",          "memory",    "cpu lower",
                                        "memory lower", "cpu upper", "memory upper"};
    Tally tallies[kValues];
    std::size_t samples = 0;
    int shown = 0;
    for (std::size_t e = 0; e < trace.executions.size(); ++e) {
        const model::Execution& ex = trace.executions[e];
        const model::Execution& ref = reference.executions[e];
        if (ex.id != ref.id || ex.timestamps.size() != ref.timestamps.size())
            throw InputError(reference_path + ": execution " + std::to_string(e + 1) + " is " +
                             ref.id + " with " + std::to_string(ref.timestamps.size()) +
                             " samples, " + trace_path + " has " + ex.id + " with " +
                             std::to_string(ex.timestamps.size()));

        policy::VpaRecommender vpa;  // the upstream defaults
        policy::Amount request = kInitialRequest;
        for (std::size_t t = 0; t < ex.timestamps.size(); ++t) {
            const auto row = static_cast<Eigen::Index>(t);
            if (ex.timestamps[t] != ref.timestamps[t])
                throw InputError(reference_path + ":" + std::to_string(ref.lines[t]) +
                                 ": timestamp " + std::to_string(ref.timestamps[t]) +
                                 ", the trace's sample has " + std::to_string(ex.timestamps[t]));
            policy::Sample s;
            s.timestamp = ex.timestamps[t];
            s.usage = {ex.values(row, 0), ex.values(row, 1)};
            s.allocated = request;
            vpa.observe(s);
            const auto recommendation = vpa.recommend(nullptr);
            const auto bounded = vpa.recommendation();
            if (!recommendation || !bounded)
                throw InputError(trace_path + ":" + std::to_string(ex.lines[t]) +
                                 ": no recommendation after the sample");
            request = recommendation->request;

            const double ours[kValues] = {request.cpu,
                                          request.memory,
                                          bounded->lower_bound.cpu,
                                          bounded->lower_bound.memory,
                                          bounded->upper_bound.cpu,
                                          bounded->upper_bound.memory};
            bool differ = false;
            for (int v = 0; v < kValues; ++v) {
                const double real = ref.values(row, v);
                const auto& buckets =
                    v % 2 == 0 ? policy::vpa_cpu_buckets() : policy::vpa_memory_buckets();
                const double apart = buckets_apart(buckets, ours[v], real);
                tallies[v].add(ours[v], real, apart);
                if (apart > 1) {
                    differ = true;
                    if (shown < kShown)
                        std::printf(
                            "DIFFER %s line %zu (t=%.0f): %s ours %.6g real %.6g (%.2f "
                            "buckets)\n",
                            ex.id.c_str(), ex.lines[t], s.timestamp, names[v], ours[v], real,
                            apart);
                }
            }
            shown += differ;
            ++samples;
        }
    }

    std::printf("%s: %zu executions, %zu samples compared with the real VPA\n", trace_path.c_str(),
                trace.executions.size(), samples);
    const auto report = [](const char* name, const Tally& t) {
        std::printf(
            "  %-12s equal %zu, within one bucket %zu, beyond one bucket %zu; max difference %.3f "
            "buckets\n",
            name, t.equal, t.within_one, t.beyond_one, t.max_buckets);
    };
    bool agree = true;
    for (int v = 0; v < kValues; ++v) {
        report(names[v], tallies[v]);
        agree = agree && tallies[v].beyond_one == 0;
    }
    std::printf("%s\n", agree ? "AGREE: every sample within one bucket"
                              : "DISAGREE: some samples beyond one bucket");
    return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: vpa_reference_compare TRACE.csv REFERENCE.csv\n");
        return 2;
    }
    try {
        return compare(argv[1], argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vpa_reference_compare: %s\n", e.what());
        return 2;
    }
}
