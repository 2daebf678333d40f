#include "phasescale/control/server_check.hpp"

namespace phasescale::control {

namespace {

using nlohmann::json;

class KubeDiscovery final : public ServerDiscovery {
public:
    explicit KubeDiscovery(kube::Client client) : client_(std::move(client)) {}
    json version() override { return client_.server_version(); }
    json core_v1_resources() override { return client_.request("GET", "/api/v1"); }

private:
    kube::Client client_;
};

bool serves(const json& resources, const std::string& name) {
    if (!resources.is_object() || !resources.contains("resources") ||
        !resources["resources"].is_array())
        return false;
    for (const json& r : resources["resources"])
        if (r.is_object() && r.value("name", "") == name) return true;
    return false;
}

}  // namespace

ServerSupport check_server(ServerDiscovery& discovery) {
    ServerSupport s;
    try {
        const json v = discovery.version();
        if (v.is_object()) s.version = v.value("gitVersion", "");
    } catch (const std::exception&) {
        // The version is for the logs and the message only; discovery decides.
    }
    const std::string server =
        "the Kubernetes API server" + (s.version.empty() ? std::string() : " (" + s.version + ")");
    try {
        s.pod_resize = serves(discovery.core_v1_resources(), "pods/resize");
        if (!s.pod_resize)
            s.message = server +
                        " does not serve pods/resize: in-place resize needs Kubernetes 1.33 or "
                        "later (GA in 1.35)";
    } catch (const std::exception& e) {
        s.message = "cannot tell whether " + server + " serves pods/resize: " + e.what();
    }
    return s;
}

std::unique_ptr<ServerDiscovery> kube_discovery(kube::Client client) {
    return std::make_unique<KubeDiscovery>(std::move(client));
}

}  // namespace phasescale::control
