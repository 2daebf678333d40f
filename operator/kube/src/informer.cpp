#include "phasescale/kube/informer.hpp"

#include <random>
#include <set>

#include "phasescale/kube/rate_limit.hpp"

namespace phasescale::kube {

// ------------------------------------------------------------------------------------- Store

Store::ObjectPtr Store::get(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : it->second;
}

bool Store::contains(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return objects_.count(key) != 0;
}

std::vector<Store::ObjectPtr> Store::list() const {
    std::lock_guard lock(mutex_);
    std::vector<ObjectPtr> out;
    out.reserve(objects_.size());
    for (const auto& [key, obj] : objects_) out.push_back(obj);
    return out;
}

std::vector<std::string> Store::keys() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    out.reserve(objects_.size());
    for (const auto& [key, obj] : objects_) out.push_back(key);
    return out;
}

std::size_t Store::size() const {
    std::lock_guard lock(mutex_);
    return objects_.size();
}

Store::ObjectPtr Store::put(const std::string& key, ObjectPtr object) {
    std::lock_guard lock(mutex_);
    auto& slot = objects_[key];
    auto old = std::move(slot);
    slot = std::move(object);
    return old;
}

Store::ObjectPtr Store::erase(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return nullptr;
    auto old = std::move(it->second);
    objects_.erase(it);
    return old;
}

std::map<std::string, Store::ObjectPtr> Store::snapshot() const {
    std::lock_guard lock(mutex_);
    return objects_;
}

std::string object_key(const json& object) {
    const json& md = object.at("metadata");
    const std::string ns = string_field(md, "namespace");
    return object_key(std::string_view(ns), md.at("name").get<std::string>());
}

namespace {

std::string resource_version_of(const json& object) {
    return string_field(object, "metadata", "resourceVersion");
}

}  // namespace

ListChanges replace_with_list(Store& store, json items) {
    ListChanges changes;
    std::set<std::string> seen;
    for (auto& item : items) {
        std::string key = object_key(item);
        seen.insert(key);
        auto obj = std::make_shared<const json>(std::move(item));
        auto old = store.put(key, obj);
        if (!old)
            changes.added.push_back(obj);
        else if (resource_version_of(*old) != resource_version_of(*obj))
            changes.updated.emplace_back(old, obj);
    }
    for (const auto& key : store.keys()) {
        if (seen.count(key)) continue;
        if (auto old = store.erase(key)) changes.deleted.push_back(old);
    }
    return changes;
}

// ---------------------------------------------------------------------------------- Informer

Informer::Informer(Client client, Resource resource, InformerOptions options)
    : client_(std::move(client)), resource_(std::move(resource)), options_(std::move(options)) {}

Informer::~Informer() {
    stop();
}

void Informer::add_handlers(EventHandlers handlers) {
    std::lock_guard lock(handler_mutex_);
    handlers_.push_back(std::move(handlers));
}

void Informer::start() {
    if (running_.exchange(true)) return;
    thread_ = std::jthread([this](std::stop_token st) { run(st); });
    if (options_.resync_period.count() > 0) {
        resync_thread_ = std::jthread([this](std::stop_token st) { run_resync(st); });
    }
}

void Informer::stop() {
    if (!running_.exchange(false)) return;
    thread_.request_stop();
    resync_thread_.request_stop();
    {
        std::lock_guard lock(stream_mutex_);
        if (stream_) stream_->cancel();
    }
    if (thread_.joinable()) thread_.join();
    if (resync_thread_.joinable()) resync_thread_.join();
    std::lock_guard lock(stream_mutex_);
    stream_.reset();
}

bool Informer::wait_for_sync(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_mutex_);
    return synced_cv_.wait_for(lock, timeout, [this] { return synced_.load(); });
}

std::string Informer::last_resource_version() const {
    std::lock_guard lock(state_mutex_);
    return resource_version_;
}

InformerStats Informer::stats() const {
    std::lock_guard lock(state_mutex_);
    return stats_;
}

std::string Informer::last_error() const {
    std::lock_guard lock(state_mutex_);
    return last_error_;
}

void Informer::set_resource_version(const std::string& rv) {
    std::lock_guard lock(state_mutex_);
    resource_version_ = rv;
}

void Informer::dispatch_add(const json& object) {
    std::lock_guard lock(handler_mutex_);
    for (auto& h : handlers_) {
        if (h.on_add) h.on_add(object);
    }
}

void Informer::dispatch_update(const json& old_object, const json& new_object) {
    std::lock_guard lock(handler_mutex_);
    for (auto& h : handlers_) {
        if (h.on_update) h.on_update(old_object, new_object);
    }
}

void Informer::dispatch_delete(const json& object) {
    std::lock_guard lock(handler_mutex_);
    for (auto& h : handlers_) {
        if (h.on_delete) h.on_delete(object);
    }
}

