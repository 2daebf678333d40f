// The cluster simulator: events are arrivals, completions and inference load changes; after every
// event time the scheduler re-plans (loans and reclaims, base demands, extra workers).

#include <phasescale/sim/cluster.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace phasescale::sim {

std::string_view cluster_policy_name(ClusterPolicy policy) {
    switch (policy) {
        case ClusterPolicy::baseline: return "baseline";
        case ClusterPolicy::loan: return "loan";
        case ClusterPolicy::elastic: return "elastic";
        case ClusterPolicy::aryl: return "aryl";
    }
    return "?";
}

std::optional<ClusterPolicy> parse_cluster_policy(std::string_view name) {
    for (ClusterPolicy p : kClusterPolicies) {
        if (cluster_policy_name(p) == name) return p;
    }
    return std::nullopt;
}

bool loans(ClusterPolicy policy) {
    return policy == ClusterPolicy::loan || policy == ClusterPolicy::aryl;
}
bool scales(ClusterPolicy policy) {
    return policy == ClusterPolicy::elastic || policy == ClusterPolicy::aryl;
}

policy::ScalingCurve job_curve(const policy::ScalingCurve& model_curve, int min_workers) {
    if (model_curve.points().empty()) return {};
    const double n0 = model_curve.points().front().first;
    std::vector<std::pair<double, double>> points;
    for (const auto& [gpus, throughput] : model_curve.points())
        points.emplace_back(gpus / n0 * min_workers, throughput);
    return policy::ScalingCurve(std::move(points));
}

