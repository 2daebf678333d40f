// The workload generator: determinism, the CSV it writes (read back with the trace reader), the
// phases it models and how clearly they differ, and the `phasescale generate` command.

#include <phasescale/model/trace.hpp>
#include <phasescale/sim/generator.hpp>

#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace phasescale;

using phasescale::testing::read_file;
using phasescale::testing::TempDir;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

sim::GeneratorOptions options(int jobs, std::uint64_t seed) {
    sim::GeneratorOptions o;
    o.jobs = jobs;
    o.seed = seed;
    return o;
}

std::string csv_text(const sim::GeneratorOptions& o) {
    std::ostringstream out;
    sim::generate_traces(o, out);
    return out.str();
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    for (char c : line) {
        if (c == ',') {
            fields.push_back(field);
            field.clear();
        } else {
            field += c;
        }
    }
    fields.push_back(field);
    return fields;
}

double mean(const std::vector<double>& values) {
    double sum = 0;
    for (double v : values) sum += v;
    return values.empty() ? 0.0 : sum / values.size();
}

// Per job and archetype, the CPU and memory of the samples outside any event.
struct PhaseLevels {
    std::map<sim::Archetype, std::vector<double>> cpu, memory;
};
PhaseLevels levels(const sim::GeneratedJob& job) {
    PhaseLevels l;
    for (const sim::Sample& s : job.samples) {
        if (s.event != sim::Event::none && s.event != sim::Event::cache &&
            s.event != sim::Event::leak) {
            continue;
        }
        l.cpu[s.phase].push_back(s.cpu_cores);
        l.memory[s.phase].push_back(s.memory_bytes);
    }
    return l;
}

}  // namespace

TEST_CASE("the same seed gives the same bytes, another seed other bytes", "[generator]") {
    const std::string a = csv_text(options(8, 42));
    CHECK(a == csv_text(options(8, 42)));
    CHECK(a != csv_text(options(8, 43)));
    CHECK(a.rfind("timestamp,pod.id,cpu.usage.cores,mem.working.set,cpu.num.cores,mem.limit,phase,"
                  "event\n",
                  0) == 0);

    // The library view and the CSV agree.
    std::ostringstream written;
    sim::write_traces_csv(sim::generate_jobs(options(8, 42)), written);
    CHECK(written.str() == a);
}

TEST_CASE("job i is the same whatever the number of jobs", "[generator]") {
    std::vector<sim::GeneratedJob> few = sim::generate_jobs(options(3, 9));
    std::vector<sim::GeneratedJob> more = sim::generate_jobs(options(12, 9));
    REQUIRE(few.size() == 3);
    REQUIRE(more.size() == 12);
    for (std::size_t i = 0; i < few.size(); ++i) {
        CHECK(few[i].id == more[i].id);
        REQUIRE(few[i].samples.size() == more[i].samples.size());
        for (std::size_t k = 0; k < few[i].samples.size(); ++k) {
            CHECK(few[i].samples[k].timestamp == more[i].samples[k].timestamp);
            CHECK(few[i].samples[k].cpu_cores == more[i].samples[k].cpu_cores);
            CHECK(few[i].samples[k].memory_bytes == more[i].samples[k].memory_bytes);
        }
    }
}

TEST_CASE("the CSV reads back as a trace with sane values", "[generator]") {
    constexpr int kJobs = 20;
    const sim::GeneratorOptions o = options(kJobs, 1);
    TempDir dir;
    const std::string path = dir / "traces.csv";
    {
        std::ofstream out(path, std::ios::binary);
        sim::generate_traces(o, out);
    }
    model::TraceOptions read;
    read.columns = {"cpu.usage.cores", "mem.working.set", "cpu.num.cores", "mem.limit"};
    model::Trace trace = model::read_trace({path}, read);
    REQUIRE(trace.executions.size() == kJobs);
    CHECK(trace.executions.front().id == "job-0001");
    CHECK(trace.executions.back().id == "job-0020");

    const std::set<double> core_requests = {2, 4, 8, 16, 32, 64};
    std::set<double> starts;
    double first = std::numeric_limits<double>::infinity(), last = 0;
    for (const model::Execution& e : trace.executions) {
        INFO(e.id);
        const auto n = static_cast<Eigen::Index>(e.timestamps.size());
        REQUIRE(n > 50);
        starts.insert(e.timestamps.front());
        first = std::min(first, e.timestamps.front());
        last = std::max(last, e.timestamps.back());
        const double duration = e.timestamps.back() - e.timestamps.front();
        CHECK(duration >= 10 * 60);
        CHECK(duration <= 8 * 3600);
        for (Eigen::Index i = 0; i < n; ++i) {
            if (i > 0) {
                const double step = e.timestamps[i] - e.timestamps[i - 1];
                CHECK(step >= 15 * 0.8 - 1);
                CHECK(step <= 15 * 1.2 + 1);
                CHECK(e.timestamps[i] == std::floor(e.timestamps[i]));
            }
            const double cpu = e.values(i, 0), memory = e.values(i, 1);
            const double cores = e.values(i, 2), limit = e.values(i, 3);
            CHECK(cpu >= 0);
            CHECK(cpu <= 64);
            CHECK(memory > 0);
            CHECK(memory < 256 * kGiB);
            // The allocation is the same all along and a round number.
            CHECK(cores == e.values(0, 2));
            CHECK(limit == e.values(0, 3));
            CHECK(core_requests.count(cores) == 1);
            CHECK(std::exp2(std::round(std::log2(limit / kGiB))) * kGiB == limit);
        }
    }
    // Jobs start at different times and run side by side.
    CHECK(starts.size() == kJobs);
    double overlapping = 0;
    for (const model::Execution& e : trace.executions) {
        for (const model::Execution& other : trace.executions) {
            if (&e != &other && other.timestamps.front() < e.timestamps.back() &&
                e.timestamps.front() < other.timestamps.back()) {
                ++overlapping;
                break;
            }
        }
    }
    CHECK(overlapping >= kJobs * 0.8);
    CHECK(first == o.start_time);
}

