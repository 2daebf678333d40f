#pragma once
// The `phase` recommender: infers each container's phase online with a phase model and
// allocates what that phase is known to use (its quantiles from the model's statistics) times
// (1 + margin). The `oracle` is the same policy told each sample's phase in advance; with
// `no_model` it runs without phases (every sample in one phase): the ablation that measures what
// the model adds.

#include <phasescale/model/model.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/working_set.hpp>
#include <phasescale/policy/simple.hpp>

#include <optional>
#include <vector>

namespace phasescale::policy {

struct PhaseOptions {
    // Which statistic of the phase: 0.5, 0.9, 0.95, 0.99 or 1 (the phase's maximum).
    double cpu_quantile = 0.95;
    double memory_quantile = 0.99;
    Margins margins;
    // Online risk targets. CPU: each container's margin moves after every sample so that the share
    // of samples whose usage stays within the request approaches `cpu_target` (an online conformal
    // update with step `cpu_step`; 0: off, the margin stays as given). Memory: every OOM kill of
    // the container adds `memory_step` to its memory margin for the rest of its life (the budget
    // is no kill).
    double cpu_target = 0;
    double cpu_step = 0.05;
    double memory_step = 0.1;
    // A new raw phase becomes the stable phase once it has been seen this many samples in a row.
    int debounce = 2;
    // Once this container has been seen in a phase for `adapt_samples` samples, its own quantile of
    // usage in that phase replaces the model's (which spans every training execution, small and
    // large); 0 keeps the model's statistics throughout.
    int adapt_samples = 1;
    // Never below the latest usage (memory: the most its last `trend_samples` samples used) times
    // (1 + headroom) times (1 + margin), per resource: with the autoscaler's margin (0.1 by
    // default) the floor is that usage plus that margin.
    Margins headroom{0, 0};
    // Memory never below that usage plus this many bytes, whatever the margin: an allocator
    // grows in segments (PyTorch's by 2-20 MiB blocks, a few at once), so a flat container cut to
    // its very level, as a margin of 0 does, is killed by its next 2-65 MiB (three of the torch
    // runs of bench/savings.sh at equal risk); and a small container's next stage or evaluation
    // steps by far more than 10% of it within one sample: a curriculum flat at 418 MiB rose by
    // 311 MiB, a GAN flat at 682 MiB by 340 MiB for an evaluation (both OOM kills at 256 MiB, the
    // largest steps of the 17 real runs measured in docs/savings.md). Costs nothing at the
    // defaults' 10% margin above 3.75 GiB, where training containers are.
    double memory_min_headroom = 384.0 * 1024 * 1024;
    // Also provision for the likely next phase once a visit lasts longer than that phase's median.
    bool proactive = false;
    // Memory look-ahead: an allocation holds until the next resize (the cooldown), and an OOM kill
    // costs a job its progress; so once the visit may end within `horizon_s` (the phase's median
    // visit, in samples), memory also covers the likely next phases (transition probability at
    // least `likely_next`) at what this container used there, where it has been in them. 0: none.
    double horizon_s = 0;
    double likely_next = 0.2;
    // Memory at least the latest usage times this quantile (0.5, 0.9, 0.95, 0.99 or 1) of the
    // phase's rise in the model's statistics: how far memory climbed within a minute of the
    // phase's training samples (model::kRiseSeconds), times (1 + margin). 0: off. On the generated
    // jobs of bench/savings.sh 0.95 cut the OOM kills by a third (91 to 62, most at warm-up ramps)
    // for 5.4% more memory, and the margin on top of it 30 to 8 for 5% more; on the real runs it
    // cost 0-2% (docs/savings.md). Once the container has shown its working set (memory_hold), no
    // more than the p99 of the phase's settled rise (model::PhaseStats::settled_rise): a phase of
    // idle samples mixes the waits before jobs load their data with the pauses of jobs at work.
    double rise_quantile = 0.95;
    // Over the same horizon, memory that has been growing (over the last `trend_samples`) is
    // provisioned for where it will be if it goes on growing at that rate (loading data, filling
    // caches): the floor is the latest usage plus the growth over the horizon.
    std::size_t trend_samples = model::WorkingSetRule{}.samples;
    // Memory comes down gradually: a recommendation never goes below this share of the memory
    // request in force (start-up ramps grow usage 100x in minutes; the next resize may be a
    // cooldown away) while the container may not have shown its working set yet, but where it is
    // at work at a level (memory_next_step). 0: no such bound.
    double memory_keep = 0.5;
    // It has shown it once each of its last `trend_samples` samples used at least this many
    // cores (it is at work: AI4DL's executions idle at 0.01-0.06 cores and a few MiB for minutes
    // before climbing to 800 MiB) and its memory did not grow at every one of them (a loading
    // ramp), and it has run for `horizon_s` (a job's imports keep it busy at a flat level for its
    // first seconds): then memory may come down to what the rest of the policy asks at once (the
    // torch runs of bench/savings.sh, from 4 GiB to their 0.4-2 GiB, took two cooldowns of
    // halving without it; docs/savings.md measures both). 0: the bound always holds.
    double busy_cpu = model::WorkingSetRule{}.busy_cpu;
    // Memory grew at a sample only if it grew by more than this share of the usage before: the
    // MLP run of bench/savings.sh settles at 400.88 MB and then adds 8-12 KiB a sample, which held
    // its 4 GiB start at 2 GiB for a cooldown. A slower climb is the look-ahead's (horizon_s).
    double memory_noise = model::WorkingSetRule{}.memory_noise;
    // Until it has shown its working set (busy_cpu), memory is provisioned for a step up of this
    // factor at once, the largest a phase makes (the torch runs of bench/savings.sh step 2.7-3.9x
    // as they start). Memory that grew at every one of its last `trend_samples` samples (a
    // ramp: loading data, a warm-up) is not cut below this many times its latest usage, nor below
    // its growth over those samples times it (nor held above the request in force): a ramp ends
    // in a step as often as it levels off (cut on the way up, 11 of the 41 OOM kills of
    // bench/savings.sh's generated jobs, steps of 1.2-2.1x at their ramps' ends). A container at
    // work at a level that has not yet run for `horizon_s` comes down by half (memory_keep) or
    // further, to this many times its latest usage (4 GiB held at 2 for a minute where programs
    // used 0.3-0.5 GiB: 5% more memory on thirteen short runs of other programs, 4.4% on the torch
    // runs). docs/savings.md measures both. Whatever it has shown, memory that stepped up at its
    // latest reading is not cut at that reading, nor is CPU (recommend). 0: none of these.
    double memory_next_step = 4;
    // Memory that spiked and came back down (the latest usage times (1 + margin) below the
    // container's own memory quantile) spikes again, and not always as high: an evaluation or a
    // checkpoint recurs, and its size varies. Its own memory estimate is then the median plus
    // this factor times the spike's height above it (times 1 + margin, as any estimate). A GAN
    // of bench/programs flat at 600 MiB evaluated at 1,037, 915 and 1,369 MiB: the third spike,
    // 1.76x the first's height, was an OOM kill at the peak plus 10%; at 2 it is covered, for
    // 0-2.5% more memory on the other real sets (docs/savings.md). 1 or less: off.
    double memory_spike_factor = 2;
    // CPU never below this share of the CPU request in force, working set or not: it comes down
    // by at most half per resize, as memory does until the working set is shown. A job cut while
    // it loads (8 -> 2 -> 0.5 cores at a quarter) is throttled when training begins and grows
    // back 1.5x per throttled run. At 0.5 instead of 0.25, at equal risk, `phase` needs 48-54%
    // less CPU than `vpa`, `window` and `krr` on AI4DL's sample.csv where it needed 16-23% less
    // (60-81% on both AI4DL traces where 27-67%, 6-7.8% on torch where 5.5-7.4%); at the CRD's
    // defaults it meets 95.5-98% of CPU demand where 94.1-97.1% (sample.csv for 5% more CPU: its
    // executions idle at their 4 starting cores for minutes; generated jobs for 0.3-0.7%; torch
    // and the runs of other programs unchanged; docs/savings.md). 0: no bound.
    double cpu_keep = 0.5;
    // Per step, a recommendation never gives more than this factor times a request in force (a
    // model's sizes come from other executions, which may be far larger); memory after an OOM kill
    // is the exception (its bump). 0: no bound. At 2 the generated jobs of bench/savings.sh had 6%
    // more OOM kills (start-up ramps outgrow it); at 4 none more, and CPU as fulfilled as unbounded
    // with cpu_keep 0.25.
    double max_growth = 4;
    // A container is first resized once this many of its own samples have been observed: never
    // on the model's statistics alone. 4 is when a model of 3 samples of history (the default
    // model's) knows a first phase anyway; more delays first resizes past start-up ramps and cost
    // an OOM kill on the torch runs (bench/savings.sh). A container throttled, OOM-killed or
    // within its memory margin of the OOM line does not wait: its own samples so far are the
    // estimate, and nothing is cut (started at 0.5 cores and 1 GiB, the torch runs met 92.7% of
    // CPU demand with 4 OOM kills waiting, 95.9% with 2 this way); nor does memory that those
    // samples, sized as any estimate, put above the request in force (early_memory_raise). A
    // phase's own quantiles need as many of its samples: a visit with fewer takes those of the
    // container's recent samples (the first resize came with one sample of its phase, and cut a
    // bursty learner to that 15 s).
    std::size_t first_resize_samples = 4;
    // A sample farther from its centroid than `unknown_distance` times the phase's p99 training
    // distance is in no known phase. Then the estimate is the container's own quantiles over its
    // last `recent_samples` samples, whatever their phases: the estimator of a phase, over no
    // phase. (The maximum of the last 10, AI4DL's reactive policy, followed an idle container down
    // to nothing before each burst: 91.4% CPU fulfilment on the AI4DL traces, 93.7% this way;
    // bench/savings.sh.)
    double unknown_distance = 1.0;
    std::size_t recent_samples = 32;
    // After an OOM kill: memory at least oom_bump.after(the OOM line) until the phase changes.
    OomBump oom_bump;
    // After samples throttled at the CPU limit (more than 1 - cpu_target of their periods; any,
    // without a target; for `throttled_seconds` in a row): CPU at least this factor times that
    // limit. Usage stops at the limit, so how much more the container wants cannot be seen; the
    // request grows geometrically while it is throttled (held for a whole visit, as the OOM bump
    // is, it cost AI4DL both traces 2.8x the CPU: bench/savings.sh). 0: off. This is also what
    // serves a start-up that used less CPU than the training after it: training is throttled and
    // raised within two samples. (Holding CPU at its starting request for the first cooldown
    // instead cost 2-3% more CPU on generated jobs and AI4DL for no more fulfilment, and 10% on
    // four torch runs of other programs: docs/savings.md.) Where the container ran unthrottled
    // above that limit within its last `recent_samples` samples, its demand is known: CPU then goes
    // back to that demand times (1 + margin), if that is less and it was throttled in most of its
    // periods, as a flat demand above the limit is (throttled_floor). Throttled so, right after a
    // cut from a request it ran unthrottled at, it grows at most back to 10% above that request;
    // on its starting request, throttled in fewer periods but using that request in the rest (a
    // flat demand right at it), to 10% above it. Throttled in most periods with its throttled
    // seconds measured (Sample::cpu_throttled_cores), none of this: the demand they show times
    // (1 + margin) (throttled_floor).
    double throttle_growth = 1.5;
    // The growth begins once the container has been throttled for this many seconds in a row
    // (each throttled sample counting the time since the sample before). One 2 s sample alone is a
    // burst within what a CPU target allows (5% of samples missed at 0.95), and the online margin
    // answers it (growing on each cost the torch runs 4.6% more CPU for 0.4 points more
    // fulfilment); a sample that covers a whole tick of the operator (15 s) is throttling no
    // longer brief, and waiting a second tick held a job that turned from one core to two at
    // 55-60% of its demand for 30 s (docs/savings.md). Before its first resize
    // (first_resize_samples) a container runs on the request it started with, not on an
    // estimate, and its first throttled sample grows it (waiting for two, torch runs started at
    // 0.5 cores met 94.9% of CPU demand).
    double throttled_seconds = 3;
    // Columns of the model's statistics that hold CPU and memory usage.
    std::string cpu_column = "cpu.usage.cores";
    std::string memory_column = "mem.working.set";
    // Oracle: read Sample::known_phase of the next sample instead of inferring phases.
    bool oracle = false;
    // Ablation: no phases at all; the container's own recent usage, the same margins and floors.
    bool no_model = false;
};

class PhaseRecommender : public Recommender {
public:
    // The model must carry phase statistics with the CPU and memory columns (InputError if not).
    PhaseRecommender(const model::PhaseModel& model, PhaseOptions options);
    void observe(const Sample& sample) override;
    std::optional<Allocation> recommend(const Sample* next) override;
    std::size_t unknown_phase_samples() const override { return unknown_samples_; }
    // The stable phase, once there is one.
    std::optional<int> phase() const { return stable_; }

private:
    // Too few samples of its own for a first resize from an estimate (first_resize_samples).
    bool young() const { return observed_ < options_.first_resize_samples; }
    Amount phase_amount(int phase) const;
    Amount model_amount(int phase) const;
    std::optional<Allocation> early_memory_raise() const;
    std::optional<Amount> estimate(const Sample* next);
    double upcoming_memory() const;
    double rising_memory() const;
    std::optional<Amount> own_quantiles(const Ring<Amount>& seen) const;
    double projected_memory() const;
    double recent_peak_memory() const;
    double horizon_samples() const;
    Amount size(Amount want) const;
    double cpu_margin() const;
    double memory_margin() const;
    static double usage_floor(double usage, double headroom, double margin);
    double memory_floor(double usage) const;
    double throttled_floor(double limit, double share, double excess,
                           bool on_starting_request) const;
    bool flat_at_limit(double limit, double share) const;
    void remember_cut(double allocated);
    Allocation provision(Amount sized) const;
    double step_bounded(double wanted, double in_force, double keep) const;
    bool at_work() const;
    bool shows_working_set() const;
    model::WorkingSetRule working_set_rule() const;
    std::vector<double> recent_cpu() const;
    std::vector<double> recent_memory() const;
    double memory_hold() const;
    double step_hold() const;
    bool memory_ramping() const;
    double ramp_growth() const;
    void adapt(const Sample& sample, bool throttled);
    void follow_phase(const Sample& sample);
    void enter(int phase);
    void remember(int phase, Amount usage);

