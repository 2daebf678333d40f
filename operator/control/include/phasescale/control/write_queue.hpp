// Writes to the API server, sent by a few worker threads so that a tick only decides: a tick over
// thousands of pods must not wait for each patch in turn.
//
// Writes carry a key (e.g. "marks/ns/pod"). A write queued under a key that is still waiting
// replaces the waiting one (the newer marks of a pod win; the replaced write's `done` is not
// called). Writes under one key never run at the same time, and run in the order queued.
// Each write's `done` runs later on the caller's thread, in run_completions(), so whoever owns
// the queue keeps its state without locks.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace phasescale::control {

class WriteQueue {
public:
    using Work = std::function<void()>;                          // throws on failure
    using Done = std::function<void(const std::string& error)>;  // empty error: it succeeded

    explicit WriteQueue(std::size_t workers);
    ~WriteQueue();  // drops what is waiting, waits for what runs
    WriteQueue(const WriteQueue&) = delete;
    WriteQueue& operator=(const WriteQueue&) = delete;

    // True when queued anew, false when it replaced a waiting write of the same key.
    bool submit(const std::string& key, Work work, Done done = {});
    // A write of this key is waiting or running.
    bool busy(const std::string& key) const;
    // Calls the `done` of every write finished since the last call; returns how many.
    std::size_t run_completions();
    // Drops every waiting write (their `done` is not called); running ones finish.
    std::size_t drop_waiting();
    // Blocks until nothing waits or runs.
    void wait_idle();

    std::size_t waiting() const;
    std::size_t running() const;

private:
    struct Item {
        Work work;
        Done done;
    };
    struct Finished {
        Done done;
        std::string error;
    };
    void worker(std::stop_token stop);

    mutable std::mutex mutex_;
    std::condition_variable_any wake_;  // work to do, or stopping
    std::condition_variable idle_;
    std::deque<std::string> order_;  // waiting keys, oldest first
    std::map<std::string, Item> waiting_;
    std::set<std::string> running_;
    std::vector<Finished> finished_;
    std::vector<std::jthread> workers_;
};

}  // namespace phasescale::control
