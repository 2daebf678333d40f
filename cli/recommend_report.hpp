#pragma once
// `phasescale recommend`'s data model: per container (grouped by the pods' owner), its current
// requests and limits, what the operator's policy recommends in each phase and overall, and the
// risk seen (OOM kills, CPU throttling); how it is computed from histories, and its four
// renderings (table, json, yaml, csv). No Prometheus here: recommend.cpp reads the histories.

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/control/pod.hpp>
#include <phasescale/control/spec.hpp>
#include <phasescale/model/model.hpp>
#include <phasescale/policy/recommender.hpp>

namespace phasescale::cli {

// What was seen go wrong for one container in the window.
struct Risk {
    double oom_kills = 0;
    // CFS periods in the window and those of them throttled; unset without cAdvisor's series.
    std::optional<double> cpu_periods;
    std::optional<double> cpu_throttled_periods;
    // throttled / periods; unset without periods.
    std::optional<double> cpu_throttled_share() const;
    void add(const Risk& other);
};

// One container of one pod over the window, as read from Prometheus.
struct ContainerHistory {
    std::string ns;
    std::string pod;
    std::string container;
    std::string workload;            // "Kind/name" of the pod's owner, or "Pod/<pod>" without one
    std::vector<double> timestamps;  // unix seconds, increasing
    std::vector<std::vector<double>> features;  // per sample, in the model's feature order
    std::vector<policy::Amount> usage;          // per sample: cores, bytes
    control::ContainerResources current;        // requests and limits (kube-state-metrics)
    Risk risk;
};

struct Resources {
    control::ResourceValues requests;
    control::ResourceValues limits;
};

// The policy's recommendation while the container was in one phase.
struct PhaseRecommendation {
    std::string phase;  // control::phase_name: "phase-N", "unknown" before the first phase
    std::optional<int> index;
    std::size_t samples = 0;
    double share = 0;  // of the container's observed samples
    // The operator's target (clamped, rounded) at the phase's latest sample; the largest over the
    // pods of a workload. Unset while the policy recommends nothing yet (too few samples).
    Resources recommended;
};

struct ContainerReport {
    std::string ns;
    std::string workload;
    std::string container;
    std::vector<std::string> pods;
    std::size_t samples = 0;                  // observed by the policy
    Resources current;                        // of the pod seen last
    std::vector<PhaseRecommendation> phases;  // by phase index, "unknown" first
    Resources overall;                        // the largest of the phases': covers every phase seen
    std::string current_phase;                // the phase at the end of the window (pod seen last)
    std::string note;                         // why there is no recommendation, if there is none
    Risk risk;
};

struct Report {
    std::string prometheus;
    std::string ns;
    std::string selector;
    std::string window;
    double start = 0, end = 0;  // unix seconds: the first and last samples read
    std::string model;
    std::vector<ContainerReport> containers;
};

// Replays each history through the operator's ContainerTracker and target_for (the same code a
// PhaseAutoscaler with `spec` runs, fed as its warm-up feeds it: the current requests in force at
// every sample), and groups the pods of one workload's container into one report, in the
// histories' order of (namespace, workload, container).
std::vector<ContainerReport> recommend_containers(
    const std::vector<ContainerHistory>& histories,
    const std::shared_ptr<const model::PhaseModel>& model, const control::AutoscalerSpec& spec);

// Human quantities: CPU "250m", "1.5" (cores); memory "800Mi", "1.5Gi"; "-" when unset.
std::string human_cpu(std::optional<double> cores);
std::string human_memory(std::optional<double> bytes);

// The four renderings of one report.
nlohmann::ordered_json report_json(const Report& report);
std::string render_json(const Report& report);
std::string render_yaml(const Report& report);
std::string render_csv(const Report& report);
std::string render_table(const Report& report);
// By format name ("table", "json", "yaml", "csv"); throws std::invalid_argument otherwise.
std::string render(const Report& report, const std::string& format);

}  // namespace phasescale::cli