TEST_CASE("every archetype appears, in order, and steady training dominates", "[generator]") {
    // Parsed from the `phase` column, as a user of the CSV would.
    const std::string text = csv_text(options(20, 1));
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = split(line);
    const auto phase_column = std::find(header.begin(), header.end(), "phase") - header.begin();
    REQUIRE(phase_column < static_cast<long>(header.size()));

    const std::vector<std::string> order = {"startup",  "loading", "warmup",
                                            "training", "growth",  "tail"};
    std::map<std::string, std::size_t> count;
    std::map<std::string, std::vector<std::string>> sequence;  // per job, the phases visited
    std::size_t rows = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> fields = split(line);
        REQUIRE(fields.size() == header.size());
        const std::string& phase = fields[phase_column];
        REQUIRE(std::find(order.begin(), order.end(), phase) != order.end());
        ++count[phase];
        ++rows;
        auto& visits = sequence[fields[1]];
        if (visits.empty() || visits.back() != phase) visits.push_back(phase);
    }
    for (const std::string& phase : order) {
        INFO(phase);
        CHECK(count[phase] > 0);
    }
    for (const std::string& phase : order) {
        if (phase != "training") CHECK(count["training"] > 3 * count[phase]);
    }
    CHECK(count["training"] > rows / 2);

    // Start-up first, tail last; loading and warm-up before any training; growth within training.
    auto rank = [&](const std::string& phase) {
        std::size_t r = std::find(order.begin(), order.end(), phase) - order.begin();
        return phase == "growth" ? order.size() - 3 : r;  // growth ranks with training
    };
    for (const auto& [id, visits] : sequence) {
        INFO(id);
        CHECK(visits.front() == "startup");
        CHECK(visits.back() == "tail");
        CHECK(std::is_sorted(visits.begin(), visits.end(),
                             [&](const auto& a, const auto& b) { return rank(a) < rank(b); }));
    }
}

TEST_CASE("usage rarely exceeds the allocation the job was submitted with", "[generator]") {
    std::size_t samples = 0, cpu_over = 0, memory_over = 0;
    double cpu_used = 0, cpu_allocated = 0, memory_used = 0, memory_allocated = 0;
    for (const sim::GeneratedJob& job : sim::generate_jobs(options(30, 5))) {
        for (const sim::Sample& s : job.samples) {
            ++samples;
            cpu_over += s.cpu_cores > job.cpu_limit_cores;
            memory_over += s.memory_bytes > job.memory_limit_bytes;
            cpu_used += s.cpu_cores;
            cpu_allocated += job.cpu_limit_cores;
            memory_used += s.memory_bytes;
            memory_allocated += job.memory_limit_bytes;
        }
    }
    CHECK(cpu_over <= samples / 100);
    CHECK(memory_over <= samples / 100);
    // Users over-provision: on average well under half of the request is used.
    CHECK(cpu_used < 0.5 * cpu_allocated);
    CHECK(memory_used < 0.6 * memory_allocated);
}

