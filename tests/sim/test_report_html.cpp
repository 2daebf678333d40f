#include <phasescale/model/random.hpp>
#include <phasescale/sim/experiment.hpp>
#include <phasescale/sim/report.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fixtures.hpp"

using namespace phasescale;
using namespace phasescale::sim;
using phasescale::testing::GiB;
using phasescale::testing::two_phase_model;

namespace {

// Phases alternate every 20 samples: CPU 0.5 (phase 0) then 1.5 (phase 1), memory following.
model::Execution alternating(const std::string& id, std::uint64_t seed, std::size_t samples = 120) {
    model::Random random(seed);
    model::Execution e;
    e.id = id;
    e.source = "test";
    e.values.resize(static_cast<Eigen::Index>(samples), 4);
    for (std::size_t t = 0; t < samples; ++t) {
        const bool busy = (t / 20) % 2 == 1;
        const double cpu = (busy ? 1.5 : 0.5) * (1 + 0.1 * random.normal());
        const double memory = (busy ? 3 : 1) * GiB * (1 + 0.02 * random.normal());
        e.timestamps.push_back(1000 + 15.0 * static_cast<double>(t));
        e.values.row(static_cast<Eigen::Index>(t)) << cpu, memory, 4, 8 * GiB;
    }
    return e;
}

model::Trace trace_of(std::size_t executions, std::size_t samples = 120) {
    model::Trace trace;
    trace.columns = {"cpu.usage.cores", "mem.working.set", "cpu.num.cores", "mem.limit"};
    for (std::size_t i = 0; i < executions; ++i) {
        // One execution's id needs escaping.
        const std::string id = i == 1 ? "job<1>&\"x\"" : "job" + std::to_string(i);
        trace.executions.push_back(alternating(id, i + 1, samples));
    }
    return trace;
}

Report experiment(std::size_t executions, int folds, std::size_t samples = 120,
                  std::vector<std::string> policies = kPolicies) {
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    ExperimentOptions o;
    o.folds = folds;
    o.target_fulfilment = 0.95;
    o.policies = std::move(policies);
    o.settings.vpa.memory_interval_s = 300;
    return run_experiment(
        trace_of(executions, samples), [&](const std::vector<std::size_t>&) { return model; }, o);
}

// The experiment where every execution starts from (and `static` keeps) `start`.
Report experiment_from(policy::Amount start, std::vector<std::string> policies,
                       std::size_t executions = 3) {
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    ExperimentOptions o;
    o.policies = std::move(policies);
    o.static_allocation = start;
    o.settings.vpa.memory_interval_s = 300;
    return run_experiment(
        trace_of(executions), [&](const std::vector<std::size_t>&) { return model; }, o);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + what.size()))
        ++n;
    return n;
}

std::string percent(double share) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
    return buffer;
}

std::string two_decimals(double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", x);
    return buffer;
}

// The text of each cell of the table row that starts at `marker`.
std::vector<std::string> row_cells(const std::string& html, const std::string& marker) {
    std::vector<std::string> cells;
    const std::size_t at = html.find(marker);
    if (at == std::string::npos) return cells;
    const std::size_t end = html.find("</tr>", at);
    for (std::size_t td = html.find("<td", at); td < end; td = html.find("<td", td + 1)) {
        const std::size_t open = html.find('>', td) + 1;
        cells.push_back(html.substr(open, html.find("</td>", open) - open));
    }
    return cells;
}

// As HTML text: the ids here need only these.
std::string escaped(const std::string& s) {
    std::string out;
    for (const char c : s)
        out += c == '&'   ? "&amp;"
               : c == '<' ? "&lt;"
               : c == '>' ? "&gt;"
               : c == '"' ? "&quot;"
                          : std::string(1, c);
    return out;
}

// The top of the value axis of the plot labelled `label`.
double axis_max(const std::string& html, const std::string& label) {
    const std::string key = "aria-label=\"" + escaped(label) + "\" data-y-max=\"";
    const std::size_t at = html.find(key);
    if (at == std::string::npos) return std::nan("");
    return std::stod(html.substr(at + key.size()));
}