double nearest_rank(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

namespace {

// Jobs finish when their remaining work is below this many seconds (floating-point slack).
constexpr double kDoneSlack_s = 1e-6;

struct Job {
    const ClusterJob* spec = nullptr;
    policy::ScalingCurve curve;  // in the job's workers
    JobState state = JobState::future;
    double remaining_s = 0;  // run time left at min_workers on training GPUs
    double rate = 0;         // seconds of remaining_s done per second
    double wait_since = 0;
    std::vector<policy::Placement> placements;  // job = server index here
    int workers = 0;
    int loaned_workers = 0;
};

class Simulator {
public:
    Simulator(const std::vector<ClusterJob>& specs, const std::vector<LoadPoint>& load,
              const std::vector<std::pair<std::string, policy::ScalingCurve>>& curves,
              ClusterPolicy policy, const ClusterOptions& options, const ClusterObserver& observer)
        : load_(load), policy_(policy), options_(options), observer_(observer) {
        check_options();
        std::stable_sort(load_.begin(), load_.end(), [](const LoadPoint& a, const LoadPoint& b) {
            return a.time_s < b.time_s;
        });
        const int g = options.gpus_per_server;
        for (int i = 0; i < options.training_servers; ++i)
            servers_.push_back({g, false, false, false, {}});
        for (int i = 0; i < options.inference_servers; ++i)
            servers_.push_back({g, true, false, false, {}});
        free_.assign(servers_.size(), g);

        result_.policy = policy;
        result_.jobs.resize(specs.size());
        jobs_.resize(specs.size());
        shrunk_.assign(specs.size(), false);
        const long long training_gpus = static_cast<long long>(options.training_servers) * g;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const ClusterJob& s = specs[i];
            check_job(s);
            Job& job = jobs_[i];
            job.spec = &s;
            job.remaining_s = s.duration_s;
            job.curve = job_curve(find_curve(curves, s.curve), s.min_workers);
            if (static_cast<long long>(s.min_workers) * s.gpus_per_worker > training_gpus ||
                s.gpus_per_worker > g) {
                result_.jobs[i].rejected =
                    true;  // could never start in the baseline: left out everywhere
                job.state = JobState::done;
                continue;
            }
            arrivals_.push_back(i);
            horizon_ = std::max(horizon_, s.submit_s);
        }
        std::stable_sort(arrivals_.begin(), arrivals_.end(), [&](std::size_t a, std::size_t b) {
            return specs[a].submit_s < specs[b].submit_s;
        });
        if (!load_.empty()) horizon_ = std::max(horizon_, load_.back().time_s);
        if (options.horizon_s > 0) horizon_ = options.horizon_s;
        sample_every_ = horizon_ > 0 ? horizon_ / std::max(options.timeline_points, 1) : 0;
    }

    ClusterResult run() {
        now_ = 0;
        if (!arrivals_.empty()) now_ = std::min(now_, jobs_[arrivals_.front()].spec->submit_s);
        if (!load_.empty()) now_ = std::min(now_, load_.front().time_s);
        for (;;) {
            const double next = next_event();
            if (!std::isfinite(next)) break;
            advance(next);
            finish_jobs();
            while (next_arrival_ < arrivals_.size() &&
                   jobs_[arrivals_[next_arrival_]].spec->submit_s <= now_) {
                active_.push_back(arrivals_[next_arrival_]);
                Job& job = jobs_[arrivals_[next_arrival_++]];
                job.state = JobState::waiting;
                job.wait_since = now_;
            }
            while (next_load_ < load_.size() && load_[next_load_].time_s <= now_) {
                needed_ = servers_needed(load_[next_load_++].load);
            }
            schedule();
            ++result_.metrics.events;
            record();
            if (observer_) observer_(snapshot());
        }
        if (result_.timeline.empty() || result_.timeline.back().time_s != now_) record(true);
        summarise();
        return std::move(result_);
    }

private:
    // ---- inputs

    void check_options() const {
        const ClusterOptions& o = options_;
        if (o.training_servers < 1)
            throw std::invalid_argument("training servers must be at least 1");
        if (o.inference_servers < 0)
            throw std::invalid_argument("inference servers must be at least 0");
        if (o.gpus_per_server < 1)
            throw std::invalid_argument("GPUs per server must be at least 1");
        if (!(o.loaned_speed > 0 && o.loaned_speed <= 1))
            throw std::invalid_argument("loaned speed must be in (0, 1]");
    }

    static void check_job(const ClusterJob& s) {
        const std::string where = "job '" + s.id + "': ";
        if (s.gpus_per_worker < 1)
            throw std::invalid_argument(where + "GPUs per worker must be at least 1");
        if (s.min_workers < 1)
            throw std::invalid_argument(where + "min workers must be at least 1");
        if (s.max_workers < s.min_workers)
            throw std::invalid_argument(where + "max workers below min workers");
        if (!(s.duration_s > 0) || !std::isfinite(s.duration_s))
            throw std::invalid_argument(where + "duration must be positive");
        if (!std::isfinite(s.submit_s))
            throw std::invalid_argument(where + "submit time is not a number");
    }

    static const policy::ScalingCurve& find_curve(
        const std::vector<std::pair<std::string, policy::ScalingCurve>>& curves,
        const std::string& name) {
        static const policy::ScalingCurve linear;
        if (name.empty() || name == "linear") return linear;
        for (const auto& [n, c] : curves) {
            if (n == name) return c;
        }
        throw std::invalid_argument("no scaling curve named '" + name + "'");
    }

    int servers_needed(double load) const {
        const double share = std::clamp(load, 0.0, 1.0);
        return static_cast<int>(std::ceil(share * options_.inference_servers - 1e-9));
    }

    // ---- time

    double next_event() const {
        double next = std::numeric_limits<double>::infinity();
        if (next_arrival_ < arrivals_.size()) next = jobs_[arrivals_[next_arrival_]].spec->submit_s;
        if (next_load_ < load_.size()) next = std::min(next, load_[next_load_].time_s);
        for (std::size_t j : active_) {
            const Job& job = jobs_[j];
            if (job.state == JobState::running)
                next = std::min(next, now_ + job.remaining_s / job.rate);
        }
        return std::max(next, now_);
    }

    void advance(double to) {
        const double dt = to - now_;
        if (dt > 0) {
            for (std::size_t j : active_) {
                if (jobs_[j].state == JobState::running) jobs_[j].remaining_s -= dt * jobs_[j].rate;
            }
            // Usage integrals over [0, horizon].
            const double from = std::clamp(now_, 0.0, horizon_),
                         until = std::clamp(to, 0.0, horizon_);
            if (until > from) {
                const Usage u = usage();
                training_gpu_s_ += (until - from) * u.training;
                loaned_gpu_s_ += (until - from) * u.loaned;
                inference_gpu_s_ += (until - from) * u.inference;
                loaned_server_s_ += (until - from) * u.loaned_servers;
            }
        }
        now_ = to;
    }

    void finish_jobs() {
        for (std::size_t i : active_) {
            Job& job = jobs_[i];
            if (job.state != JobState::running || job.remaining_s > kDoneSlack_s) continue;
            release(i);
            job.state = JobState::done;
            job.remaining_s = 0;
            result_.jobs[i].finish_s = now_;
            ++result_.jobs[i].finishes;
        }
        std::erase_if(active_, [&](std::size_t j) { return jobs_[j].state == JobState::done; });
    }

    // ---- placements: the one place that changes who runs where

    void place(std::size_t j, std::size_t s, int workers) {
        Job& job = jobs_[j];
        free_[s] -= workers * job.spec->gpus_per_worker;
        job.workers += workers;
        if (servers_[s].loaned) job.loaned_workers += workers;
        auto add = [workers](std::vector<policy::Placement>& list, std::size_t index) {
            for (auto& p : list) {
                if (p.job == index) {
                    p.workers += workers;
                    return;
                }
            }
            list.push_back({index, workers});
        };
        add(servers_[s].placements, j);
        add(job.placements, s);
    }

    // Removes up to `workers` of job j's workers from server s (all of them by default).
    void remove(std::size_t j, std::size_t s, int workers = std::numeric_limits<int>::max()) {
        Job& job = jobs_[j];
        auto take = [&](std::vector<policy::Placement>& list, std::size_t index) {
            for (auto it = list.begin(); it != list.end(); ++it) {
                if (it->job != index) continue;
                const int n = std::min(workers, it->workers);
                it->workers -= n;
                if (it->workers == 0) list.erase(it);
                return n;
            }
            return 0;
        };
        const int n = take(servers_[s].placements, j);
        take(job.placements, s);
        free_[s] += n * job.spec->gpus_per_worker;
        job.workers -= n;
        if (servers_[s].loaned) job.loaned_workers -= n;
    }

    void release(std::size_t j) {
        while (!jobs_[j].placements.empty()) remove(j, jobs_[j].placements.back().job);
    }

    // ---- the inference pool: loans and reclaims

    std::vector<std::size_t> inference_servers(bool busy, bool loaned) const {
        std::vector<std::size_t> out;
        for (std::size_t s = 0; s < servers_.size(); ++s) {
            if (servers_[s].inference && servers_[s].busy == busy && servers_[s].loaned == loaned)
                out.push_back(s);
        }
        return out;
    }

    void adjust_inference_pool() {
        std::vector<std::size_t> busy = inference_servers(true, false);
        int change = needed_ - static_cast<int>(busy.size());
        // Inference needs fewer servers: the highest-numbered busy ones turn idle.
        for (; change < 0; ++change) {
            servers_[busy.back()].busy = false;
            busy.pop_back();
        }
        // It needs more: idle servers first, then loaned ones by the reclaim order.
        for (std::size_t s : inference_servers(false, false)) {
            if (change == 0) break;
            servers_[s].busy = true;
            --change;
        }
        if (change > 0) reclaim(static_cast<std::size_t>(change));
        if (loans(policy_)) {
            for (std::size_t s : inference_servers(false, false)) {
                servers_[s].loaned = true;
                ++result_.metrics.loans;
            }
        }
    }

    void reclaim(std::size_t k) {
        std::vector<policy::ReclaimJob> view(jobs_.size());
        for (std::size_t j = 0; j < jobs_.size(); ++j) {
            const Job& job = jobs_[j];
            const bool elastic = scales(policy_) && job.spec->elastic();
            view[j] = {job.spec->gpus_per_worker, job.workers,
                       elastic ? job.spec->min_workers : job.workers};
        }
        std::vector<policy::ReclaimServer> servers(servers_.size());
        for (std::size_t s = 0; s < servers_.size(); ++s)
            servers[s] = {servers_[s].loaned, servers_[s].placements};
        const policy::ReclaimPlan plan = policy::plan_reclaim(view, servers, k);

        for (const policy::ReclaimStep& step : plan.steps) {
            const std::size_t s = step.server;
            std::vector<policy::Placement> on_server = servers_[s].placements;
            for (const policy::Placement& p : on_server) {
                if (plan.preempted[p.job]) continue;  // below
                remove(p.job, s);
            }
            for (const policy::Placement& p : on_server) {
                if (!plan.preempted[p.job] && plan.workers_lost[p.job] > 0 && !shrunk_[p.job]) {
                    shrunk_[p.job] = true;
                    ++result_.metrics.shrinks;
                }
            }
        }
        for (std::size_t j = 0; j < jobs_.size(); ++j) {
            if (!plan.preempted[j]) continue;
            release(j);
            jobs_[j].state = JobState::waiting;
            jobs_[j].wait_since = now_;
            ++result_.jobs[j].preemptions;
            ++result_.metrics.preemptions;
        }
        for (const policy::ReclaimStep& step : plan.steps) {
            servers_[step.server].loaned = false;
            servers_[step.server].busy = true;
            ++result_.metrics.reclaims;
        }
        std::fill(shrunk_.begin(), shrunk_.end(), false);
    }

    // ---- the scheduler

    // Servers job j may use: the training pool, and loaned servers under a loaning policy.
    bool usable(std::size_t s) const { return !servers_[s].inference || servers_[s].loaned; }

    // Best fit: the usable server with the fewest free GPUs that still holds a worker; training
    // servers before loaned ones (or loaned first, for extra workers: cheap to reclaim).
    std::size_t best_fit(int gpus_per_worker, bool loaned_first) const {
        std::size_t best = servers_.size();
        auto rank = [&](std::size_t s) { return servers_[s].loaned == loaned_first ? 0 : 1; };
        for (std::size_t s = 0; s < servers_.size(); ++s) {
            if (!usable(s) || free_[s] < gpus_per_worker) continue;
            if (best == servers_.size() || rank(s) < rank(best) ||
                (rank(s) == rank(best) && free_[s] < free_[best]))
                best = s;
        }
        return best;
    }

    int worker_slots(int gpus_per_worker) const {
        int slots = 0;
        for (std::size_t s = 0; s < servers_.size(); ++s) {
            if (usable(s)) slots += free_[s] / gpus_per_worker;
        }
        return slots;
    }

    // Shortest remaining time first (at base demand); ties by submission, then input order.
    std::vector<std::size_t> by_remaining_time(JobState state) const {
        std::vector<std::size_t> order;
        for (std::size_t j : active_) {
            if (jobs_[j].state == state) order.push_back(j);
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            if (jobs_[a].remaining_s != jobs_[b].remaining_s)
                return jobs_[a].remaining_s < jobs_[b].remaining_s;
            return jobs_[a].spec->submit_s < jobs_[b].spec->submit_s;
        });
        return order;
    }

    void schedule() {
        adjust_inference_pool();

        // Extra workers are re-planned from scratch: base demands come first.
        for (std::size_t j : active_) {
            Job& job = jobs_[j];
            if (job.state != JobState::running) continue;
            // Off loaned servers first, so the base demand stays on the faster training pool; then
            // off the servers where the job has the fewest workers, so that it stays packed and
            // leaves whole servers free for jobs with large workers.
            while (job.workers > job.spec->min_workers) {
                const policy::Placement* from = &job.placements.front();
                for (const auto& p : job.placements) {
                    const bool loaned = servers_[p.job].loaned,
                               from_loaned = servers_[from->job].loaned;
                    if (loaned != from_loaned ? loaned : p.workers < from->workers) from = &p;
                }
                remove(j, from->job, job.workers - job.spec->min_workers);
            }
        }

        // Base demands, shortest remaining time first; a job that does not fit waits and the next
        // one may go ahead (backfilling).
        for (std::size_t j : by_remaining_time(JobState::waiting)) {
            Job& job = jobs_[j];
            const int g = job.spec->gpus_per_worker;
            if (worker_slots(g) < job.spec->min_workers) continue;
            for (int w = 0; w < job.spec->min_workers; ++w) place(j, best_fit(g, false), 1);
            job.state = JobState::running;
            JobOutcome& outcome = result_.jobs[j];
            outcome.queue_s += now_ - job.wait_since;
            if (outcome.first_start_s < 0) outcome.first_start_s = now_;
        }

        if (scales(policy_)) grant_extra_workers();

        for (std::size_t j : active_) {
            Job& job = jobs_[j];
            if (job.state != JobState::running) continue;
            const double effective =
                (job.workers - job.loaned_workers) + options_.loaned_speed * job.loaned_workers;
            job.rate = job.curve.speedup(job.spec->min_workers, effective);
        }
    }

    // The knapsack over the GPUs left: each running elastic job a class, option k = k extra
    // workers worth the JCT reduction they bring (at training-GPU speed).
    void grant_extra_workers() {
        std::vector<std::size_t> elastic;
        std::vector<policy::KnapsackClass> classes;
        for (std::size_t j : by_remaining_time(JobState::running)) {
            const Job& job = jobs_[j];
            if (!job.spec->elastic()) continue;
            policy::KnapsackClass c;
            c.gpus_per_worker = job.spec->gpus_per_worker;
            for (int k = 0; k <= job.spec->max_workers - job.spec->min_workers; ++k) {
                c.values.push_back(
                    policy::jct_reduction(job.curve, job.remaining_s, job.spec->min_workers, k));
            }
            elastic.push_back(j);
            classes.push_back(std::move(c));
        }
        if (elastic.empty()) return;
        int capacity = 0;
        for (std::size_t s = 0; s < servers_.size(); ++s) {
            if (usable(s)) capacity += free_[s];
        }
        const policy::KnapsackChoice choice = options_.greedy_knapsack
                                                  ? policy::solve_knapsack_greedy(classes, capacity)
                                                  : policy::solve_knapsack(classes, capacity);
        for (std::size_t i = 0; i < elastic.size(); ++i) {
            // A worker that no single server can hold (fragmentation) is not granted.
            for (int k = 0; k < choice.extra[i]; ++k) {
                const std::size_t s = best_fit(jobs_[elastic[i]].spec->gpus_per_worker, true);
                if (s == servers_.size()) break;
                place(elastic[i], s, 1);
            }
        }
    }

    // ---- observation

    struct Usage {
        double training = 0, loaned = 0, inference = 0, loaned_servers = 0;
    };

    Usage usage() const {
        Usage u;
        for (std::size_t s = 0; s < servers_.size(); ++s) {
            const double used = servers_[s].gpus - free_[s];
            if (!servers_[s].inference)
                u.training += used;
            else if (servers_[s].loaned) {
                u.loaned += used;
                u.loaned_servers += 1;
            } else if (servers_[s].busy) {
                u.inference += servers_[s].gpus;
            }
        }
        return u;
    }

    void record(bool force = false) {
        if (!force && !result_.timeline.empty() &&
            now_ < result_.timeline.back().time_s + sample_every_) {
            // Keep the latest state of a crowded instant: the sample is its time's final picture.
            if (now_ != result_.timeline.back().time_s) return;
            result_.timeline.pop_back();
        }
        TimelineSample t;
        t.time_s = now_;
        const Usage u = usage();
        for (std::size_t j : active_) {
            t.queued += jobs_[j].state == JobState::waiting;
            t.running += jobs_[j].state == JobState::running;
        }
        t.training_gpus_used = static_cast<int>(u.training);
        t.loaned_gpus_used = static_cast<int>(u.loaned);
        t.inference_gpus_used = static_cast<int>(u.inference);
        t.loaned_servers = static_cast<int>(u.loaned_servers);
        result_.timeline.push_back(t);
    }

    ClusterSnapshot snapshot() const {
        ClusterSnapshot snap;
        snap.time_s = now_;
        for (const ServerState& s : servers_)
            snap.servers.push_back({s.gpus, s.inference, s.busy, s.loaned, s.placements});
        for (const Job& job : jobs_) snap.jobs.push_back({job.state, job.workers});
        return snap;
    }

    void summarise() {
        ClusterMetrics& m = result_.metrics;
        std::vector<double> queue, jct;
        for (std::size_t j = 0; j < jobs_.size(); ++j) {
            const JobOutcome& o = result_.jobs[j];
            if (o.rejected) {
                ++m.rejected;
                continue;
            }
            ++m.jobs;
            m.elastic_jobs += jobs_[j].spec->elastic();
            queue.push_back(o.queue_s);
            jct.push_back(o.finish_s - jobs_[j].spec->submit_s);
            m.makespan_s = std::max(m.makespan_s, o.finish_s);
        }
        auto mean = [](const std::vector<double>& v) {
            return v.empty()
                       ? 0.0
                       : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
        };
        m.avg_queue_s = mean(queue);
        m.p95_queue_s = nearest_rank(queue, 0.95);
        m.avg_jct_s = mean(jct);
        m.p95_jct_s = nearest_rank(jct, 0.95);
        m.horizon_s = horizon_;
        const double g = options_.gpus_per_server;
        const double training_gpus = options_.training_servers * g,
                     inference_gpus = options_.inference_servers * g;
        if (horizon_ > 0) {
            m.training_pool_usage = training_gpu_s_ / (horizon_ * training_gpus);
            if (inference_gpus > 0) {
                m.inference_pool_usage =
                    (inference_gpu_s_ + loaned_gpu_s_) / (horizon_ * inference_gpus);
                m.loaned_gpu_usage = loaned_gpu_s_ / (horizon_ * inference_gpus);
            }
            m.gpu_usage = (training_gpu_s_ + loaned_gpu_s_ + inference_gpu_s_) /
                          (horizon_ * (training_gpus + inference_gpus));
            m.avg_loaned_servers = loaned_server_s_ / horizon_;
        }
    }

    using ServerState = ServerView;

    std::vector<LoadPoint> load_;
    ClusterPolicy policy_;
    ClusterOptions options_;
    const ClusterObserver& observer_;

    std::vector<ServerState> servers_;  // training pool first, then the inference pool
    std::vector<int> free_;             // free GPUs per server
    std::vector<Job> jobs_;
    std::vector<std::size_t> arrivals_;  // job indices by submit time
    std::vector<std::size_t> active_;    // jobs waiting or running, by arrival
    std::size_t next_arrival_ = 0, next_load_ = 0;
    int needed_ = 0;  // inference servers inference needs now
    double now_ = 0, horizon_ = 0, sample_every_ = 0;
    double training_gpu_s_ = 0, loaned_gpu_s_ = 0, inference_gpu_s_ = 0, loaned_server_s_ = 0;
    std::vector<bool> shrunk_;  // per job, within one reclaim: counted once
    ClusterResult result_;
};

}  // namespace

ClusterResult simulate_cluster(
    const std::vector<ClusterJob>& jobs, const std::vector<LoadPoint>& load,
    const std::vector<std::pair<std::string, policy::ScalingCurve>>& curves, ClusterPolicy policy,
    const ClusterOptions& options, const ClusterObserver& observer) {
    return Simulator(jobs, load, curves, policy, options, observer).run();
}

}  // namespace phasescale::sim
