// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: candidates
// try to take the Lease every retry_period; it is theirs when it does not exist, is released
// (no holder) or has not been renewed for leaseDurationSeconds as observed on the local clock.
// The leader renews it every retry_period and steps down if it could not renew for
// renew_deadline. Updates carry the Lease's resourceVersion, so two candidates never both win.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "phasescale/kube/client.hpp"

namespace phasescale::kube {

struct LeaderElectionConfig {
    std::string lease_namespace;
    std::string lease_name;
    std::string identity;  // unique per candidate (pod name, or host plus a random suffix)
    std::chrono::milliseconds lease_duration{15000};
    std::chrono::milliseconds renew_deadline{10000};
    std::chrono::milliseconds retry_period{2000};
    // On stop(), a leader clears the holder so that another candidate takes over at once.
    // False: it just stops renewing (the others wait for the lease to expire).
    bool release_on_stop = true;
};

// Called on the elector's thread: they must return quickly (start work on a thread of your own),
// or renewals wait for them.
struct LeaderCallbacks {
    std::function<void()> on_started_leading;
    std::function<void()> on_stopped_leading;
    // A new holder was observed (also our own identity).
    std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
public:
    // Throws std::invalid_argument if the durations are inconsistent (lease_duration must
    // exceed renew_deadline, which must exceed retry_period) or a name is missing.
    LeaderElector(Client client, LeaderElectionConfig config, LeaderCallbacks callbacks = {});
    ~LeaderElector();  // stop()
    LeaderElector(const LeaderElector&) = delete;
    LeaderElector& operator=(const LeaderElector&) = delete;

    // Campaigns in the background; after losing the lease it campaigns again.
    void start();
    // Stops campaigning or leading (on_stopped_leading if it led), releasing the lease if it
    // held it and release_on_stop is set.
    void stop();

    bool is_leader() const { return leading_; }
    // Leading, and the lease renewed less than renew_deadline ago (on the local clock): the
    // other candidates cannot have taken it yet. Writes are fenced on this, not on is_leader(),
    // which stays true while a renewal hangs.
    bool holds_fresh_lease() const;
    // The holder last observed (may be stale).
    std::string leader() const;
    const LeaderElectionConfig& config() const { return config_; }

private:
    enum class Attempt { Acquired, Held, Failed };
    void run(std::stop_token stop);
    Attempt try_acquire_or_renew(std::stop_token stop);
    void release();
    void observe(const std::string& holder);

    Client client_;
    LeaderElectionConfig config_;
    LeaderCallbacks callbacks_;

    mutable std::mutex mutex_;
    std::string observed_holder_;
    std::string observed_renew_time_;
    std::chrono::steady_clock::time_point observed_at_{};
    std::atomic<bool> leading_{false};
    std::atomic<std::chrono::steady_clock::rep> renewed_at_{0};  // last acquisition or renewal
    std::jthread thread_;
};

// Format of Lease times (metav1.MicroTime): 2006-01-02T15:04:05.000000Z.
std::string micro_time_now();

}  // namespace phasescale::kube
