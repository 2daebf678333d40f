// Agreement of inferred phases with true ones: the phases file, the labelling rule, AMI, changes.

#include <phasescale/model/error.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/sim/agreement.hpp>

#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace phasescale::sim;
using Catch::Matchers::Contains;
using phasescale::model::InputError;
using phasescale::testing::TempDir;

namespace {

using Labels = std::vector<int>;

Labels random_labels(phasescale::model::Random& random, std::size_t n, int k) {
    Labels labels(n);
    for (int& label : labels) label = static_cast<int>(random.below(static_cast<std::uint64_t>(k)));
    return labels;
}

std::vector<std::string> names_of(const Labels& labels, const PhaseIds& ids) {
    std::vector<std::string> names;
    for (int label : labels) {
        names.push_back(label < 0 ? "-" : ids.labels().at(static_cast<std::size_t>(label)));
    }
    return names;
}

// The mutual information of `a` and `b` normalised by their mean entropy, not adjusted for
// chance: what AMI would be without the expected mutual information.
double unadjusted(const Labels& a, const Labels& b, int k) {
    const double n = static_cast<double>(a.size());
    std::vector<double> joint(static_cast<std::size_t>(k * k)), pa(static_cast<std::size_t>(k)),
        pb(static_cast<std::size_t>(k));
    for (std::size_t i = 0; i < a.size(); ++i) {
        joint[static_cast<std::size_t>(a[i] * k + b[i])] += 1 / n;
        pa[static_cast<std::size_t>(a[i])] += 1 / n;
        pb[static_cast<std::size_t>(b[i])] += 1 / n;
    }
    double mi = 0, ha = 0, hb = 0;
    for (int i = 0; i < k; ++i) {
        ha -= pa[i] > 0 ? pa[i] * std::log(pa[i]) : 0;
        hb -= pb[i] > 0 ? pb[i] * std::log(pb[i]) : 0;
        for (int j = 0; j < k; ++j) {
            double p = joint[static_cast<std::size_t>(i * k + j)];
            if (p > 0) mi += p * std::log(p / (pa[i] * pb[j]));
        }
    }
    return mi / ((ha + hb) / 2);
}

}  // namespace

TEST_CASE("AMI of a labeling with itself is 1 under any relabelling", "[agreement]") {
    const Labels a = {0, 0, 1, 1, 2, 2, 2, 1, 0, 3};
    const Labels relabelled = {7, 7, 3, 3, 9, 9, 9, 3, 7, 0};
    CHECK(adjusted_mutual_information(a, a) == Approx(1.0));
    CHECK(adjusted_mutual_information(a, relabelled) == Approx(1.0));
    CHECK(adjusted_mutual_information(relabelled, a) == Approx(1.0));
    CHECK(adjusted_mutual_information(Labels{1, 1, 2, 2}, Labels{2, 2, 3, 3}) == Approx(1.0));
    // Nothing split on either side is a perfect match too.
    CHECK(adjusted_mutual_information(Labels{4, 4, 4}, Labels{0, 0, 0}) == 1.0);
}

TEST_CASE("AMI of independent random labelings is near 0, where unadjusted MI is not",
          "[agreement]") {
    phasescale::model::Random random(42);
    // 10 clusters over 200 samples: chance alone gives a normalised MI near 0.09.
    double sum = 0, unadjusted_sum = 0;
    const int runs = 20;
    for (int r = 0; r < runs; ++r) {
        Labels a = random_labels(random, 200, 10);
        Labels b = random_labels(random, 200, 10);
        double ami = adjusted_mutual_information(a, b);
        CHECK(std::abs(ami) < 0.06);
        sum += ami;
        unadjusted_sum += unadjusted(a, b, 10);
    }
    CHECK(std::abs(sum / runs) < 0.01);
    CHECK(unadjusted_sum / runs > 0.05);
}

TEST_CASE("AMI matches values worked out by hand and published ones", "[agreement]") {
    // Worked out exactly: N = 4, every marginal 2, every cell 1, so MI = 0. A cell holds 2 with
    // hypergeometric probability 1/6 and then adds (2/4) log 2 to MI, 1 adds nothing, so
    // E[MI] = 4 * (1/6) * (1/2) log 2 = (log 2) / 3; both entropies are log 2, and
    // AMI = (0 - log2/3) / (log2 - log2/3) = -1/2.
    CHECK(adjusted_mutual_information(Labels{0, 0, 1, 1}, Labels{0, 1, 0, 1}) == Approx(-0.5));
    // Every class split across all clusters: no information, AMI 0 (scikit-learn's docs).
    CHECK(adjusted_mutual_information(Labels{0, 0, 0, 0}, Labels{0, 1, 2, 3}) ==
          Approx(0.0).margin(1e-12));
    // scikit-learn's test_adjusted_mutual_info_score: 0.27821 to five decimals.
    const Labels a = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3};
    const Labels b = {1, 1, 1, 1, 2, 1, 2, 2, 2, 2, 3, 1, 3, 3, 3, 2, 2};
    CHECK(adjusted_mutual_information(a, b) == Approx(0.27821).margin(5e-6));
    CHECK(adjusted_mutual_information(b, a) == Approx(0.27821).margin(5e-6));
}

