#include "phasescale/loan/cluster_api.hpp"

#include "phasescale/loan/controller.hpp"

namespace phasescale::loan {

namespace {

class KubeClusterApi final : public ClusterApi {
public:
    KubeClusterApi(kube::Client client, const std::string& field_manager)
        : kube_(std::move(client)), field_manager_(field_manager), events_(kube_, field_manager) {}

    nlohmann::json capacity_loans() override { return kube_.list(resources::capacity_loans, ""); }
    nlohmann::json jobs(const kube::Resource& resource, const std::string& ns,
                        const std::string& label_selector) override {
        kube::ListOptions lo;
        lo.label_selector = label_selector;
        return kube_.list(resource, ns, lo);
    }
    nlohmann::json scale(const kube::Resource& resource, const std::string& ns,
                         const std::string& name) override {
        return kube_.get_scale(resource, ns, name);
    }
    nlohmann::json patch_node(const std::string& node, const nlohmann::json& merge_patch) override {
        kube::PatchOptions po;
        po.field_manager = field_manager_;
        return kube_.patch(kube::resources::nodes, "", node, merge_patch, kube::PatchType::Merge,
                           po);
    }
    void evict(const std::string& ns, const std::string& pod) override { kube_.evict(ns, pod); }
    void set_scale(const kube::Resource& resource, const std::string& ns, const std::string& name,
                   int replicas) override {
        kube_.set_scale(resource, ns, name, replicas);
    }
    void patch_status(const std::string& loan, const nlohmann::json& status) override {
        kube::PatchOptions po;
        po.subresource = "status";
        po.field_manager = field_manager_;
        kube_.patch(resources::capacity_loans, "", loan, nlohmann::json{{"status", status}},
                    kube::PatchType::Merge, po);
    }
    void record_event(const kube::ObjectReference& object, kube::EventType type,
                      const std::string& reason, const std::string& message) override {
        events_.record(object, type, reason, message);
    }

private:
    kube::Client kube_;
    std::string field_manager_;
    kube::EventRecorder events_;
};

}  // namespace

std::unique_ptr<ClusterApi> kube_cluster_api(kube::Client client,
                                             const std::string& field_manager) {
    return std::make_unique<KubeClusterApi>(std::move(client), field_manager);
}

}  // namespace phasescale::loan