std::size_t kills(const Report& r, const std::string& policy, std::size_t containers) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < containers && i < r.containers.size(); ++i)
        if (const auto it = r.containers[i].replays.find(policy);
            it != r.containers[i].replays.end())
            n += it->second.oom_kills.size();
    return n;
}

}  // namespace

TEST_CASE("the HTML report is one self-contained page with every section", "[report]") {
    const Report r = experiment(8, 2);
    REQUIRE(r.containers.size() == 8);
    const std::string html = report_html(r);

    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("</html>") != std::string::npos);
    // Nothing is fetched from anywhere.
    CHECK(html.find("http") == std::string::npos);
    CHECK(html.find("<script src") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);

    for (const std::string& name : kPolicies) {
        INFO(name);
        CHECK(html.find("data-policy=\"" + name + "\"") != std::string::npos);
        CHECK(html.find(">" + name) != std::string::npos);
    }

    // Two trade-off charts, CPU and memory over time for the first 6 executions, two box plots.
    CHECK(occurrences(html, "<svg") == 2 + 2 * 6 + 2);
    CHECK(occurrences(html, "<svg") == occurrences(html, "</svg>"));

    // Every id from the data is escaped.
    const std::string& id = r.containers[0].container.id == "job<1>&\"x\""
                                ? r.containers[0].container.id
                                : r.containers[1].container.id;
    CHECK(html.find("job<1>") == std::string::npos);
    bool shown = false;
    for (std::size_t i = 0; i < 6; ++i) shown = shown || r.containers[i].container.id == id;
    if (shown) CHECK(html.find("job&lt;1&gt;&amp;&quot;x&quot;") != std::string::npos);

    // The summary numbers: the reductions against vpa and the fulfilment.
    const double cpu = r.reduction("phase", "vpa", "cpu"),
                 memory = r.reduction("phase", "vpa", "memory");
    REQUIRE(std::isfinite(cpu));
    CHECK(html.find(">" + percent(cpu) + "<") != std::string::npos);
    CHECK(html.find(">" + percent(memory) + "<") != std::string::npos);
    CHECK(html.find(percent(r.results.at("phase").score.cpu.fulfilment())) != std::string::npos);
    CHECK(html.find(percent(r.reduction("window", "vpa-warm", "memory"))) != std::string::npos);
    // The headline names the setting.
    CHECK(html.find("8 held-out executions") != std::string::npos);
    CHECK(html.find("2 folds") != std::string::npos);
    CHECK(html.find("95% CPU fulfilment") != std::string::npos);
    CHECK(html.find("the others' to the fulfilment and OOM kills phase reached") !=
          std::string::npos);
    CHECK(html.find("phase replaying each with a model trained without it") != std::string::npos);
}

TEST_CASE("the HTML report is deterministic and escapes ids wherever they appear", "[report]") {
    const Report r = experiment(4, 2);
    const std::string a = report_html(r), b = report_html(r);
    CHECK(a == b);
    // All 4 executions are drawn; the odd id is among them.
    CHECK(a.find("job&lt;1&gt;&amp;&quot;x&quot;") != std::string::npos);
    CHECK(a.find("job<1>") == std::string::npos);
    CHECK(occurrences(a, "<svg") == 2 + 2 * 4 + 2);
}

TEST_CASE("long series are downsampled for the HTML report", "[report]") {
    // 6000 samples a container: each line keeps at most 1500 points.
    const Report r = experiment(2, 2, 6000, {"window", "phase", "perfect"});
    const std::string html = report_html(r);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(occurrences(html, "<svg") == 2 + 2 * 2 + 2);
    // Every line and area is a step path: at most one horizontal segment per point (and one to the
    // end).
    std::size_t paths = 0, longest = 0;
    for (std::size_t at = html.find("<path d=\""); at != std::string::npos;
         at = html.find("<path d=\"", at + 1)) {
        const std::size_t end = html.find('"', at + 9);
        const std::string d = html.substr(at + 9, end - at - 9);
        longest = std::max<std::size_t>(
            longest, static_cast<std::size_t>(std::count(d.begin(), d.end(), 'H')));
        ++paths;
    }
    CHECK(paths == 2 * 2 * (1 + 3));  // containers x resources x (usage + policies)
    CHECK(longest > 100);
    CHECK(longest <= 1500 + 1);
    CHECK(html.size() < 2'000'000);
}

