// An informer: lists a resource, then watches it from the list's resourceVersion, keeping a
// thread-safe store (keyed namespace/name) equal to the server's state and calling handlers on
// every change. It reconnects with backoff when a watch ends or fails, relists when the server
// says the resourceVersion is too old (410 Gone, as an HTTP status or an ERROR event), and can
// replay every object to the update handler periodically (resync). Works for any Resource:
// pods, nodes, custom resources.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "phasescale/kube/client.hpp"

namespace phasescale::kube {

// Objects by key. Readers get shared, immutable objects. Thread-safe.
class Store {
public:
    using ObjectPtr = std::shared_ptr<const json>;

    ObjectPtr get(const std::string& key) const;
    bool contains(const std::string& key) const;
    std::vector<ObjectPtr> list() const;
    std::vector<std::string> keys() const;  // sorted
    std::size_t size() const;

    // Used by the informer. put() returns the previous object (null if new).
    ObjectPtr put(const std::string& key, ObjectPtr object);
    ObjectPtr erase(const std::string& key);
    std::map<std::string, ObjectPtr> snapshot() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, ObjectPtr> objects_;
};

// The key of an object: "namespace/name", or "name" when it has no namespace.
std::string object_key(const json& object);

// What a relist changed in a store.
struct ListChanges {
    std::vector<Store::ObjectPtr> added;
    std::vector<std::pair<Store::ObjectPtr, Store::ObjectPtr>> updated;  // old, new
    std::vector<Store::ObjectPtr> deleted;                               // as last known
};

// Makes `store` equal to a fresh list's items: keys not listed are erased; an object whose
// resourceVersion did not change counts as no change. Every change is reported once.
ListChanges replace_with_list(Store& store, json items);

struct EventHandlers {
    std::function<void(const json& object)> on_add;
    // old and new; on resync both are the same object.
    std::function<void(const json& old_object, const json& new_object)> on_update;
    // The last state the informer knew (after a relist, the object may be gone for a while).
    std::function<void(const json& object)> on_delete;
};

struct InformerOptions {
    std::string ns;  // empty: all namespaces (or cluster-scoped)
    std::string label_selector;
    std::string field_selector;
    int page_size = 500;
    // 0: no resync.
    std::chrono::milliseconds resync_period{0};
    // Each watch asks the server to end it after a random time in [watch_timeout, 2*watch_timeout).
    std::chrono::seconds watch_timeout{300};
    // Backoff between failed list or watch attempts.
    std::chrono::milliseconds backoff_initial{200};
    std::chrono::milliseconds backoff_max{15000};
    std::uint64_t seed = 1;
    // Applied to every object before it is stored or handed to a handler (listed or watched),
    // to keep only what the controller reads: a cache of thousands of pods stays small.
    std::function<void(json& object)> transform;
};

// What happened so far, for logs and tests.
struct InformerStats {
    std::uint64_t lists = 0;    // completed lists (the first one and every relist)
    std::uint64_t watches = 0;  // watch requests that got a stream
    std::uint64_t gone = 0;     // 410 Gone answers (HTTP or ERROR event)
    std::uint64_t errors = 0;   // other failed list or watch attempts
    std::uint64_t events = 0;   // watch events applied (bookmarks excluded)
    std::uint64_t resyncs = 0;
};

class Informer {
public:
    Informer(Client client, Resource resource, InformerOptions options = {});
    ~Informer();  // stops
    Informer(const Informer&) = delete;
    Informer& operator=(const Informer&) = delete;

    // Handlers run on the informer's threads, one call at a time, and must not call stop().
    // Add them before start().
    void add_handlers(EventHandlers handlers);

    // Starts listing and watching in the background. After stop(), start() resumes watching
    // from the last resourceVersion seen (relisting if that is too old by now).
    void start();
    // Ends the watch and joins the threads; handlers are not called after it returns.
    void stop();
    bool running() const { return running_; }

    // True once the first list has been stored.
    bool has_synced() const { return synced_; }
    bool wait_for_sync(std::chrono::milliseconds timeout) const;

    const Store& store() const { return store_; }
    const Resource& resource() const { return resource_; }
    std::string last_resource_version() const;
    InformerStats stats() const;
    // The last error (empty if none since the last successful list or watch).
    std::string last_error() const;

private:
    void run(std::stop_token stop);
    void run_resync(std::stop_token stop);
    void relist(std::stop_token stop);
    // Watches until the stream ends; returns true if a relist is needed (410).
    bool watch_once(std::stop_token stop, std::chrono::seconds timeout);
    void dispatch_add(const json& object);
    void dispatch_update(const json& old_object, const json& new_object);
    void dispatch_delete(const json& object);
    void set_resource_version(const std::string& rv);

    Client client_;
    Resource resource_;
    InformerOptions options_;
    std::vector<EventHandlers> handlers_;
    Store store_;

    std::mutex handler_mutex_;  // one handler call at a time
    mutable std::mutex state_mutex_;
    mutable std::condition_variable synced_cv_;
    std::string resource_version_;
    std::string last_error_;
    InformerStats stats_;
    std::atomic<bool> synced_{false};
    std::atomic<bool> running_{false};
    bool need_list_ = true;

    std::mutex stream_mutex_;
    std::shared_ptr<WatchStream> stream_;
    std::jthread thread_;
    std::jthread resync_thread_;
};

}  // namespace phasescale::kube
