#include "phasescale/kube/events.hpp"
#include "phasescale/kube/time.hpp"

#include <unistd.h>

#include <ctime>

namespace phasescale::kube {

namespace {

// How long a repeat counts as the same Event (client-go's event correlator uses ten minutes).
constexpr auto kRepeatWindow = std::chrono::minutes(10);
// The API server rejects longer messages in events.k8s.io; keep core Events within it too.
constexpr std::size_t kMaxMessage = 1024;

std::string rfc3339_now() {
    return format_time(static_cast<double>(std::time(nullptr)));
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

}  // namespace

json ObjectReference::to_json() const {
    json j = json::object();
    if (!api_version.empty()) j["apiVersion"] = api_version;
    if (!kind.empty()) j["kind"] = kind;
    if (!ns.empty()) j["namespace"] = ns;
    if (!name.empty()) j["name"] = name;
    if (!uid.empty()) j["uid"] = uid;
    if (!resource_version.empty()) j["resourceVersion"] = resource_version;
    if (!field_path.empty()) j["fieldPath"] = field_path;
    return j;
}

ObjectReference reference_to(const json& object) {
    ObjectReference r;
    r.api_version = string_field(object, "apiVersion");
    r.kind = string_field(object, "kind");
    if (object.contains("metadata")) {
        const json& md = object["metadata"];
        r.ns = string_field(md, "namespace");
        r.name = string_field(md, "name");
        r.uid = string_field(md, "uid");
        r.resource_version = string_field(md, "resourceVersion");
    }
    return r;
}

EventRecorder::EventRecorder(Client client, std::string component, std::string instance)
    : client_(std::move(client)),
      component_(std::move(component)),
      instance_(instance.empty() ? host_name() : std::move(instance)) {}

json EventRecorder::record(const ObjectReference& object, EventType type, const std::string& reason,
                           const std::string& message) {
    const std::string type_name = type == EventType::Warning ? "Warning" : "Normal";
    const std::string ns = object.ns.empty() ? "default" : object.ns;
    std::string text =
        message.size() > kMaxMessage ? message.substr(0, kMaxMessage - 3) + "..." : message;
    const std::string key = object.uid + "|" + ns + "|" + object.kind + "|" + object.name + "|" +
                            type_name + "|" + reason + "|" + text;
    const std::string now = rfc3339_now();
    auto steady_now = std::chrono::steady_clock::now();

    std::unique_lock lock(mutex_);
    for (auto it = seen_.begin(); it != seen_.end();) {
        it = steady_now - it->second.last > kRepeatWindow ? seen_.erase(it) : std::next(it);
    }
    auto it = seen_.find(key);
    if (it != seen_.end()) {
        Seen& s = it->second;
        try {
            json updated = client_.patch(resources::events, s.ns, s.name,
                                         json{{"count", s.count + 1}, {"lastTimestamp", now}},
                                         PatchType::Merge);
            s.count += 1;
            s.last = steady_now;
            return updated;
        } catch (const NotFound&) {
            seen_.erase(it);  // expired on the server: create a new one
        }
    }

    // Names as client-go makes them: the object's name and a unique hex suffix.
    auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos));
    std::string name = (object.name.empty() ? std::string("object") : object.name) + suffix;
    json body = {{"apiVersion", "v1"},
                 {"kind", "Event"},
                 {"metadata", {{"name", name}, {"namespace", ns}}},
                 {"involvedObject", object.to_json()},
                 {"reason", reason},
                 {"message", text},
                 {"type", type_name},
                 {"source", {{"component", component_}, {"host", instance_}}},
                 {"reportingComponent", component_},
                 {"reportingInstance", instance_},
                 {"firstTimestamp", now},
                 {"lastTimestamp", now},
                 {"count", 1}};
    json created = client_.create(resources::events, ns, body);
    seen_[key] = Seen{name, ns, 1, steady_now};
    return created;
}

}  // namespace phasescale::kube
