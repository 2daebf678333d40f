#include "phasescale/kube/resource.hpp"

namespace phasescale::kube {

std::string Resource::api_version() const {
    return group.empty() ? version : group + "/" + version;
}

std::string Resource::path(std::string_view ns, std::string_view name,
                           std::string_view subresource) const {
    std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    if (namespaced && !ns.empty()) {
        p += "/namespaces/";
        p += ns;
    }
    p += "/";
    p += plural;
    if (!name.empty()) {
        p += "/";
        p += name;
        if (!subresource.empty()) {
            p += "/";
            p += subresource;
        }
    }
    return p;
}

std::string object_key(std::string_view ns, std::string_view name) {
    if (ns.empty()) return std::string(name);
    std::string key(ns);
    key += "/";
    key += name;
    return key;
}

}  // namespace phasescale::kube
