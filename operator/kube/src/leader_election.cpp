#include "phasescale/kube/leader_election.hpp"

#include <cmath>
#include <ctime>
#include <stdexcept>

#include "phasescale/kube/rate_limit.hpp"

namespace phasescale::kube {

std::string micro_time_now() {
    auto now = std::chrono::system_clock::now();
    auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - secs).count();
    std::time_t t = std::chrono::system_clock::to_time_t(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(micros));
    return buf;
}

namespace {

int whole_seconds(std::chrono::milliseconds d) {
    return static_cast<int>(std::max<long long>(1, (d.count() + 999) / 1000));
}

}  // namespace

LeaderElector::LeaderElector(Client client, LeaderElectionConfig config, LeaderCallbacks callbacks)
    : client_(std::move(client)), config_(std::move(config)), callbacks_(std::move(callbacks)) {
    if (config_.lease_name.empty()) throw std::invalid_argument("leader election: no lease name");
    if (config_.lease_namespace.empty())
        throw std::invalid_argument("leader election: no lease namespace");
    if (config_.identity.empty()) throw std::invalid_argument("leader election: no identity");
    if (config_.lease_duration <= config_.renew_deadline) {
        throw std::invalid_argument(
            "leader election: lease_duration must be greater than renew_deadline");
    }
    if (config_.renew_deadline <= config_.retry_period) {
        throw std::invalid_argument(
            "leader election: renew_deadline must be greater than retry_period");
    }
    if (config_.retry_period.count() <= 0)
        throw std::invalid_argument("leader election: retry_period must be > 0");
}

LeaderElector::~LeaderElector() {
    stop();
}

void LeaderElector::start() {
    if (thread_.joinable()) return;
    thread_ = std::jthread([this](std::stop_token st) { run(st); });
}

void LeaderElector::stop() {
    if (!thread_.joinable()) return;
    thread_.request_stop();
    thread_.join();
    thread_ = std::jthread();
}

std::string LeaderElector::leader() const {
    std::lock_guard lock(mutex_);
    return observed_holder_;
}

void LeaderElector::observe(const std::string& holder) {
    bool changed;
    {
        std::lock_guard lock(mutex_);
        changed = holder != observed_holder_;
        observed_holder_ = holder;
    }
    if (changed && !holder.empty() && callbacks_.on_new_leader) callbacks_.on_new_leader(holder);
}

