// The WriteQueue: writes run on its workers, a newer write replaces a waiting one of the same
// key, one key never runs twice at once, and results come back on the caller's thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <phasescale/control/write_queue.hpp>

using phasescale::control::WriteQueue;

namespace {

// Holds writes until opened, so that a test can queue behind a running one.
class Gate {
public:
    void wait() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return open_; });
    }
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

}  // namespace

TEST_CASE("write queue: results come back on the caller's thread, errors as text", "[unit]") {
    WriteQueue q(4);
    std::atomic<int> ran{0};
    std::vector<std::string> results;
    const auto caller = std::this_thread::get_id();
    bool on_caller = true;
    q.submit(
        "a", [&] { ++ran; },
        [&](const std::string& e) {
            on_caller = on_caller && std::this_thread::get_id() == caller;
            results.push_back("a:" + e);
        });
    q.submit(
        "b", [&] { throw std::runtime_error("403 forbidden"); },
        [&](const std::string& e) {
            on_caller = on_caller && std::this_thread::get_id() == caller;
            results.push_back("b:" + e);
        });
    q.wait_idle();
    CHECK(ran == 1);
    CHECK(results.empty());  // nothing is called behind the caller's back
    CHECK(q.run_completions() == 2);
    std::sort(results.begin(), results.end());
    CHECK(results == std::vector<std::string>{"a:", "b:403 forbidden"});
    CHECK(on_caller);
    CHECK(q.run_completions() == 0);
}

TEST_CASE(
    "write queue: a newer write of a waiting key replaces it, one key runs once at a time, in "
    "order",
    "[unit]") {
    WriteQueue q(4);
    Gate gate;
    std::mutex mutex;
    std::vector<std::string> order;
    std::atomic<int> running_x{0}, max_running_x{0};
    auto write_x = [&](const std::string& what) {
        return [&, what] {
            const int now = ++running_x;
            max_running_x = std::max(max_running_x.load(), now);
            if (what == "x1") gate.wait();
            {
                std::lock_guard lock(mutex);
                order.push_back(what);
            }
            --running_x;
        };
    };
    CHECK_FALSE(q.busy("x"));
    CHECK(q.submit("x", write_x("x1")));
    while (q.running() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(q.busy("x"));  // running
    // x1 runs; x2 waits behind it and is replaced by x3; other keys go on meanwhile.
    CHECK(q.submit("x", write_x("x2")));
    CHECK_FALSE(q.submit("x", write_x("x3")));
    q.submit("y", [&] {
        std::lock_guard lock(mutex);
        order.push_back("y");
    });
    while (true) {
        {
            std::lock_guard lock(mutex);
            if (!order.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(q.waiting() == 1);  // x3, behind the running x1
    gate.open();
    q.wait_idle();
    CHECK(order == std::vector<std::string>{"y", "x1", "x3"});
    CHECK_FALSE(q.busy("x"));
    CHECK(max_running_x == 1);
    CHECK(q.run_completions() == 3);
}

TEST_CASE("write queue: drop_waiting forgets what was not sent", "[unit]") {
    WriteQueue q(1);
    Gate gate;
    std::atomic<int> ran{0};
    q.submit("first", [&] {
        gate.wait();
        ++ran;
    });
    while (q.running() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 5; ++i) q.submit("k" + std::to_string(i), [&] { ++ran; });
    CHECK(q.drop_waiting() == 5);
    gate.open();
    q.wait_idle();
    CHECK(ran == 1);
    CHECK(q.run_completions() == 1);
}