// Lists everything and makes the store equal to it: adds for new keys, updates for changed
// resourceVersions, deletes for keys that are gone. Nothing is reported twice.
void Informer::relist(std::stop_token stop) {
    ListOptions lo;
    lo.label_selector = options_.label_selector;
    lo.field_selector = options_.field_selector;
    lo.limit = options_.page_size;
    RequestOptions ro;
    ro.stop = stop;
    ro.max_retries = 0;  // run() backs off and retries
    json list = client_.list_all(resource_, options_.ns, lo, ro, options_.transform);

    const ListChanges changes = replace_with_list(store_, std::move(list["items"]));
    for (const auto& obj : changes.added) dispatch_add(*obj);
    for (const auto& [old, obj] : changes.updated) dispatch_update(*old, *obj);
    for (const auto& old : changes.deleted) dispatch_delete(*old);
    std::string rv = list["metadata"].value("resourceVersion", "");
    {
        std::lock_guard lock(state_mutex_);
        resource_version_ = rv;
        ++stats_.lists;
        last_error_.clear();
        need_list_ = false;
    }
    if (!synced_.exchange(true)) {
        std::lock_guard lock(state_mutex_);
        synced_cv_.notify_all();
    }
}

bool Informer::watch_once(std::stop_token stop, std::chrono::seconds timeout) {
    WatchOptions wo;
    wo.resource_version = last_resource_version();
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.allow_bookmarks = true;
    wo.timeout = timeout;
    RequestOptions ro;
    ro.stop = stop;
    auto stream = std::make_shared<WatchStream>(client_.watch(resource_, options_.ns, wo, ro));
    {
        std::lock_guard lock(stream_mutex_);
        stream_ = stream;
    }
    {
        std::lock_guard lock(state_mutex_);
        ++stats_.watches;
    }
    if (stop.stop_requested()) stream->cancel();

    WatchEvent ev;
    while (stream->next(ev)) {
        if (ev.type == WatchEventType::Error) {
            int code = ev.object.is_object() ? ev.object.value("code", 0) : 0;
            std::lock_guard lock(state_mutex_);
            if (code == 410) {
                ++stats_.gone;
                last_error_ = "watch: " + ev.object.value("message", std::string("410 Gone"));
                return true;
            }
            ++stats_.errors;
            last_error_ = "watch ERROR event: " + ev.object.dump();
            return false;
        }
        std::string rv = resource_version_of(ev.object);
        if (ev.type == WatchEventType::Bookmark) {
            if (!rv.empty()) set_resource_version(rv);
            continue;
        }
        if (options_.transform) options_.transform(ev.object);
        std::string key = object_key(ev.object);
        auto obj = std::make_shared<const json>(std::move(ev.object));
        switch (ev.type) {
            case WatchEventType::Added:
            case WatchEventType::Modified: {
                auto old = store_.put(key, obj);
                if (old)
                    dispatch_update(*old, *obj);
                else
                    dispatch_add(*obj);
                break;
            }
            case WatchEventType::Deleted: {
                auto old = store_.erase(key);
                dispatch_delete(*obj);
                (void)old;
                break;
            }
            default: break;
        }
        std::lock_guard lock(state_mutex_);
        if (!rv.empty()) resource_version_ = rv;
        ++stats_.events;
    }
    if (!stream->end_reason().empty()) {
        std::lock_guard lock(state_mutex_);
        last_error_ = "watch ended: " + stream->end_reason();
    }
    return false;
}

void Informer::run(std::stop_token stop) {
    Backoff backoff(options_.backoff_initial, options_.backoff_max, 2.0, 0.2, options_.seed);
    // Each watch lasts a random time in [t, 2t), so that many informers do not reconnect together.
    std::mt19937_64 rng(options_.seed);
    const long long t = std::max<long long>(1, options_.watch_timeout.count());
    std::uniform_int_distribution<long long> watch_length(t, 2 * t - 1 < t ? t : 2 * t - 1);
    while (!stop.stop_requested()) {
        bool failed = false;
        try {
            bool need_list;
            {
                std::lock_guard lock(state_mutex_);
                need_list = need_list_ || resource_version_.empty();
            }
            if (need_list) relist(stop);
            bool gone = watch_once(stop, std::chrono::seconds(watch_length(rng)));
            if (gone) {
                std::lock_guard lock(state_mutex_);
                need_list_ = true;
            } else {
                backoff.reset();
            }
        } catch (const Cancelled&) {
            break;
        } catch (const Gone& e) {
            std::lock_guard lock(state_mutex_);
            ++stats_.gone;
            last_error_ = e.what();
            need_list_ = true;
        } catch (const std::exception& e) {
            std::lock_guard lock(state_mutex_);
            ++stats_.errors;
            last_error_ = e.what();
            failed = true;
        }
        {
            std::lock_guard lock(stream_mutex_);
            stream_.reset();
        }
        if (failed && !sleep_for(backoff.next(), stop)) break;
    }
}

void Informer::run_resync(std::stop_token stop) {
    while (sleep_for(options_.resync_period, stop)) {
        if (!synced_) continue;
        for (const auto& obj : store_.list()) {
            if (stop.stop_requested()) return;
            dispatch_update(*obj, *obj);
        }
        std::lock_guard lock(state_mutex_);
        ++stats_.resyncs;
    }
}

}  // namespace phasescale::kube
