#include "phasescale/control/write_queue.hpp"

#include <algorithm>
#include <exception>

namespace phasescale::control {

WriteQueue::WriteQueue(std::size_t workers) {
    workers = std::max<std::size_t>(workers, 1);
    for (std::size_t i = 0; i < workers; ++i)
        workers_.emplace_back([this](std::stop_token stop) { worker(stop); });
}

WriteQueue::~WriteQueue() {
    drop_waiting();
    for (auto& w : workers_) w.request_stop();
    wake_.notify_all();
    workers_.clear();  // joins
}

bool WriteQueue::submit(const std::string& key, Work work, Done done) {
    bool added = false;
    {
        std::lock_guard lock(mutex_);
        added = waiting_.insert_or_assign(key, Item{std::move(work), std::move(done)}).second;
        if (added) order_.push_back(key);
    }
    wake_.notify_one();
    return added;
}

bool WriteQueue::busy(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return waiting_.count(key) != 0 || running_.count(key) != 0;
}

std::size_t WriteQueue::run_completions() {
    std::vector<Finished> finished;
    {
        std::lock_guard lock(mutex_);
        finished.swap(finished_);
    }
    for (Finished& f : finished)
        if (f.done) f.done(f.error);
    return finished.size();
}

std::size_t WriteQueue::drop_waiting() {
    std::lock_guard lock(mutex_);
    const std::size_t n = waiting_.size();
    waiting_.clear();
    order_.clear();
    if (running_.empty()) idle_.notify_all();
    return n;
}

void WriteQueue::wait_idle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return waiting_.empty() && running_.empty(); });
}

std::size_t WriteQueue::waiting() const {
    std::lock_guard lock(mutex_);
    return waiting_.size();
}

std::size_t WriteQueue::running() const {
    std::lock_guard lock(mutex_);
    return running_.size();
}

void WriteQueue::worker(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    while (!stop.stop_requested()) {
        // The oldest waiting key that is not running already.
        auto next = std::find_if(order_.begin(), order_.end(),
                                 [&](const std::string& k) { return running_.count(k) == 0; });
        if (next == order_.end()) {
            wake_.wait(lock, stop, [&] {
                return std::any_of(order_.begin(), order_.end(),
                                   [&](const std::string& k) { return running_.count(k) == 0; });
            });
            continue;
        }
        const std::string key = *next;
        order_.erase(next);
        auto found = waiting_.find(key);
        Item item = std::move(found->second);
        waiting_.erase(found);
        running_.insert(key);

        lock.unlock();
        std::string error;
        try {
            item.work();
        } catch (const std::exception& e) {
            error = e.what();
            if (error.empty()) error = "write failed";
        } catch (...) {
            error = "write failed";
        }
        lock.lock();

        running_.erase(key);
        finished_.push_back({std::move(item.done), std::move(error)});
        // A write of this key may have been queued while it ran.
        wake_.notify_all();
        if (waiting_.empty() && running_.empty()) idle_.notify_all();
    }
}

}  // namespace phasescale::control
