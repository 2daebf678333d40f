// A Kubernetes API client: CRUD, patches, subresources and watches of core objects and custom
// resources, with typed errors (error.hpp), retries where they are safe and a client-side rate
// limit. Bodies are nlohmann::json. cpprestsdk stays inside: this header does not include it.
//
// A Client is cheap to copy; copies share connections, the rate limiter and the token. All
// methods are thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "phasescale/kube/config.hpp"
#include "phasescale/kube/error.hpp"
#include "phasescale/kube/json.hpp"
#include "phasescale/kube/resource.hpp"

namespace phasescale::kube {

// Applies to one call (all its attempts).
struct RequestOptions {
    // Cancels the call (in flight or between retries): it throws Cancelled.
    std::stop_token stop;
    // Per attempt, instead of Config::request_timeout.
    std::optional<std::chrono::milliseconds> timeout;
    // Instead of Config::max_retries.
    std::optional<int> max_retries;
};

struct ListOptions {
    std::string label_selector;
    std::string field_selector;
    // Page size (0: everything at once); list() returns one page, list_all() follows continue.
    int limit = 0;
    std::string continue_token;
    // "" (most recent, quorum read), "0" (any, from the cache), or a version.
    std::string resource_version;
    std::string resource_version_match;  // "NotOlderThan", "Exact"
};

struct WriteOptions {
    std::string field_manager;
    bool dry_run = false;
};

enum class PatchType {
    Merge,           // application/merge-patch+json (RFC 7386)
    StrategicMerge,  // application/strategic-merge-patch+json (core types only)
    Json,            // application/json-patch+json (RFC 6902; the body is an array of operations)
    Apply,           // application/apply-patch+yaml: server-side apply (needs field_manager)
};

struct PatchOptions {
    std::string field_manager;
    bool force = false;       // server-side apply: take over fields other managers own
    std::string subresource;  // "status", "resize", "scale", ...
    bool dry_run = false;
};

struct DeleteOptions {
    std::optional<int> grace_period_seconds;
    std::string propagation_policy;  // "Foreground", "Background", "Orphan"
    std::string precondition_uid;
    std::string precondition_resource_version;
    bool dry_run = false;
};

struct WatchOptions {
    std::string resource_version;  // where to start; "" means "now" (after a synthetic ADDED of
                                   // every object)
    std::string label_selector;
    std::string field_selector;
    bool allow_bookmarks = true;
    // Server-side end of the watch (timeoutSeconds).
    std::chrono::seconds timeout{300};
    // How long to wait for the next bytes before taking the connection for dead and ending the
    // stream; by default timeout plus 30 s, so that only a dead connection hits it.
    std::optional<std::chrono::milliseconds> idle_timeout;
};

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };
const char* to_string(WatchEventType type);

struct WatchEvent {
    WatchEventType type = WatchEventType::Added;
    // The object; a Status for Error events.
    json object;
};

// One line of a watch stream ({"type": ..., "object": ...}) as an event; nullopt, with `error`
// saying why, for a line that is not one. Never throws.
std::optional<WatchEvent> decode_watch_event(std::string_view line, std::string& error);

// One watch request's stream of events. next() blocks until an event arrives; it returns false
// when the stream has ended (server closed it at timeoutSeconds, connection lost or timed out,
// or cancel()): the caller reconnects from the last resourceVersion it saw. ERROR events (e.g.
// code 410 "too old resource version") are returned as events of type Error.
class WatchStream {
public:
    WatchStream();
    ~WatchStream();
    WatchStream(WatchStream&&) noexcept;
    WatchStream& operator=(WatchStream&&) noexcept;

    bool next(WatchEvent& event);
    // Ends the stream from any thread; a blocked next() returns false.
    void cancel();
    // Why the stream ended, when it ended on an error rather than cleanly (empty otherwise).
    const std::string& end_reason() const;

    struct Impl;
    explicit WatchStream(std::shared_ptr<Impl> impl);

private:
    std::shared_ptr<Impl> impl_;
};

