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
  return run_experiment(trace_of(executions, samples), [&](const std::vector<std::size_t>&) { return model; }, o);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
  return buffer;
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
  const std::string& id = r.containers[0].container.id == "job<1>&\"x\"" ? r.containers[0].container.id
                                                                          : r.containers[1].container.id;
  CHECK(html.find("job<1>") == std::string::npos);
  bool shown = false;
  for (std::size_t i = 0; i < 6; ++i) shown = shown || r.containers[i].container.id == id;
  if (shown) CHECK(html.find("job&lt;1&gt;&amp;&quot;x&quot;") != std::string::npos);

  // The summary numbers: the reductions against vpa and the fulfilment.
  const double cpu = r.reduction("phase", "vpa", "cpu"), memory = r.reduction("phase", "vpa", "memory");
  REQUIRE(std::isfinite(cpu));
  CHECK(html.find(">" + percent(cpu) + "<") != std::string::npos);
  CHECK(html.find(">" + percent(memory) + "<") != std::string::npos);
  CHECK(html.find(percent(r.results.at("phase").score.cpu.fulfilment())) != std::string::npos);
  CHECK(html.find(percent(r.reduction("window", "vpa-warm", "memory"))) != std::string::npos);
  // The headline names the setting.
  CHECK(html.find("8 held-out executions") != std::string::npos);
  CHECK(html.find("2 folds") != std::string::npos);
  CHECK(html.find("95% fulfilment") != std::string::npos);
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
  // Every line and area is a step path: at most one horizontal segment per point (and one to the end).
  std::size_t paths = 0, longest = 0;
  for (std::size_t at = html.find("<path d=\""); at != std::string::npos; at = html.find("<path d=\"", at + 1)) {
    const std::size_t end = html.find('"', at + 9);
    const std::string d = html.substr(at + 9, end - at - 9);
    longest = std::max<std::size_t>(longest, static_cast<std::size_t>(std::count(d.begin(), d.end(), 'H')));
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
    const Report r = run_experiment(trace_of(3), [&](const std::vector<std::size_t>&) { return fixed; }, o);
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