    const model::PhaseModel* model_;
    PhaseOptions options_;
    std::size_t cpu_column_, memory_column_;
    std::optional<model::PhaseStream> stream_;
    std::optional<int> stable_;
    int candidate_ = -1, candidate_run_ = 0;
    bool unknown_ = true;  // the last sample had no known phase
    std::size_t visit_samples_ = 0;
    std::size_t unknown_samples_ = 0;
    Amount latest_usage_;
    double cpu_in_force_ = 0;                  // the CPU request in force at the latest sample
    double memory_in_force_ = 0;               // the memory request in force at the latest sample
    std::size_t observed_ = 0;                 // samples observed
    double first_time_ = 0, latest_time_ = 0;  // of the first and the latest sample observed
    Ring<std::pair<double, double>> recent_memory_;  // (time, memory) of the last samples
    double earlier_peak_memory_ = 0;                 // the most memory used before those samples
    bool working_set_shown_ = false;  // at work at a level for a horizon, once at least
    // This container's usage in each phase (its most recent 64 samples there, for adapt_samples).
    std::vector<Ring<Amount>> seen_in_phase_;
    // The same since it showed its working set: what the memory look-ahead reads from then on.
    std::vector<Ring<Amount>> settled_in_phase_;
    Ring<Amount> seen_recently_;  // its last recent_samples samples, in any phase or none
    Ring<double> demand_seen_;    // their CPU usage, where neither throttled nor at risk (else 0)
    double oom_floor_ = 0;
    double throttle_floor_ = 0;       // CPU after throttled samples (throttle_growth)
    double throttled_for_ = 0;        // seconds throttled in a row, up to the latest (0: not)
    bool throttled_ = false;          // the latest sample was throttled
    double cpu_before_cut_ = 0;       // the CPU request the latest cut came from, if unthrottled
                                      // there (0: none, or a raise since)
    bool constrained_ = false;        // the latest sample was throttled or its memory at risk
    Margins adapted_;                 // added to the margins by the online risk targets
    std::optional<double> last_cpu_;  // the CPU request last wanted (before the step bound)
};

}  // namespace phasescale::policy