class Client {
public:
    // Checks the configuration (server URL, certificates and key parse, key matches
    // certificate, token file readable) and throws ConfigError if it cannot work.
    explicit Client(Config config);
    ~Client();
    Client(const Client&);
    Client& operator=(const Client&);
    Client(Client&&) noexcept;
    Client& operator=(Client&&) noexcept;

    const Config& config() const;

    json get(const Resource& resource, std::string_view ns, std::string_view name,
             std::string_view subresource = {}, const RequestOptions& request = {}) const;
    // nullopt instead of NotFound.
    std::optional<json> try_get(const Resource& resource, std::string_view ns,
                                std::string_view name, const RequestOptions& request = {}) const;

    // One page: a List with items, metadata.resourceVersion and metadata.continue.
    json list(const Resource& resource, std::string_view ns, const ListOptions& options = {},
              const RequestOptions& request = {}) const;
    // Every page (options.limit per page, 500 if 0), as one List whose resourceVersion is the
    // first page's (the snapshot all pages come from). If the continue token expires (410) it
    // starts again with a full list. `each_item`, if given, is applied to every item as its page
    // arrives (an informer trims objects there, so the whole list is never held in full).
    json list_all(const Resource& resource, std::string_view ns, ListOptions options = {},
                  const RequestOptions& request = {},
                  const std::function<void(json& item)>& each_item = {}) const;

    json create(const Resource& resource, std::string_view ns, const json& body,
                const WriteOptions& options = {}, const RequestOptions& request = {}) const;
    // PUT of the whole object (its metadata.name; metadata.resourceVersion makes it conditional).
    json update(const Resource& resource, std::string_view ns, const json& body,
                const WriteOptions& options = {}, const RequestOptions& request = {}) const;
    // PUT of the status subresource.
    json update_status(const Resource& resource, std::string_view ns, const json& body,
                       const WriteOptions& options = {}, const RequestOptions& request = {}) const;
    json patch(const Resource& resource, std::string_view ns, std::string_view name,
               const json& patch, PatchType type, const PatchOptions& options = {},
               const RequestOptions& request = {}) const;
    // Server-side apply of `body` (apiVersion, kind, metadata.name and the fields this manager
    // owns).
    json apply(const Resource& resource, std::string_view ns, const json& body,
               const std::string& field_manager, bool force = false,
               std::string_view subresource = {}, const RequestOptions& request = {}) const;
    // Returns what the server returned (the object, with deletionTimestamp if it has finalizers
    // or a grace period, or a Status).
    json remove(const Resource& resource, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {}, const RequestOptions& request = {}) const;

    // pods/NAME/resize: a strategic merge patch of spec.containers[].resources (by default).
    json resize(std::string_view ns, std::string_view pod, const json& patch,
                PatchType type = PatchType::StrategicMerge,
                const RequestOptions& request = {}) const;
    // pods/NAME/eviction (policy/v1 Eviction): 429 TooManyRequests if a disruption budget forbids
    // it.
    void evict(std::string_view ns, std::string_view pod, const DeleteOptions& options = {},
               const RequestOptions& request = {}) const;
    // The scale subresource (autoscaling/v1 Scale) of a Deployment or a custom resource that has
    // one.
    json get_scale(const Resource& resource, std::string_view ns, std::string_view name,
                   const RequestOptions& request = {}) const;
    json set_scale(const Resource& resource, std::string_view ns, std::string_view name,
                   int replicas, const RequestOptions& request = {}) const;

    // Starts a watch; throws (e.g. Gone for HTTP 410, Forbidden) if the server refuses it.
    WatchStream watch(const Resource& resource, std::string_view ns,
                      const WatchOptions& options = {}, const RequestOptions& request = {}) const;

    // Any request: `path` is the URL path, `query` is percent-encoded here. A null body sends none.
    json request(const std::string& method, const std::string& path,
                 const std::map<std::string, std::string>& query = {}, const json& body = nullptr,
                 const std::string& content_type = "application/json",
                 const RequestOptions& request = {}) const;

    // GET /version.
    json server_version(const RequestOptions& request = {}) const;

    struct Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace phasescale::kube
