#pragma once
// A workload generator: synthetic resource traces of deep-learning training containers, with the
// phases they go through (start-up, data loading, warm-up, steady training with evaluations and
// checkpoints, memory growth, tail) and the true phase of every sample. docs/generator.md
// describes the model, its parameters and their ranges.
//
// Deterministic: the same options give the same jobs, bit for bit, with the random numbers drawn
// from phasescale::model::Random (never the standard library's distributions). Job i depends only
// on the seed and i, so `jobs = 20` yields the first 20 jobs of `jobs = 200`.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace phasescale::sim {

// The phase archetypes; the `phase` column holds their names.
enum class Archetype { startup, loading, warmup, training, growth, tail };
inline constexpr Archetype kArchetypes[] = {Archetype::startup, Archetype::loading,
                                            Archetype::warmup,  Archetype::training,
                                            Archetype::growth,  Archetype::tail};
// "startup", "loading", "warmup", "training", "growth", "tail".
std::string_view archetype_name(Archetype archetype);

// What happens within an archetype; the `event` column holds their names ("" for none).
enum class Event {
    none,
    evaluation,  // "eval": periodic evaluation during training
    checkpoint,  // "checkpoint": serialising the model during training
    reload,      // "reload": the data pipeline restarting at an epoch boundary
    cache,       // "cache": growth while the data loader caches the dataset (first epoch)
    leak,        // "leak": leak-like growth in the middle of training
    dropout,     // "dropout": a sample that reads as if the metrics were missing
};
std::string_view event_name(Event event);

struct GeneratorOptions {
    int jobs = 1;  // at least 1
    std::uint64_t seed = 0;
    double interval_s = 15;  // mean sample interval, at least 1 s; each step varies by ±20%
    double start_time = 1700000000;  // unix seconds: the first job starts here
};

// The parameters one job was drawn with (docs/generator.md gives their ranges).
struct JobProfile {
    double start_offset_s = 0;        // start time after GeneratorOptions::start_time
    double memory_working_bytes = 0;  // memory level of training (model size, batch)
    double cpu_training_cores = 0;    // CPU level of steady training
    double cpu_loading_cores = 0;     // CPU level of data loading (0 without a loading phase)
    int loader_workers = 0;
    bool has_loading = true;
    double training_s = 0;  // training time, evaluations and checkpoints excluded
    int epochs = 0;
    double epoch_s = 0;
    int eval_every = 0;                // epochs between evaluations (0: none)
    double eval_cpu_factor = 1;        // evaluation CPU relative to training
    int checkpoint_every = 0;          // epochs between checkpoints (0: only the final save)
    bool reload_dips = false;          // a data-reload dip at each epoch boundary
    double memory_drift_per_hour = 0;  // slow growth of training memory (share of the level)
    Event growth = Event::none;        // none, cache or leak
    double growth_bytes = 0;           // memory the growth phase adds
    double cpu_ar_coefficient = 0;     // phi of the AR(1) CPU noise, per sample
    double cpu_ar_sigma = 0;           // stationary sigma of the AR(1) log-multiplier
    double cpu_measurement_sigma = 0;  // lognormal measurement noise on CPU
    double dropout_probability = 0;    // per sample
};

struct Sample {
    std::int64_t timestamp = 0;  // unix seconds, strictly increasing within a job
    double cpu_cores = 0;        // cpu.usage.cores, a multiple of 0.001
    double memory_bytes = 0;     // mem.working.set, a multiple of 4096
    Archetype phase = Archetype::startup;
    Event event = Event::none;
};

struct GeneratedJob {
    std::string id;  // pod.id: job-0001, job-0002, ...
    JobProfile profile;
    int cpu_limit_cores = 0;        // cpu.num.cores: what the user asked for
    double memory_limit_bytes = 0;  // mem.limit: a power-of-two number of GiB
    std::vector<Sample> samples;
};

// The jobs, in order of their start times. Throws std::invalid_argument for jobs < 1 or an
// interval below 1 s (or not finite).
std::vector<GeneratedJob> generate_jobs(const GeneratorOptions& options);

// The canonical trace CSV: timestamp, pod.id, cpu.usage.cores, mem.working.set, cpu.num.cores,
// mem.limit, phase, event. Rows grouped by job, in time order within each job.
void write_traces_csv(const std::vector<GeneratedJob>& jobs, std::ostream& csv);

struct GeneratorSummary {
    std::size_t jobs = 0;
    std::size_t rows = 0;
    std::int64_t first_timestamp = 0;
    std::int64_t last_timestamp = 0;
};

// generate_jobs, then write_traces_csv.
GeneratorSummary generate_traces(const GeneratorOptions& options, std::ostream& csv);

}  // namespace phasescale::sim