TEST_CASE("phases differ clearly in CPU and memory", "[generator]") {
    const std::vector<sim::GeneratedJob> jobs = sim::generate_jobs(options(40, 3));
    int loading_jobs = 0, loading_above = 0, warmup_below = 0, tail_low = 0, startup_small = 0,
        growth_jobs = 0, growth_rises = 0;
    double autocorrelation = 0;
    for (const sim::GeneratedJob& job : jobs) {
        PhaseLevels l = levels(job);
        const double training_cpu = mean(l.cpu[sim::Archetype::training]);
        const double training_memory = mean(l.memory[sim::Archetype::training]);
        REQUIRE(training_cpu > 0);
        if (!l.cpu[sim::Archetype::loading].empty()) {
            ++loading_jobs;
            loading_above += mean(l.cpu[sim::Archetype::loading]) > 1.3 * training_cpu;
        }
        warmup_below += mean(l.cpu[sim::Archetype::warmup]) < training_cpu;
        tail_low += mean(l.cpu[sim::Archetype::tail]) < 0.5 * training_cpu &&
                    mean(l.memory[sim::Archetype::tail]) < 0.7 * training_memory;
        startup_small += mean(l.memory[sim::Archetype::startup]) < 0.3 * training_memory;

        // Growth: memory at the end of the phase clearly above where it began.
        std::vector<double> growth;
        for (const sim::Sample& s : job.samples) {
            if (s.phase == sim::Archetype::growth) growth.push_back(s.memory_bytes);
        }
        if (growth.size() >= 4) {
            ++growth_jobs;
            growth_rises += growth.back() > 1.1 * growth.front();
        }

        // Steady-training CPU noise is correlated from one sample to the next (AR(1), not white).
        std::vector<double> x;
        for (const sim::Sample& s : job.samples) {
            if (s.phase == sim::Archetype::training && s.event == sim::Event::none &&
                s.cpu_cores > 0) {
                x.push_back(std::log(s.cpu_cores));
            }
        }
        const double m = mean(x);
        double c0 = 0, c1 = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            c0 += (x[i] - m) * (x[i] - m);
            if (i > 0) c1 += (x[i] - m) * (x[i - 1] - m);
        }
        autocorrelation += c0 > 0 ? c1 / c0 : 0;
    }
    const int n = static_cast<int>(jobs.size());
    CHECK(loading_jobs >= n / 2);
    CHECK(loading_above >= 0.9 * loading_jobs);
    CHECK(warmup_below >= 0.85 * n);
    CHECK(tail_low >= 0.9 * n);
    CHECK(startup_small >= 0.9 * n);
    CHECK(growth_jobs >= 4);
    CHECK(growth_rises >= 0.9 * growth_jobs);
    CHECK(autocorrelation / n > 0.15);
}

TEST_CASE("jobs differ from one another", "[generator]") {
    const std::vector<sim::GeneratedJob> jobs = sim::generate_jobs(options(40, 11));
    double cpu_low = 1e9, cpu_high = 0, memory_low = 1e30, memory_high = 0;
    std::size_t shortest = SIZE_MAX, longest = 0;
    std::set<int> core_requests;
    for (const sim::GeneratedJob& job : jobs) {
        cpu_low = std::min(cpu_low, job.profile.cpu_training_cores);
        cpu_high = std::max(cpu_high, job.profile.cpu_training_cores);
        memory_low = std::min(memory_low, job.profile.memory_working_bytes);
        memory_high = std::max(memory_high, job.profile.memory_working_bytes);
        shortest = std::min(shortest, job.samples.size());
        longest = std::max(longest, job.samples.size());
        core_requests.insert(job.cpu_limit_cores);
    }
    CHECK(cpu_high > 3 * cpu_low);
    CHECK(memory_high > 5 * memory_low);
    CHECK(longest > 3 * shortest);
    CHECK(core_requests.size() >= 3);
}

TEST_CASE("bad generator options are refused", "[generator]") {
    CHECK_THROWS_AS(sim::generate_jobs(options(0, 1)), std::invalid_argument);
    CHECK_THROWS_AS(sim::generate_jobs(options(-3, 1)), std::invalid_argument);
    sim::GeneratorOptions o = options(2, 1);
    for (double interval : {0.0, -15.0, 0.5, std::nan("")}) {
        o.interval_s = interval;
        CHECK_THROWS_AS(sim::generate_jobs(o), std::invalid_argument);
        std::ostringstream out;
        CHECK_THROWS_AS(sim::generate_traces(o, out), std::invalid_argument);
        CHECK(out.str().empty());  // nothing written before the error
    }
    o.interval_s = 60;
    for (const sim::GeneratedJob& job : sim::generate_jobs(o)) {
        for (std::size_t i = 1; i < job.samples.size(); ++i) {
            CHECK(job.samples[i].timestamp - job.samples[i - 1].timestamp >= 60 * 0.8 - 1);
            CHECK(job.samples[i].timestamp - job.samples[i - 1].timestamp <= 60 * 1.2 + 1);
        }
    }
}

TEST_CASE("phasescale generate writes the file and refuses bad input", "[generator]") {
    TempDir dir;
    auto run = [&](const std::string& arguments) {
        std::string command = std::string("'") + PHASESCALE_CLI + "' generate " + arguments +
                              " >'" + (dir / "stdout") + "' 2>'" + (dir / "stderr") + "'";
        int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    const std::string out = dir / "g.csv";
    REQUIRE(run("--jobs 3 --seed 7 --out '" + out + "'") == 0);
    CHECK(read_file(out) == csv_text(options(3, 7)));
    const std::string summary = read_file(dir / "stdout");
    CHECK(summary.find("3 jobs") != std::string::npos);
    CHECK(std::count(summary.begin(), summary.end(), '\n') == 1);

    for (const std::string bad : {"--jobs 0", "--jobs 3 --interval 0", "--jobs 3 --interval x"}) {
        INFO(bad);
        const std::string path = dir / "bad.csv";
        CHECK(run(bad + " --out '" + path + "'") != 0);
        CHECK(read_file(dir / "stderr").rfind("phasescale: error: ", 0) == 0);
        CHECK_FALSE(fs::exists(path));
    }
    CHECK(std::distance(fs::directory_iterator(dir / ""), fs::directory_iterator{}) == 3);
}
