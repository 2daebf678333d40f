// Kubernetes watch events and objects as the operator decodes them: kube::decode_watch_event,
// the informer's object keys and labels, the pod fields the controller reads (control/pod.hpp)
// and API error bodies (kube::throw_api_error). None may throw what its caller does not expect.
#include <phasescale/control/pod.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/error.hpp>
#include <phasescale/kube/informer.hpp>
#include <phasescale/kube/selector.hpp>

#include "fuzz.hpp"

using namespace phasescale;
using nlohmann::json;

namespace {

// What the controller reads of a pod: none of it may throw, whatever the object holds.
void read_pod(const json& object) {
    json trimmed = object;
    control::trim_pod(trimmed);
    const json& pod = trimmed;
    for (const json* p : {&object, &pod}) {
        (void)control::pod_running(*p);
        (void)control::pod_name(*p);
        (void)control::pod_namespace(*p);
        (void)control::pod_uid(*p);
        const auto containers = control::container_resources(*p);
        (void)control::qos_class(containers);
        (void)control::container_resources(*p, "main");
        (void)control::resize_policy(*p, "main", "cpu");
        (void)control::resize_condition(*p);
        (void)control::container_status(*p, "main");
        (void)control::pod_workloads(*p);
        (void)control::vpa_controls(*p, *p);
    }
}

void read_object(const json& object) {
    (void)kube::labels_of(object);
    kube::LabelSelector selector;
    selector.match_labels["app"] = "train";
    (void)selector.matches(object);
    // The informer keys what it stores by metadata; an object without them fails the watch
    // (json::exception, caught as any error by Informer::run), which is what it should do.
    try {
        (void)kube::object_key(object);
    } catch (const json::exception&) {
    }
    read_pod(object);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = fuzz::text_of(data, size);
    std::string error;
    if (const auto event = kube::decode_watch_event(text, error)) {
        if (event->type == kube::WatchEventType::Error) {
            try {
                kube::throw_status(event->object, "WATCH", "/api/v1/pods");
            } catch (const kube::ApiError&) {
            }
        } else {
            read_object(event->object);
        }
    } else {
        fuzz::require(!error.empty(), "an undecodable event says why");
        const json object = json::parse(text, nullptr, false);
        if (!object.is_discarded()) read_object(object);
    }
    // The same bytes as the body of an error answer.
    try {
        kube::throw_api_error(422, text, "PATCH", "/api/v1/namespaces/a/pods/b");
    } catch (const kube::ApiError&) {
    }
    return 0;
}