TEST_CASE("AMI ignores unlabelled positions", "[agreement]") {
    // The last two positions disagree, but each has a -1 on one side.
    CHECK(adjusted_mutual_information(Labels{0, 0, 1, 1, -1, 2}, Labels{5, 5, 6, 6, 0, -1}) ==
          Approx(1.0));
    CHECK(adjusted_mutual_information(Labels{0, 0, 1, 1, 1, 0}, Labels{0, 1, 0, 1, -1, -1}) ==
          Approx(-0.5));
    CHECK(std::isnan(adjusted_mutual_information(Labels{-1, 0}, Labels{1, -1})));
    CHECK_THROWS_AS(adjusted_mutual_information(Labels{0, 1}, Labels{0}), std::invalid_argument);
}

TEST_CASE("label changes are counted between consecutive labelled samples", "[agreement]") {
    const Labels labels = {-1, 0, 0, 1, -1, 1, 2, 2, 0};
    CHECK(label_changes(labels) == 3);  // 0->1, 1->2, 2->0; the -1 between the 1s is no change
    CHECK(label_changes(Labels{}) == 0);
    CHECK(label_changes(Labels{-1, -1}) == 0);
    CHECK(label_changes(Labels{3, 3, 3}) == 0);

    // Nine samples 2 s apart cover 18 s: 3 changes in 18 s is 600 an hour.
    const std::vector<double> times = {0, 2, 4, 6, 8, 10, 12, 14, 16};
    CHECK(covered_seconds(times) == 18);
    CHECK(changes_per_hour(labels, times) == Approx(600));
    CHECK(std::isnan(changes_per_hour(Labels{0}, std::vector<double>{5})));
    CHECK_THROWS_AS(changes_per_hour(labels, std::vector<double>{0, 2}), std::invalid_argument);
}

TEST_CASE("a sample gets the phase active in the middle of its interval", "[agreement]") {
    TempDir dir;
    const std::string rows =
        "100.0,import,\n"
        "103.5,train,1\n"
        "104.2,val,1\n"
        "105.0,train,2\n"
        "108.0,ckpt,2\n";
    for (const std::string& header : {std::string("unix_time,phase,epoch\n"), std::string()}) {
        INFO("header: " << header);
        PhaseLog log = read_phase_log(dir.write("run.phases.csv", header + rows));
        CHECK(log.times == std::vector<double>{100.0, 103.5, 104.2, 105.0, 108.0});
        CHECK(log.epochs == std::vector<int>{-1, 1, 1, 2, 2});

        PhaseIds ids;
        // 100: the first sample takes the next interval (2 s), so its middle, 99, is before any
        // phase. 105: 1 s after 104, middle 104.5, in val. 106: middle 105.0, the moment train 2
        // starts. 109: 3 s interval, middle 107.5, still train (at t - 1 s it would be ckpt).
        const std::vector<double> times = {100, 102, 104, 105, 106, 109};
        Labels labels = label_samples(log, times, ids);
        CHECK(names_of(labels, ids) ==
              std::vector<std::string>{"-", "import", "import", "val", "train", "train"});
        // The same label for both visits of a phase, and ids shared with later executions.
        CHECK(labels[4] == labels[5]);
        // A lone sample has no interval: the phase at its own time, train (not import as above).
        CHECK(label_samples(log, std::vector<double>{104}, ids) == Labels{labels[4]});
        CHECK_THROWS_AS(label_samples(log, std::vector<double>{104, 103}, ids),
                        std::invalid_argument);
    }
}

TEST_CASE("the torch runs' phases files read without a header", "[agreement]") {
    PhaseLog log = read_phase_log("../shared/data/torch/extra/dev01-mlp.phases.csv");
    REQUIRE(log.phases.size() == 36);
    CHECK(log.phases.front() == "start");
    CHECK(log.phases.back() == "end");
    CHECK(log.phases[5] == "train");
    CHECK(log.epochs[5] == 1);
}

TEST_CASE("a bad phases file is an error naming the file and line", "[agreement]") {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "bad.phases.csv: no phases"},
        {"unix_time,phase,epoch\n", "bad.phases.csv: no phases"},
        {"time,phase\n1,a,\n", "bad.phases.csv:1: bad header \"time,phase\""},
        {"1,a,\n2,b\n", "bad.phases.csv:2: expected 3 fields"},
        {"1,a,\n2,b,3,4\n", "bad.phases.csv:2: expected 3 fields"},
        {"1,a,\nsoon,b,\n", "bad.phases.csv:2: bad time \"soon\""},
        {"unix_time,phase,epoch\nunix_time,phase,epoch\n", "bad.phases.csv:2: bad time"},
        {"1,a,\n2,b,x\n", "bad.phases.csv:2: bad epoch \"x\""},
        {"1,a,\n2,b,-3\n", "bad.phases.csv:2: bad epoch \"-3\""},
        {"1,a,\n2,,1\n", "bad.phases.csv:2: empty phase"},
        {"1,a,\n\n5,b,\n4,c,\n", "bad.phases.csv:4: time 4 is before the previous row's"},
    };
    for (const auto& [text, message] : cases) {
        INFO(text);
        const std::string path = dir.write("bad.phases.csv", text);
        CHECK_THROWS_WITH(read_phase_log(path), Contains(message));
    }
    CHECK_THROWS_AS(read_phase_log(dir / "absent.phases.csv"), InputError);
    CHECK_THROWS_WITH(read_phase_log(dir / "absent.phases.csv"), Contains("absent.phases.csv"));
}
