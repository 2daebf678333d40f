// Speed and quality of the phase model on the AI4DL sample traces, with the AI4DL settings (the 8
// features of the pretrained model, 10 hidden units, history 3, learning rate 0.001, batch 1,
// CD-1). Run from the project root (it reads ../shared/data/ai4dl/ by relative path):
//   build/bench/model_bench --benchmark_counters_tabular=true
// Counters: slices/s or rows/s per core; Quality reports final_reconstruction_error.

#include <phasescale/model/crbm.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/scaler.hpp>
#include <phasescale/model/trace.hpp>

#include <benchmark/benchmark.h>

namespace {

using namespace phasescale::model;

const std::string kData = "../shared/data/ai4dl/";

struct Ai4dlData {
    PhaseModel pretrained = load_model(kData + "ai4dl-pretrained.model.json");
    std::vector<Matrix> scaled;    // scaled with a scaler fitted to these traces, for training
    std::vector<Matrix> features;  // raw, for the pretrained model
    std::size_t rows = 0;

    Ai4dlData() {
        TraceOptions options;
        options.columns = pretrained.features;
        const Trace trace = read_trace({kData + "sample.csv", kData + "sample-vr.csv"}, options);
        std::vector<const Matrix*> views;
        for (const Execution& e : trace.executions) {
            features.push_back(model_features(pretrained, trace, e));
            rows += static_cast<std::size_t>(e.values.rows());
        }
        for (const Matrix& f : features) views.push_back(&f);
        const StandardScaler scaler = StandardScaler::fit(views);
        for (const Matrix& f : features) scaled.push_back(scaler.transform(f));
    }
};

const Ai4dlData& data() {
    static const Ai4dlData d;
    return d;
}

CrbmTrainOptions ai4dl_options(int epochs) {
    CrbmTrainOptions o;
    o.epochs = epochs;
    o.learning_rate = 0.001;
    o.batch = 1;
    o.cd_steps = 1;
    return o;
}

void Training(benchmark::State& state) {
    Crbm crbm = Crbm::initialise(8, 10, 3, 1);
    std::size_t slices = 0;
    for (auto _ : state) {
        slices += train_crbm(crbm, data().scaled, ai4dl_options(1)).slices;
    }
    state.counters["slices/s"] =
        benchmark::Counter(static_cast<double>(slices), benchmark::Counter::kIsRate);
}
BENCHMARK(Training)->Unit(benchmark::kMillisecond);

void Quality50Epochs(benchmark::State& state) {
    double error = 0;
    for (auto _ : state) {
        Crbm crbm = Crbm::initialise(8, 10, 3, 1);
        error = train_crbm(crbm, data().scaled, ai4dl_options(50)).final_reconstruction_error();
    }
    state.counters["final_reconstruction_error"] = error;
}
BENCHMARK(Quality50Epochs)->Unit(benchmark::kMillisecond)->Iterations(1);

void BatchedInference(benchmark::State& state) {
    const Crbm& crbm = data().pretrained.crbm;
    std::size_t rows = 0;
    for (auto _ : state) {
        for (const Matrix& z : data().scaled) {
            Matrix h = hidden_activations(crbm, z);
            benchmark::DoNotOptimize(h.data());
            rows += static_cast<std::size_t>(h.rows());
        }
    }
    state.counters["rows/s"] =
        benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(BatchedInference)->Unit(benchmark::kMicrosecond);

void IncrementalInference(benchmark::State& state) {
    const Crbm& crbm = data().pretrained.crbm;
    std::vector<double> h(static_cast<std::size_t>(crbm.n_hid));
    std::size_t rows = 0;
    for (auto _ : state) {
        for (const Matrix& z : data().scaled) {
            CrbmStream stream(crbm);
            for (Eigen::Index r = 0; r < z.rows(); ++r) {
                rows += stream.push(z.row(r).data(), h.data());
                benchmark::DoNotOptimize(h.data());
            }
        }
    }
    state.counters["rows/s"] =
        benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(IncrementalInference)->Unit(benchmark::kMicrosecond);

// What the operator does per sample: scale, CRBM, nearest centroid.
void OnlinePhases(benchmark::State& state) {
    const PhaseModel& model = data().pretrained;
    std::size_t rows = 0;
    for (auto _ : state) {
        for (const Matrix& f : data().features) {
            PhaseStream stream(model);
            for (Eigen::Index r = 0; r < f.rows(); ++r) {
                auto phase = stream.push(f.row(r).data());
                benchmark::DoNotOptimize(phase);
                rows += phase.has_value();
            }
        }
    }
    state.counters["rows/s"] =
        benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(OnlinePhases)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
