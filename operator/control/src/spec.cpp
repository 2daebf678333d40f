#include "phasescale/control/spec.hpp"

#include <algorithm>
#include <set>

#include <phasescale/kube/spec_reader.hpp>
#include <phasescale/policy/bounds.hpp>

#include "phasescale/control/quantity.hpp"

namespace phasescale::control {

const char* to_string(Mode mode) {
    switch (mode) {
        case Mode::Off: return "Off";
        case Mode::InPlace: return "InPlace";
    }
    return "?";
}

std::string ModelRef::id() const {
    return config_map.empty() ? name : "configmap/" + config_map + "/" + key;
}

ContainerPolicy AutoscalerSpec::policy_for(const std::string& container) const {
    const ContainerPolicy* star = nullptr;
    for (const ContainerPolicy& p : container_policies) {
        if (p.container_name == container) return p;
        if (p.container_name == "*") star = &p;
    }
    if (star != nullptr) {
        ContainerPolicy p = *star;
        p.container_name = container;
        return p;
    }
    ContainerPolicy p;
    p.container_name = container;
    return p;
}

std::string ParsedSpec::message() const {
    std::string m;
    for (const std::string& e : errors) m += (m.empty() ? "" : "; ") + e;
    return m;
}

namespace {

using Reader = kube::SpecReader;

// A value as the user wrote it, cut short: a message never echoes a huge field.
std::string short_dump(const json& v) {
    std::string text =
        v.dump(-1, ' ', false, json::error_handler_t::replace);  // not UTF-8: never a throw
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// A CPU or memory quantity no node could exceed; none, with an error at `field`, otherwise.
std::optional<double> node_quantity(Reader& r, const json& value, const std::string& field,
                                    bool cpu) {
    const auto q = quantity_of(value);
    if (!q) {
        r.error(field, "not a quantity (non-negative, finite): " + short_dump(value));
        return std::nullopt;
    }
    const double ceiling = cpu ? policy::kMaxCpuCores : policy::kMaxMemoryBytes;
    if (*q > ceiling) {
        r.error(field, "more than any node has (at most " +
                           (cpu ? format_cpu(ceiling) : format_memory(ceiling)) + ")");
        return std::nullopt;
    }
    return q;
}

void read_bounds(Reader& r, const json& parent, const char* key, const std::string& field,
                 ResourceBounds& out) {
    const json* b = r.object(parent, key, field);
    if (b == nullptr) return;
    for (const char* res : {"cpu", "memory"}) {
        if (!b->contains(res)) continue;
        const bool cpu = std::string(res) == "cpu";
        if (auto q = node_quantity(r, (*b)[res], field + "." + res, cpu))
            (cpu ? out.cpu : out.memory) = *q;
    }
}

// The container policies: resourcePolicy.containerPolicies as in the VPA, or the deprecated
// top-level containerPolicies of earlier versions (not both).
void read_policies(Reader& r, const json& spec, std::vector<ContainerPolicy>& out) {
    const auto given = [](const json& parent, const char* key) {
        return parent.is_object() && parent.contains(key) && !parent[key].is_null();
    };
    const json* policy = r.object(spec, "resourcePolicy", "resourcePolicy");
    const bool nested = policy != nullptr && given(*policy, "containerPolicies");
    if (nested && given(spec, "containerPolicies")) {
        r.error("containerPolicies",
                "give resourcePolicy.containerPolicies or the deprecated containerPolicies, not "
                "both");
        return;
    }
    if (!nested && !given(spec, "containerPolicies")) return;
    const json& list = nested ? (*policy)["containerPolicies"] : spec["containerPolicies"];
    const std::string prefix = nested ? "resourcePolicy.containerPolicies" : "containerPolicies";
    if (!list.is_array()) {
        r.error(prefix, "expected a list");
        return;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string field = prefix + "[" + std::to_string(i) + "]";
        ContainerPolicy p;
        auto name = r.string(list[i], "containerName", field + ".containerName");
        if (!name || name->empty()) {
            r.error(field + ".containerName", "is required");
            continue;
        }
        if (!names.insert(*name).second)
            r.error(field + ".containerName", "\"" + *name + "\" appears twice");
        p.container_name = *name;
        if (auto mode = r.string(list[i], "mode", field + ".mode")) {
            if (*mode == "Off")
                p.enabled = false;
            else if (*mode != "Auto")
                r.error(field + ".mode", "must be Auto or Off, got \"" + *mode + "\"");
        }
        read_bounds(r, list[i], "minAllowed", field + ".minAllowed", p.min_allowed);
        read_bounds(r, list[i], "maxAllowed", field + ".maxAllowed", p.max_allowed);
        if (p.min_allowed.cpu && p.max_allowed.cpu && *p.min_allowed.cpu > *p.max_allowed.cpu)
            r.error(field, "minAllowed.cpu exceeds maxAllowed.cpu");
        if (p.min_allowed.memory && p.max_allowed.memory &&
            *p.min_allowed.memory > *p.max_allowed.memory)
            r.error(field, "minAllowed.memory exceeds maxAllowed.memory");
        if (list[i].contains("controlledResources") && list[i]["controlledResources"].is_array()) {
            p.control_cpu = p.control_memory = false;
            for (const json& res : list[i]["controlledResources"]) {
                if (res == "cpu")
                    p.control_cpu = true;
                else if (res == "memory")
                    p.control_memory = true;
                else
                    r.error(field + ".controlledResources", "unknown resource " + res.dump());
            }
        }
        if (auto cv = r.string(list[i], "controlledValues", field + ".controlledValues")) {
            if (*cv == "RequestsOnly")
                p.requests_and_limits = false;
            else if (*cv != "RequestsAndLimits")
                r.error(field + ".controlledValues",
                        "must be RequestsOnly or RequestsAndLimits, got \"" + *cv + "\"");
        }
        out.push_back(std::move(p));
    }
}

void read_sizing(Reader& r, const json& resources, const char* res, ResourceSizing& out) {
    const std::string field = std::string("resources.") + res;
    const json* s = r.object(resources, res, field);
    if (s == nullptr) return;
    if (auto q = r.number(*s, "quantile", field + ".quantile", 0, 1)) {
        if (*q != 0.5 && *q != 0.9 && *q != 0.95 && *q != 0.99 && *q != 1.0)
            r.error(field + ".quantile",
                    "must be 0.5, 0.9, 0.95, 0.99 or 1, got " + json(*q).dump());
        else
            out.quantile = *q;
    }
    if (auto m = r.number(*s, "safetyMargin", field + ".safetyMargin", 0, 10))
        out.safety_margin = *m;
    if (std::string(res) == "cpu") {
        if (auto t = r.number(*s, "targetFulfilment", field + ".targetFulfilment", 0, 0.999))
            out.target_fulfilment = *t;
    } else if (s->contains("minHeadroom")) {
        if (auto q = node_quantity(r, (*s)["minHeadroom"], field + ".minHeadroom", false))
            out.min_headroom = *q;
    }
}

// The placeholders are {namespace} and {window}, as the CRD says; earlier versions also read
// ${namespace} and ${window}, which still mean the same.
std::string without_dollars(std::string t) {
    for (const char* placeholder : {"${namespace}", "${window}"}) {
        std::size_t pos = 0;
        while ((pos = t.find(placeholder, pos)) != std::string::npos) t.erase(pos, 1);
    }
    return t;
}

}  // namespace

ParsedSpec parse_spec(const json& object) {
    ParsedSpec out;
    Reader r{out.errors};
    const json* spec_ptr = &object;
    if (object.is_object() && object.contains("spec")) spec_ptr = &object["spec"];
    const json& spec = *spec_ptr;
    if (!spec.is_object()) {
        r.error("", "expected an object");
        return out;
    }
    AutoscalerSpec& s = out.spec;
    r.selector(spec, "selector", "selector", s.selector, true);
    if (auto mode = r.string(spec, "mode", "mode")) {
        // Recommend, earlier versions' name of Off, is still accepted and means the same.
        if (*mode == "Off" || *mode == "Recommend")
            s.mode = Mode::Off;
        else if (*mode == "InPlace")
            s.mode = Mode::InPlace;
        else
            r.error("mode", "must be Off, Recommend or InPlace, got \"" + *mode + "\"");
    }
    if (const json* m = r.object(spec, "model", "model")) {
        auto name = r.string(*m, "name", "model.name");
        const json* cm = r.object(*m, "configMap", "model.configMap");
        if (name && cm != nullptr)
            r.error("model", "give exactly one of model.name and model.configMap");
        if (cm != nullptr) {
            auto cm_name = r.string(*cm, "name", "model.configMap.name");
            auto cm_key = r.string(*cm, "key", "model.configMap.key");
            if (!cm_name || cm_name->empty()) r.error("model.configMap.name", "is required");
            if (!cm_key || cm_key->empty()) r.error("model.configMap.key", "is required");
            s.model.config_map = cm_name.value_or("");
            s.model.key = cm_key.value_or("");
            s.model.name.clear();
        } else if (name) {
            if (*name != "default")
                r.error("model.name", "unknown built-in model \"" + *name + "\" (known: default)");
            s.model.name = *name;
        }
    }
    read_policies(r, spec, s.container_policies);
    if (const json* res = r.object(spec, "resources", "resources")) {
        read_sizing(r, *res, "cpu", s.cpu);
        read_sizing(r, *res, "memory", s.memory);
    }
    if (auto d = r.number(spec, "debounceSamples", "debounceSamples", 1, 100)) {
        if (*d != static_cast<int>(*d))
            r.error("debounceSamples", "must be a whole number");
        else
            s.debounce_samples = static_cast<int>(*d);
    }
    if (auto m = r.number(spec, "minChange", "minChange", 0, 1)) s.min_change = *m;
    if (auto c = r.number(spec, "cooldownSeconds", "cooldownSeconds", 0, 1e9)) {
        if (*c != static_cast<int>(*c))
            r.error("cooldownSeconds", "must be a whole number");
        else
            s.cooldown_seconds = static_cast<int>(*c);
    }
    if (auto p = r.boolean(spec, "proactive", "proactive")) s.proactive = *p;
    if (const json* p = r.object(spec, "prometheus", "prometheus")) {
        if (auto url = r.string(*p, "url", "prometheus.url")) {
            if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
                r.error("prometheus.url", "must start with http:// or https://");
            else
                s.prometheus_url = *url;
        }
        if (const json* fq = r.object(*p, "featureQueries", "prometheus.featureQueries")) {
            for (auto it = fq->begin(); it != fq->end(); ++it) {
                if (!it.value().is_string() || it.value().get<std::string>().empty()) {
                    r.error("prometheus.featureQueries." + it.key(), "expected a PromQL template");
                    continue;
                }
                const std::string t = without_dollars(it.value().get<std::string>());
                if (t.find("{namespace}") == std::string::npos) {
                    r.error("prometheus.featureQueries." + it.key(), "must use {namespace}");
                    continue;
                }
                s.feature_queries[it.key()] = t;
            }
        }
    }
    return out;
}

}  // namespace phasescale::control
