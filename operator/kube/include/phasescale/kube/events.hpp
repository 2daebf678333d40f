// Kubernetes Events (core/v1): what the operator did to an object, for `kubectl describe` and
// `kubectl get events`. A repeat of the same event (same object, type, reason and message)
// within ten minutes increments the existing Event's count instead of creating another.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "phasescale/kube/client.hpp"

namespace phasescale::kube {

struct ObjectReference {
    std::string api_version;
    std::string kind;
    std::string ns;
    std::string name;
    std::string uid;
    std::string resource_version;
    std::string field_path;

    json to_json() const;
};

// The reference to an object as the server returned it (apiVersion, kind, metadata).
ObjectReference reference_to(const json& object);

enum class EventType { Normal, Warning };

class EventRecorder {
public:
    // component: the reporting controller ("phasescale-operator"); instance: this replica
    // (defaults to the host name).
    EventRecorder(Client client, std::string component, std::string instance = {});

    // Creates (or, for a repeat, updates) the Event in the object's namespace ("default" for
    // cluster-scoped objects) and returns it. Throws like the client does.
    json record(const ObjectReference& object, EventType type, const std::string& reason,
                const std::string& message);

private:
    struct Seen {
        std::string name;
        std::string ns;
        int count = 0;
        std::chrono::steady_clock::time_point last;
    };

    Client client_;
    std::string component_;
    std::string instance_;
    std::mutex mutex_;
    std::map<std::string, Seen> seen_;
};

}  // namespace phasescale::kube
