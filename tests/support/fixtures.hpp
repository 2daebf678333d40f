#pragma once
// Hand-made inputs shared by several test files.

#include <phasescale/model/model.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

namespace phasescale::testing {

// A fresh directory under the system's temporary directory, removed with everything in it at the
// end of the test: tests never write into the tree.
class TempDir {
public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "phasescale-test-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        root_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return root_; }
    std::string path(const std::string& name) const { return (root_ / name).string(); }
    std::string operator/(const std::string& name) const { return path(name); }
    // Writes `text` to the file `name` and returns its path.
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path(name), std::ios::binary) << text;
        return path(name);
    }
    std::size_t files() const {
        return static_cast<std::size_t>(
            std::distance(std::filesystem::directory_iterator(root_), {}));
    }

private:
    std::filesystem::path root_;
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline constexpr double GiB = 1024.0 * 1024 * 1024;
inline constexpr double MiB = 1024.0 * 1024;

inline model::Summary summary(double p50, double p95, double p99, double max) {
    model::Summary s;
    s.count = 10;
    s.p50 = p50;
    s.p90 = p95;
    s.p95 = p95;
    s.p99 = p99;
    s.max = max;
    return s;
}

// A hand-made two-phase model: h = sigmoid(10 * (cpu - 1)), centroids 0 and 1, so CPU well
// below 1 core is phase 0, well above is phase 1, and about 1 core is in no known phase.
inline model::PhaseModel two_phase_model() {
    model::PhaseModel m;
    m.features = {"cpu.usage.cores", "mem.working.set"};
    m.scaler.mean = Eigen::VectorXd{{1.0, 0.0}};
    m.scaler.scale = Eigen::VectorXd::Ones(2);
    m.crbm.n_vis = 2;
    m.crbm.n_hid = 1;
    m.crbm.n_his = 1;
    m.crbm.W = model::Matrix{{10, 0}};
    m.crbm.A = model::Matrix::Zero(2, 2);
    m.crbm.B = model::Matrix::Zero(1, 2);
    m.crbm.v_bias = Eigen::VectorXd::Zero(2);
    m.crbm.h_bias = Eigen::VectorXd::Zero(1);
    m.centroids = model::Matrix{{0.0}, {1.0}};
    model::PhaseStatistics st;
    st.usage_columns = m.features;
    st.phases.resize(2);
    st.phases[0].samples = 100;
    st.phases[0].usage = {summary(0.5, 0.6, 0.7, 0.8),
                          summary(1 * GiB, 1 * GiB, 1 * GiB, 1.1 * GiB)};
    st.phases[0].visit_samples = summary(3, 5, 6, 6);
    st.phases[0].distance = summary(0.01, 0.05, 0.1, 0.2);
    st.phases[1].samples = 100;
    st.phases[1].usage = {summary(1.8, 2.0, 2.2, 2.5), summary(3 * GiB, 4 * GiB, 4 * GiB, 4 * GiB)};
    st.phases[1].visit_samples = summary(10, 20, 30, 30);
    st.phases[1].distance = summary(0.01, 0.05, 0.1, 0.2);
    st.transitions = model::Matrix{{0, 4}, {1, 0}};
    st.executions = 1;
    m.statistics = st;
    return m;
}

}  // namespace phasescale::testing