LeaderElector::Attempt LeaderElector::try_acquire_or_renew(std::stop_token stop) {
    RequestOptions ro;
    ro.stop = stop;
    // One attempt may take at most a retry period, so that a leader that cannot reach the
    // server notices within renew_deadline plus a retry period, before the lease expires.
    ro.timeout = std::max(config_.retry_period, std::chrono::milliseconds(1000));
    ro.max_retries = 0;
    const auto& leases = resources::leases;
    const std::string now = micro_time_now();
    const int duration = whole_seconds(config_.lease_duration);

    std::optional<json> lease;
    try {
        lease = client_.try_get(leases, config_.lease_namespace, config_.lease_name, ro);
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception&) {
        return Attempt::Failed;
    }
    if (!lease) {
        json body = {
            {"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
            {"spec",
             {{"holderIdentity", config_.identity},
              {"leaseDurationSeconds", duration},
              {"acquireTime", now},
              {"renewTime", now},
              {"leaseTransitions", 0}}}};
        try {
            client_.create(leases, config_.lease_namespace, body, {}, ro);
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception&) {
            return Attempt::Failed;  // another candidate created it first, or the server is away
        }
        {
            std::lock_guard lock(mutex_);
            observed_renew_time_ = now;
            observed_at_ = std::chrono::steady_clock::now();
        }
        observe(config_.identity);
        return Attempt::Acquired;
    }

    json spec = lease->value("spec", json::object());
    std::string holder = spec.value("holderIdentity", "");
    std::string renew_time = spec.value("renewTime", "");
    int lease_seconds = spec.value("leaseDurationSeconds", duration);
    auto steady_now = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point observed_at;
    {
        // Expiry is judged on our own clock, from when we first saw this record: clocks of
        // different machines need not agree.
        std::lock_guard lock(mutex_);
        if (holder != observed_holder_ || renew_time != observed_renew_time_) {
            observed_renew_time_ = renew_time;
            observed_at_ = steady_now;
        }
        observed_at = observed_at_;
    }
    observe(holder);
    if (!holder.empty() && holder != config_.identity &&
        steady_now < observed_at + std::chrono::seconds(lease_seconds)) {
        return Attempt::Held;
    }

    json updated = *lease;
    json& s = updated["spec"];
    if (!s.is_object()) s = json::object();
    if (holder != config_.identity) {
        s["acquireTime"] = now;
        s["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
    }
    s["holderIdentity"] = config_.identity;
    s["leaseDurationSeconds"] = duration;
    s["renewTime"] = now;
    try {
        // metadata.resourceVersion makes this conditional: a concurrent writer gets 409.
        client_.update(leases, config_.lease_namespace, updated, {}, ro);
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception&) {
        return Attempt::Failed;
    }
    {
        std::lock_guard lock(mutex_);
        observed_renew_time_ = now;
        observed_at_ = std::chrono::steady_clock::now();
    }
    observe(config_.identity);
    return Attempt::Acquired;
}

void LeaderElector::release() {
    RequestOptions ro;
    ro.timeout = std::max(config_.retry_period, std::chrono::milliseconds(1000));
    ro.max_retries = 1;
    // A renewal cancelled on our side may still land on the server after our read: its conflict
    // is answered by reading the lease again.
    constexpr int kAttempts = 3;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        try {
            auto lease =
                client_.try_get(resources::leases, config_.lease_namespace, config_.lease_name, ro);
            if (!lease || lease->value("spec", json::object()).value("holderIdentity", "") !=
                              config_.identity)
                return;
            json updated = *lease;
            const std::string now = micro_time_now();
            updated["spec"]["holderIdentity"] = "";
            updated["spec"]["leaseDurationSeconds"] = 1;
            updated["spec"]["renewTime"] = now;
            updated["spec"]["acquireTime"] = now;
            client_.update(resources::leases, config_.lease_namespace, updated, {}, ro);
            std::lock_guard lock(mutex_);
            observed_holder_.clear();
            return;
        } catch (const Conflict&) {
            continue;
        } catch (const std::exception&) {
            return;  // the lease expires by itself
        }
    }
}

bool LeaderElector::holds_fresh_lease() const {
    const std::chrono::steady_clock::time_point renewed{
        std::chrono::steady_clock::duration(renewed_at_.load())};
    return leading_ && std::chrono::steady_clock::now() - renewed < config_.renew_deadline;
}

void LeaderElector::run(std::stop_token stop) {
    try {
        while (!stop.stop_requested()) {
            // Campaign.
            Attempt a = Attempt::Failed;
            while (!stop.stop_requested()) {
                a = try_acquire_or_renew(stop);
                if (a == Attempt::Acquired) break;
                if (!sleep_for(config_.retry_period, stop)) break;
            }
            if (a != Attempt::Acquired || stop.stop_requested()) break;

            auto last_renew = std::chrono::steady_clock::now();
            renewed_at_ = last_renew.time_since_epoch().count();
            leading_ = true;
            if (callbacks_.on_started_leading) callbacks_.on_started_leading();
            // Renew until stopped, until another holder shows up, or until renew_deadline passed
            // without a successful renewal.
            while (sleep_for(config_.retry_period, stop)) {
                Attempt r = try_acquire_or_renew(stop);
                auto now = std::chrono::steady_clock::now();
                if (r == Attempt::Acquired) {
                    last_renew = now;
                    renewed_at_ = now.time_since_epoch().count();
                    continue;
                }
                if (r == Attempt::Held || now - last_renew >= config_.renew_deadline) break;
            }
            leading_ = false;
            if (stop.stop_requested() && config_.release_on_stop) release();
            if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
        }
    } catch (const Cancelled&) {
        if (leading_) {
            leading_ = false;
            if (config_.release_on_stop) release();
            if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
        }
    }
}

}  // namespace phasescale::kube
