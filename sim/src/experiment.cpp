#include <phasescale/model/error.hpp>
#include <phasescale/model/phases.hpp>
#include <phasescale/model/random.hpp>
#include <phasescale/sim/experiment.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

namespace phasescale::sim {

bool is_causal(const std::string& policy) {
    return policy != "oracle" && policy != "perfect";
}

namespace {

bool has_column(const model::Trace& trace, const std::string& name) {
    return std::find(trace.columns.begin(), trace.columns.end(), name) != trace.columns.end();
}

// The policies that are a PhaseRecommender.
bool is_phase_policy(const std::string& name) {
    return name == "phase" || name == "oracle" || name == "phase-no-model";
}

// The execution's id, with its file's name where an execution of another file has the same id
// (two traces recorded apart both name a pod exec2): the reports name each container once.
std::string report_id(const model::Trace& trace, const model::Execution& e) {
    const bool shared = std::any_of(trace.executions.begin(), trace.executions.end(),
                                    [&](const model::Execution& other) {
                                        return other.id == e.id && other.source != e.source;
                                    });
    if (!shared) return e.id;
    return e.id + " (" + std::filesystem::path(e.source).filename().string() + ")";
}

}  // namespace

Container make_container(const model::Trace& trace, const model::Execution& e,
                         const model::PhaseModel& phase_model, const TraceColumns& columns,
                         const std::optional<policy::Amount>& fixed) {
    Container c;
    c.id = report_id(trace, e);
    c.source = e.source;
    c.timestamps = e.timestamps;
    const auto cpu = static_cast<Eigen::Index>(trace.column_index(columns.cpu));
    const auto memory = static_cast<Eigen::Index>(trace.column_index(columns.memory));
    c.usage.reserve(e.timestamps.size());
    for (Eigen::Index r = 0; r < e.values.rows(); ++r)
        c.usage.push_back({e.values(r, cpu), e.values(r, memory)});
    // The allocation it ran with: the first row's (training containers keep theirs).
    if (fixed) {
        c.original = *fixed;
    } else if (has_column(trace, columns.static_cpu) && has_column(trace, columns.static_memory)) {
        c.original = {
            e.values(0, static_cast<Eigen::Index>(trace.column_index(columns.static_cpu))),
            e.values(0, static_cast<Eigen::Index>(trace.column_index(columns.static_memory)))};
    } else {
        c.has_original = false;
        if (!c.usage.empty()) c.original = c.usage.front();
    }
    c.features = model::model_features(phase_model, trace, e);
    const auto cpu_feature =
        std::find(phase_model.features.begin(), phase_model.features.end(), columns.cpu);
    if (cpu_feature != phase_model.features.end())
        c.cpu_feature = cpu_feature - phase_model.features.begin();
    c.known_phases = model::predict_phases(phase_model, c.features).phases;
    return c;
}

policy::Margins PolicySettings::default_margins(const std::string& policy) const {
    if (policy == "vpa" || policy == "vpa-updater" || policy == "vpa-warm") return vpa.margins;
    if (is_phase_policy(policy)) return phase.margins;
    return {};
}

PolicyFactory::PolicyFactory(const model::PhaseModel& model, const PolicySettings& settings)
    : model_(model), settings_(settings) {}

namespace {

// Feeds finished executions to a VPA as a checkpoint of the same workload would hold them: each
// shifted in time to end just before `start`, with the allocation it ran with.
void warm_up(policy::VpaRecommender& vpa, const std::vector<const Container*>& history,
             double start) {
    for (const Container* h : history) {
        if (h->timestamps.empty()) continue;
        const double shift = start - 1 - h->timestamps.back();
        vpa.start_container();
        for (std::size_t t = 0; t < h->usage.size(); ++t) {
            policy::Sample s;
            s.timestamp = h->timestamps[t] + shift;
            s.usage = h->usage[t];
            s.allocated = h->original;
            vpa.observe(s);
        }
    }
    vpa.start_container();
}

}  // namespace

std::unique_ptr<policy::Recommender> PolicyFactory::make(
    const std::string& name, const Container& c, const std::vector<const Container*>& warm_history,
    policy::Margins margins) const {
    if (name == "static") return std::make_unique<policy::StaticRecommender>(c.original, margins);
    if (name == "vpa" || name == "vpa-warm") {
        policy::VpaOptions o = settings_.vpa;
        o.margins = margins;
        auto vpa = std::make_unique<policy::VpaRecommender>(o);
        if (name == "vpa-warm" && !c.timestamps.empty())
            warm_up(*vpa, warm_history, c.timestamps.front());
        return vpa;
    }
    if (name == "vpa-updater") {
        policy::VpaOptions o = settings_.vpa;
        o.margins = margins;
        return std::make_unique<policy::VpaUpdater>(o);
    }
    if (name == "window") {
        policy::WindowOptions o = settings_.window;
        o.margins = margins;
        return std::make_unique<policy::WindowRecommender>(o);
    }
    if (is_phase_policy(name)) {
        policy::PhaseOptions o = settings_.phase;
        o.margins = margins;
        o.oracle = name == "oracle";
        o.no_model = name == "phase-no-model";
        return std::make_unique<policy::PhaseRecommender>(model_, o);
    }
    if (name == "krr") {
        policy::KrrOptions o = settings_.krr;
        o.margins = margins;
        return std::make_unique<policy::KrrRecommender>(o);
    }
    if (name == "perfect") return std::make_unique<policy::PerfectRecommender>(margins);
    std::string known;
    for (const std::string& p : kPolicies) known += (known.empty() ? "" : ", ") + p;
    throw model::InputError("unknown policy \"" + name + "\" (known: " + known + ")");
}

namespace {

Score replay_all(const std::string& policy, const std::vector<ReplaySet>& sets,
                 const std::function<std::vector<const Container*>(const Container&)>& warm_history,
                 policy::Margins margins, const policy::ActuationOptions& actuation) {
    Score total;
    for (const ReplaySet& set : sets)
        for (const Container* c : set.containers) {
            auto recommender = set.factory->make(policy, *c, warm_history(*c), margins);
            total.add(replay(*c, *recommender, is_causal(policy), actuation).score);
        }
    return total;
}

// The operator's policy is calibrated within what a PhaseAutoscaler accepts (margins >= 0).
double lowest_margin(const std::string& policy) {
    return policy == "phase" || policy == "phase-no-model" ? 0.0 : -0.95;
}

}  // namespace

Calibration calibrate(
    const std::string& policy, const std::vector<ReplaySet>& sets,
    const std::function<std::vector<const Container*>(const Container&)>& warm_history,
    const RiskTarget& target, const policy::ActuationOptions& actuation, double lowest) {
    constexpr double kHighest = 64, kTolerance = 1e-4;
    auto run = [&](policy::Margins m) {
        return replay_all(policy, sets, warm_history, m, actuation);
    };
    auto cpu_met = [&](const Score& s) { return s.cpu.fulfilment() >= target.cpu_fulfilment; };
    auto memory_met = [&](const Score& s) { return s.oom_kills <= target.oom_kills; };
    // [low, high] brackets the answer for each resource: high reaches the target, low does not.
    policy::Margins low{lowest, lowest}, high{std::max(1.0, lowest), std::max(1.0, lowest)};
    for (Score s = run(high); !cpu_met(s) || !memory_met(s); s = run(high)) {
        if (!cpu_met(s)) high.cpu *= 2;
        if (!memory_met(s)) high.memory *= 2;
        if (high.cpu > kHighest || high.memory > kHighest) break;  // unreachable: keep the largest
    }
    const Score at_low = run(low);
    if (cpu_met(at_low)) high.cpu = low.cpu;
    if (memory_met(at_low)) high.memory = low.memory;
    while (high.cpu - low.cpu > kTolerance || high.memory - low.memory > kTolerance) {
        const policy::Margins mid{(low.cpu + high.cpu) / 2, (low.memory + high.memory) / 2};
        const Score s = run(mid);
        (cpu_met(s) ? high.cpu : low.cpu) = mid.cpu;
        (memory_met(s) ? high.memory : low.memory) = mid.memory;
        if (high.cpu - low.cpu <= kTolerance) low.cpu = high.cpu;
        if (high.memory - low.memory <= kTolerance) low.memory = high.memory;
    }
    const Score reached = run(high);
    return {high, reached.cpu.fulfilment(), reached.oom_kills};
}

std::vector<Fold> split_executions(std::size_t n, double train_fraction, int folds,
                                   std::uint64_t seed) {
    if (train_fraction > 0 && folds > 0)
        throw model::InputError("give either a training fraction or folds, not both");
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (train_fraction <= 0 && folds <= 0) return {Fold{{}, order}};
    if (n < 2)
        throw model::InputError("a split needs at least 2 executions, the trace has " +
                                std::to_string(n));
    model::Random random(seed);
    random.shuffle(order);
    std::vector<Fold> result;
    if (train_fraction > 0) {
        if (train_fraction >= 1) throw model::InputError("the training fraction must be below 1");
        const auto k = std::clamp<std::size_t>(
            static_cast<std::size_t>(std::lround(train_fraction * n)), 1, n - 1);
        result.push_back({{order.begin(), order.begin() + k}, {order.begin() + k, order.end()}});
    } else {
        if (static_cast<std::size_t>(folds) > n || folds < 2)
            throw model::InputError("folds must be between 2 and the number of executions (" +
                                    std::to_string(n) + ")");
        for (int f = 0; f < folds; ++f) {
            Fold fold;
            for (std::size_t i = 0; i < n; ++i)
                (static_cast<int>(i % folds) == f ? fold.held_out : fold.training)
                    .push_back(order[i]);
            result.push_back(std::move(fold));
        }
    }
    for (Fold& f : result) {
        std::sort(f.training.begin(), f.training.end());
        std::sort(f.held_out.begin(), f.held_out.end());
    }
    return result;
}

double Report::reduction(const std::string& policy, const std::string& baseline,
                         const std::string& resource) const {
    const auto p = results.find(policy), b = results.find(baseline);
    if (p == results.end() || b == results.end()) return std::nan("");
    const auto pick = [&](const Score& s) {
        return resource == "cpu" ? s.cpu.allocated : s.memory.allocated;
    };
    const double base = pick(b->second.score);
    return base > 0 ? 1 - pick(p->second.score) / base : std::nan("");
}

namespace {

// The training executions of a fold, each with a model that never saw it: the model trained on
// the other inner folds of the training set (at most `inner_folds`). Fewer than 2 training
// executions: none (nothing to hold out).
struct InnerFold {
    std::shared_ptr<const model::PhaseModel> model;
    std::vector<Container> containers;
    std::unique_ptr<PolicyFactory> factory;
};

std::vector<InnerFold> unseen_training(const model::Trace& trace, const ModelSource& model_source,
                                       const std::vector<std::size_t>& training,
                                       const ExperimentOptions& o) {
    std::vector<InnerFold> result;
    const int k = static_cast<int>(std::min<std::size_t>(
        static_cast<std::size_t>(std::max(o.inner_folds, 0)), training.size()));
    if (k < 2) return result;
    for (const Fold& f : split_executions(training.size(), 0, k, o.seed)) {
        std::vector<std::size_t> inner_training;
        for (std::size_t i : f.training) inner_training.push_back(training[i]);
        InnerFold inner;
        inner.model = model_source(inner_training);
        for (std::size_t i : f.held_out)
            inner.containers.push_back(make_container(trace, trace.executions[training[i]],
                                                      *inner.model, o.columns,
                                                      o.static_allocation));
        inner.factory = std::make_unique<PolicyFactory>(*inner.model, o.settings);
        result.push_back(std::move(inner));
    }
    return result;
}

std::vector<ReplaySet> replay_sets(const std::vector<InnerFold>& folds) {
    std::vector<ReplaySet> sets;
    for (const InnerFold& f : folds) {
        ReplaySet set{f.factory.get(), {}};
        for (const Container& c : f.containers) set.containers.push_back(&c);
        sets.push_back(std::move(set));
    }
    return sets;
}

// What equal risk means on one fold's calibration executions. `asked`: CPU at the target
// fulfilment, memory at no more OOM kills than the VPA at its defaults. The operator's policy
// cannot go below a margin of 0, so it may reach less risk than asked; the others are then held to
// what it reached (`reached`), else they would be compared taking more risk than it takes.
struct EqualRisk {
    RiskTarget asked, reached;
    std::optional<Calibration> phase;  // when `phase` is replayed
    bool phase_on_unseen = false;      // with models that never saw its calibration executions
};

// `calibration`: the calibration executions with the fold's model; `unseen_training`: the same
// executions, each with a model that never saw it (what `phase` is calibrated on where there are
// any; built only when `phase` is replayed, as the inner models cost their training).
EqualRisk equal_risk(
    const std::vector<std::string>& policies, const std::vector<ReplaySet>& calibration,
    const std::function<std::vector<InnerFold>()>& unseen_training,
    const std::function<std::vector<const Container*>(const Container&)>& warm_history,
    double target_fulfilment, const PolicySettings& settings) {
    EqualRisk risk;
    risk.asked = {target_fulfilment, replay_all("vpa", calibration, warm_history,
                                                settings.vpa.margins, settings.actuation)
                                         .oom_kills};
    risk.reached = risk.asked;
    if (std::find(policies.begin(), policies.end(), "phase") == policies.end()) return risk;
    const std::vector<InnerFold> inner = unseen_training();
    risk.phase_on_unseen = !inner.empty();
    risk.phase = calibrate("phase", inner.empty() ? calibration : replay_sets(inner), warm_history,
                           risk.asked, settings.actuation, lowest_margin("phase"));
    risk.reached = {std::max(risk.asked.cpu_fulfilment, risk.phase->cpu_fulfilment),
                    std::min(risk.asked.oom_kills, risk.phase->oom_kills)};
    return risk;
}

}  // namespace

Report run_experiment(const model::Trace& trace, const ModelSource& model_source,
                      const ExperimentOptions& o) {
    if (o.target_fulfilment < 0 || o.target_fulfilment >= 1)
        throw model::InputError("the target fulfilment must be in (0, 1), or 0 for no calibration");
    Report report;
    report.options = o;
    report.policies = o.policies;
    const bool has_static = o.static_allocation || (has_column(trace, o.columns.static_cpu) &&
                                                    has_column(trace, o.columns.static_memory));
    if (!has_static) {
        const auto at = std::find(report.policies.begin(), report.policies.end(), "static");
        if (at != report.policies.end()) report.policies.erase(at);
        report.notes.push_back(
            "the trace has no allocation columns (" + o.columns.static_cpu + ", " +
            o.columns.static_memory +
            ") and no static allocation was given: `static` is skipped, and every "
            "policy starts from each execution's first sample");
    }
    report.folds = split_executions(trace.executions.size(), o.train_fraction, o.folds, o.seed);
    report.split = !report.folds.front().training.empty();

    for (std::size_t f = 0; f < report.folds.size(); ++f) {
        const Fold& fold = report.folds[f];
        const std::shared_ptr<const model::PhaseModel> fold_model = model_source(fold.training);
        report.model = fold_model;
        std::vector<Container> containers;
        containers.reserve(trace.executions.size());
        for (const model::Execution& e : trace.executions)
            containers.push_back(
                make_container(trace, e, *fold_model, o.columns, o.static_allocation));
        std::vector<const Container*> training, held_out;
        for (std::size_t i : fold.training) training.push_back(&containers[i]);
        for (std::size_t i : fold.held_out) held_out.push_back(&containers[i]);
        // vpa-warm learns from the training executions; without a split, from all the others.
        auto warm_history = [&](const Container& c) {
            if (report.split) return training;
            std::vector<const Container*> others;
            for (const Container& x : containers)
                if (&x != &c) others.push_back(&x);
            return others;
        };
        const std::vector<const Container*>& calibration_set = report.split ? training : held_out;

        PolicyFactory factory(*fold_model, o.settings);
        const std::size_t first_result = report.containers.size();
        for (const Container* c : held_out)
            report.containers.push_back({*c, static_cast<int>(f), {}});
        std::optional<EqualRisk> risk;
        if (o.target_fulfilment > 0) {
            const auto unseen = [&] {
                return report.split ? unseen_training(trace, model_source, fold.training, o)
                                    : std::vector<InnerFold>{};
            };
            risk = equal_risk(report.policies, {{&factory, calibration_set}}, unseen, warm_history,
                              o.target_fulfilment, o.settings);
            if (risk->phase && report.split && o.inner_folds >= 2 && !risk->phase_on_unseen)
                report.notes.push_back(
                    "fold " + std::to_string(f + 1) +
                    " has a single training execution: phase is calibrated on it with the "
                    "fold's model, which trained on it (no inner fold to hold it out)");
        }
        for (const std::string& name : report.policies) {
            PolicyResult& result = report.results[name];
            // vpa-updater keeps the VPA's defaults: its margin also moves the bounds, and so when
            // the updater acts at all, which no VPA setting does.
            const bool calibrated = risk && name != "vpa-updater";
            policy::Margins margins = o.settings.default_margins(name);
            if (calibrated && name == "phase") {
                margins = risk->phase->margins;
                result.targets.push_back(risk->asked);
            } else if (calibrated) {
                margins = calibrate(name, {{&factory, calibration_set}}, warm_history,
                                    risk->reached, o.settings.actuation, lowest_margin(name))
                              .margins;
                result.targets.push_back(risk->reached);
            }
            result.margins.push_back(margins);
            for (std::size_t i = 0; i < held_out.size(); ++i) {
                auto recommender =
                    factory.make(name, *held_out[i], warm_history(*held_out[i]), margins);
                Replay r =
                    replay(*held_out[i], *recommender, is_causal(name), o.settings.actuation);
                result.score.add(r.score);
                report.containers[first_result + i].replays[name] = std::move(r);
            }
            result.tradeoff.resize(o.tradeoff_margins.size());
            for (std::size_t m = 0; m < o.tradeoff_margins.size(); ++m) {
                const double margin = o.tradeoff_margins[m];
                const Score s = replay_all(name, {{&factory, held_out}}, warm_history,
                                           {margin, margin}, o.settings.actuation);
                result.tradeoff[m].margin = margin;
                result.tradeoff[m].cpu.add(s.cpu);
                result.tradeoff[m].memory.add(s.memory);
            }
        }
    }
    return report;
}

}  // namespace phasescale::sim
