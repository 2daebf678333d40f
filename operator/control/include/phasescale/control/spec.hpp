// A PhaseAutoscaler's spec, typed and validated. parse_spec never throws: what it cannot honour
// becomes an error message (for the Ready condition) and the defaults of the CRD fill the rest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/json.hpp>
#include <phasescale/kube/selector.hpp>

namespace phasescale::control {

// As the VPA's updateMode: Off recommends (status, pod annotations) and never resizes; InPlace
// also resizes in place. "Recommend" (earlier versions) is read as Off.
enum class Mode { Off, InPlace };
const char* to_string(Mode mode);

struct ResourceBounds {
    std::optional<double> cpu;     // cores
    std::optional<double> memory;  // bytes
};

struct ContainerPolicy {
    std::string container_name = "*";
    bool enabled = true;  // mode Auto (false: Off)
    ResourceBounds min_allowed;
    ResourceBounds max_allowed;
    bool control_cpu = true;
    bool control_memory = true;
    bool requests_and_limits = true;  // controlledValues RequestsAndLimits (false: RequestsOnly)
};

struct ResourceSizing {
    double quantile = 0.95;
    double safety_margin = 0.1;
    double target_fulfilment = 0;  // CPU: the share of samples within the request (0: off)
    double min_headroom = 0;       // memory: bytes above the latest usage, at least
};

struct ModelRef {
    std::string name = "default";  // a built-in model, when config_map is empty
    std::string config_map;
    std::string key;
    // "default", or "configmap/NAME/KEY".
    std::string id() const;
};

struct AutoscalerSpec {
    kube::LabelSelector selector;
    Mode mode = Mode::Off;
    ModelRef model;
    std::vector<ContainerPolicy> container_policies;
    ResourceSizing cpu{0.95, 0.1, 0.95};
    ResourceSizing memory{0.99, 0.1, 0, 384.0 * 1024 * 1024};  // 384Mi, as policy::PhaseOptions
    int debounce_samples = 2;
    double min_change = 0.05;
    int cooldown_seconds = 60;
    bool proactive = false;
    std::string prometheus_url;
    std::map<std::string, std::string> feature_queries;  // feature -> PromQL template

    // The policy for a container: its own by name, else "*", else the defaults.
    ContainerPolicy policy_for(const std::string& container) const;
};

struct ParsedSpec {
    AutoscalerSpec spec;
    std::vector<std::string> errors;  // empty: valid
    bool ok() const { return errors.empty(); }
    std::string message() const;  // the errors joined with "; "
};

// `object` is a whole PhaseAutoscaler as the API returns it (or just its spec).
ParsedSpec parse_spec(const json& object);

// The first PhaseAutoscaler of a YAML file's documents (as `kubectl apply -f` takes it);
// `origin` names the file in messages.
ParsedSpec parse_spec_yaml(const std::string& text, const std::string& origin);

}  // namespace phasescale::control
