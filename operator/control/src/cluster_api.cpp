#include "phasescale/control/cluster_api.hpp"

namespace phasescale::control {

namespace {

const kube::Resource kVpaResource{"autoscaling.k8s.io", "v1", "verticalpodautoscalers",
                                  "VerticalPodAutoscaler", true};

class KubeClusterApi final : public ClusterApi {
public:
    KubeClusterApi(kube::Client client, const std::string& field_manager)
        : kube_(std::move(client)), events_(kube_, field_manager) {}

    nlohmann::json config_map(const std::string& ns, const std::string& name) override {
        return kube_.get(kube::resources::config_maps, ns, name);
    }
    bool vpa_installed() override {
        return kube_
            .try_get(kube::resources::custom_resource_definitions, "",
                     "verticalpodautoscalers.autoscaling.k8s.io")
            .has_value();
    }
    std::vector<nlohmann::json> vpas(const std::string& ns) override {
        const nlohmann::json list = kube_.list(kVpaResource, ns);
        std::vector<nlohmann::json> items;
        if (list.contains("items"))
            for (const nlohmann::json& i : list["items"]) items.push_back(i);
        return items;
    }
    void resize(const std::string& ns, const std::string& pod,
                const nlohmann::json& body) override {
        kube_.resize(ns, pod, body);
    }
    void patch_pod(const std::string& ns, const std::string& pod,
                   const nlohmann::json& merge_patch) override {
        kube_.patch(kube::resources::pods, ns, pod, merge_patch, kube::PatchType::Merge);
    }
    void patch_status(const std::string& ns, const std::string& autoscaler,
                      const nlohmann::json& status) override {
        kube_.patch(kube::resources::phase_autoscalers, ns, autoscaler,
                    nlohmann::json{{"status", status}}, kube::PatchType::Merge,
                    kube::PatchOptions{"", false, "status", false});
    }
    void record_event(const kube::ObjectReference& pod, kube::EventType type,
                      const std::string& reason, const std::string& message) override {
        events_.record(pod, type, reason, message);
    }

private:
    kube::Client kube_;
    kube::EventRecorder events_;
};

}  // namespace

std::unique_ptr<ClusterApi> kube_cluster_api(kube::Client client,
                                             const std::string& field_manager) {
    return std::make_unique<KubeClusterApi>(std::move(client), field_manager);
}

}  // namespace phasescale::control
