// What the operator checks of the API server at start: its version, and whether it serves the
// pods/resize subresource (in-place resize: beta in 1.33, GA in 1.35). Without it, InPlace
// autoscalers recommend as Off does and are not Ready; Off works on any server.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <phasescale/kube/client.hpp>

namespace phasescale::control {

// The two discovery reads, narrow so that the decision is unit-tested without a server.
class ServerDiscovery {
public:
    virtual ~ServerDiscovery() = default;
    virtual nlohmann::json version() = 0;            // GET /version
    virtual nlohmann::json core_v1_resources() = 0;  // GET /api/v1 (an APIResourceList)
};

struct ServerSupport {
    std::string version;      // gitVersion, e.g. "v1.35.0" ("" when it could not be read)
    bool pod_resize = false;  // pods/resize is served
    // Why InPlace cannot work here ("" when it can), for the Ready condition and the logs.
    std::string message;
};

// Never throws: a read that fails says so in the message (and counts as no pods/resize).
ServerSupport check_server(ServerDiscovery& discovery);

std::unique_ptr<ServerDiscovery> kube_discovery(kube::Client client);

}  // namespace phasescale::control