TEST_CASE("the HTML report copes with missing policies, statistics and data", "[report]") {
    SECTION("no vpa and no phase: absolute trade-off axes, no headline numbers") {
        auto model = std::make_shared<model::PhaseModel>(two_phase_model());
        model->statistics.reset();
        ExperimentOptions o;
        o.policies = {"window", "perfect"};
        o.target_fulfilment = 0;
        const std::shared_ptr<const model::PhaseModel> fixed = model;
        const Report r = run_experiment(
            trace_of(3), [&](const std::vector<std::size_t>&) { return fixed; }, o);
        const std::string html = report_html(r);
        CHECK(html.find("core-hours") != std::string::npos);
        CHECK(html.find("no phase statistics") != std::string::npos);
        CHECK(html.find("not calibrated") != std::string::npos);
        CHECK(occurrences(html, "<svg") == 2 + 2 * 3 + 2);
    }
    SECTION("an empty report") {
        const Report empty;
        const std::string html = report_html(empty);
        CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
        CHECK(html.find("</html>") != std::string::npos);
    }
}

TEST_CASE("the HTML report leads with each policy's risk", "[report]") {
    // Starting at 1.5 GiB, under the busy phases' 3 GiB: `static` is OOM-killed, and the causal
    // policies until they learn.
    const Report r =
        experiment_from({1, 1.5 * GiB}, {"static", "vpa", "window", "krr", "phase", "perfect"}, 4);
    const std::string html = report_html(r);
    REQUIRE(r.results.at("static").score.oom_kills > 0);

    // Before the savings tables, and the OOM kills card before the savings cards.
    const std::size_t risk = html.find("<table class=\"risk\"");
    REQUIRE(risk != std::string::npos);
    CHECK(risk < html.find("<table class=\"summary\""));
    CHECK(risk < html.find("<h2>Trade-off"));
    CHECK(html.find("OOM kills, phase / vpa") < html.find("less CPU than vpa"));
    CHECK(html.find("OOM events") == std::string::npos);

    CHECK(occurrences(html, "data-risk=\"") == r.policies.size());
    for (const std::string& name : r.policies) {
        INFO(name);
        const Score& s = r.results.at(name).score;
        const std::vector<std::string> cells = row_cells(html, "data-risk=\"" + name + "\"");
        REQUIRE(cells.size() == 10);
        CHECK(cells[1] == percent(s.jobs_oom_killed_share()));
        CHECK(cells[2] == std::to_string(s.jobs_oom_killed) + " of " + std::to_string(s.jobs));
        CHECK(cells[3] == std::to_string(s.oom_kills));
        CHECK(cells[4] == two_decimals(s.oom_kills_per_job()));
        CHECK(cells[5] == percent(s.cpu.over_limit_share()));
        CHECK(cells[6] == percent(s.cpu.fulfilment()));
        CHECK(cells[7] == two_decimals(s.resizes_per_pod_hour()));
        if (name != "vpa") CHECK(cells[8] == percent(r.reduction(name, "vpa", "cpu")));
        if (name != "vpa") CHECK(cells[9] == percent(r.reduction(name, "vpa", "memory")));
    }
}

TEST_CASE("every OOM kill is marked on the killed policy's time plots", "[report]") {
    SECTION("a static allocation under usage is killed") {
        const Report r = experiment_from({1, 1.5 * GiB}, {"static", "window"});
        const std::string html = report_html(r);
        const std::size_t killed = kills(r, "static", 6);
        REQUIRE(killed > 0);
        // One marker on the CPU plot and one on the memory plot, each a policy's own.
        CHECK(occurrences(html, "class=\"oom-kill\"") == 2 * (killed + kills(r, "window", 6)));
        CHECK(occurrences(html, "class=\"oom-kill\" data-policy=\"static\"") == 2 * killed);
        CHECK(html.find("OOM kill (on the killed policy") != std::string::npos);
    }
    SECTION("an allocation above usage is not") {
        const Report r = experiment_from({4, 8 * GiB}, {"static"});
        REQUIRE(kills(r, "static", 6) == 0);
        CHECK(occurrences(report_html(r), "class=\"oom-kill\"") == 0);
    }
}

TEST_CASE("an outlier allocation does not set the time plots' axis", "[report]") {
    // `static` allocates 1000 times the usage's peak (3 GiB, 1.5 cores).
    const Report r = experiment_from({1500, 3000 * GiB}, {"static", "window"}, 2);
    const std::string html = report_html(r);
    for (const ContainerResult& c : r.containers) {
        INFO(c.container.id);
        double cpu = 0, memory = 0;
        for (const policy::Amount& u : c.container.usage)
            cpu = std::max(cpu, u.cpu), memory = std::max(memory, u.memory / GiB);
        const double cpu_top = axis_max(html, "CPU of " + c.container.id);
        const double memory_top = axis_max(html, "memory of " + c.container.id);
        CHECK(cpu_top >= cpu);
        CHECK(cpu_top <= 4 * cpu);
        CHECK(memory_top >= memory);
        CHECK(memory_top <= 4 * memory);
    }
    // Where static leaves the plot is marked, and how high it goes is said.
    CHECK(html.find("data-policy=\"static\" class=\"clipped\"") != std::string::npos);
    CHECK(html.find("off scale: the starting allocation 1") != std::string::npos);
}

TEST_CASE("the report's notes come first, and skipped policies are not shown", "[report]") {
    // No allocation columns and no static allocation: `static` is skipped, with a note.
    model::Trace trace = trace_of(3);
    trace.columns.resize(2);
    for (model::Execution& e : trace.executions) e.values.conservativeResize(Eigen::NoChange, 2);
    auto model = std::make_shared<const model::PhaseModel>(two_phase_model());
    ExperimentOptions o;
    o.policies = kPolicies;
    Report r = run_experiment(
        trace, [&](const std::vector<std::size_t>&) { return model; }, o);
    REQUIRE(std::find(r.policies.begin(), r.policies.end(), "static") == r.policies.end());
    REQUIRE(!r.notes.empty());
    r.notes.push_back("`krr` is <new>");
    const std::string html = report_html(r);

    const std::size_t notes = html.find("class=\"report-notes\"");
    REQUIRE(notes != std::string::npos);
    CHECK(notes < html.find("<table class=\"risk\""));
    CHECK(occurrences(html.substr(notes, html.find("</div>", notes) - notes), "<li>") ==
          r.notes.size());
    CHECK(html.find("<code>krr</code> is &lt;new&gt;") != std::string::npos);
    CHECK(html.find(r.notes.front().substr(0, r.notes.front().find('`'))) != std::string::npos);
    CHECK(html.find("data-policy=\"static\"") == std::string::npos);
    CHECK(html.find("data-risk=\"static\"") == std::string::npos);
    CHECK(html.find("data-risk=\"krr\"") != std::string::npos);
    CHECK(html.find("data-policy=\"krr\"") != std::string::npos);
}

TEST_CASE("a report without a split or a calibration says so wherever it names them", "[report]") {
    // Every execution replayed, each policy at its own margins: nothing is held out, nothing
    // calibrated.
    const std::string plain = report_html(experiment_from({2, 4 * GiB}, kPolicies));
    CHECK(plain.find("without a held-out split") != std::string::npos);
    CHECK(occurrences(plain, "held-out") == 1);
    CHECK(plain.find("calibrated margin") == std::string::npos);
    CHECK(plain.find("at their own margins") != std::string::npos);
    CHECK(plain.find("the same for every fold") == std::string::npos);
    // Held out over folds and calibrated: the same places say it.
    const std::string folds = report_html(experiment(4, 2));
    CHECK(folds.find("at their calibrated margins") != std::string::npos);
    CHECK(folds.find("share of held-out samples") != std::string::npos);
    CHECK(folds.find("the same for every fold") != std::string::npos);
}
