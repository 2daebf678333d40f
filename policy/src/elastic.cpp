#include <phasescale/policy/elastic.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace phasescale::policy {

// ---------------------------------------------------------------------------------------------
// Scaling

ScalingCurve::ScalingCurve(std::vector<std::pair<double, double>> points)
    : points_(std::move(points)) {
    for (const auto& [workers, throughput] : points_) {
        if (!(workers > 0) || !(throughput > 0) || !std::isfinite(workers) ||
            !std::isfinite(throughput)) {
            throw std::invalid_argument(
                "scaling curve: workers and throughput must be positive numbers");
        }
    }
    std::sort(points_.begin(), points_.end());
    for (std::size_t i = 1; i < points_.size(); ++i) {
        points_[i].second = std::max(points_[i].second, points_[i - 1].second);
    }
}

double ScalingCurve::throughput(double workers) const {
    if (workers <= 0) return 0;
    if (points_.empty()) return workers;
    if (workers <= points_.front().first)
        return workers / points_.front().first * points_.front().second;
    if (workers >= points_.back().first) return points_.back().second;
    auto hi = std::upper_bound(points_.begin(), points_.end(), workers,
                               [](double w, const auto& p) { return w < p.first; });
    auto lo = hi - 1;
    const double f = (workers - lo->first) / (hi->first - lo->first);
    return lo->second + f * (hi->second - lo->second);
}

double ScalingCurve::speedup(double from, double to) const {
    return throughput(to) / throughput(from);
}

double jct_reduction(const ScalingCurve& curve, double remaining_s, int workers, int extra) {
    if (extra <= 0 || remaining_s <= 0) return 0;
    return remaining_s * (1 - curve.throughput(workers) / curve.throughput(workers + extra));
}

// ---------------------------------------------------------------------------------------------
// Knapsack

namespace {

double option_value(const KnapsackClass& c, std::size_t k) {
    return k == 0 ? 0.0 : c.values[k];
}

}  // namespace

KnapsackChoice solve_knapsack(const std::vector<KnapsackClass>& classes, int capacity) {
    // No choice can weigh more than every class's largest option: cap the table there.
    long long most = 0;
    for (const auto& c : classes) {
        if (!c.values.empty())
            most += static_cast<long long>(c.values.size() - 1) * c.gpus_per_worker;
    }
    const int cap = static_cast<int>(std::clamp<long long>(most, 0, std::max(capacity, 0)));
    const std::size_t width = static_cast<std::size_t>(cap) + 1;

    // best[g]: the most value of the classes so far within g GPUs; take[i][g]: class i's option.
    std::vector<double> best(width, 0.0), next(width);
    std::vector<std::vector<int>> take(classes.size(), std::vector<int>(width, 0));
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const KnapsackClass& c = classes[i];
        for (std::size_t g = 0; g < width; ++g) {
            next[g] = best[g];
            for (std::size_t k = 1; k < c.values.size(); ++k) {
                const std::size_t weight = k * static_cast<std::size_t>(c.gpus_per_worker);
                if (weight > g) break;
                const double v = best[g - weight] + c.values[k];
                if (v > next[g]) {  // strictly better: ties keep fewer workers
                    next[g] = v;
                    take[i][g] = static_cast<int>(k);
                }
            }
        }
        best.swap(next);
    }

    KnapsackChoice choice;
    choice.extra.assign(classes.size(), 0);
    std::size_t g = width - 1;
    for (std::size_t i = classes.size(); i-- > 0;) {
        const int k = take[i][g];
        choice.extra[i] = k;
        g -= static_cast<std::size_t>(k) * static_cast<std::size_t>(classes[i].gpus_per_worker);
    }
    for (std::size_t i = 0; i < classes.size(); ++i) {
        choice.value += option_value(classes[i], static_cast<std::size_t>(choice.extra[i]));
        choice.gpus += choice.extra[i] * classes[i].gpus_per_worker;
    }
    return choice;
}

KnapsackChoice solve_knapsack_greedy(const std::vector<KnapsackClass>& classes, int capacity) {
    KnapsackChoice choice;
    choice.extra.assign(classes.size(), 0);
    int left = std::max(capacity, 0);
    for (;;) {
        std::size_t pick = classes.size();
        double best_rate = 0;
        for (std::size_t i = 0; i < classes.size(); ++i) {
            const KnapsackClass& c = classes[i];
            const auto k = static_cast<std::size_t>(choice.extra[i]);
            if (k + 1 >= c.values.size() || c.gpus_per_worker > left) continue;
            const double gain = c.values[k + 1] - option_value(c, k);
            const double rate = gain / c.gpus_per_worker;
            if (gain > 0 && rate > best_rate) {
                best_rate = rate;
                pick = i;
            }
        }
        if (pick == classes.size()) break;
        ++choice.extra[pick];
        left -= classes[pick].gpus_per_worker;
    }
    for (std::size_t i = 0; i < classes.size(); ++i) {
        choice.value += option_value(classes[i], static_cast<std::size_t>(choice.extra[i]));
        choice.gpus += choice.extra[i] * classes[i].gpus_per_worker;
    }
    return choice;
}

// ---------------------------------------------------------------------------------------------
// Reclaim

double preemption_cost(const std::vector<ReclaimJob>& jobs, const ReclaimServer& server) {
    double cost = 0;
    for (const Placement& p : server.placements) {
        const ReclaimJob& job = jobs[p.job];
        if (p.workers <= 0 || job.workers <= 0) continue;
        if (job.workers - p.workers < job.min_workers)
            cost += static_cast<double>(p.workers) / job.workers;
    }
    return cost;  // GPUs per worker cancel out: (workers x g) / (total workers x g)
}

ReclaimPlan plan_reclaim(const std::vector<ReclaimJob>& jobs_in,
                         const std::vector<ReclaimServer>& servers_in, std::size_t k) {
    std::vector<ReclaimJob> jobs = jobs_in;
    std::vector<ReclaimServer> servers = servers_in;
    ReclaimPlan plan;
    plan.preempted.assign(jobs.size(), false);
    plan.workers_lost.assign(jobs.size(), 0);
    std::vector<bool> returned(servers.size(), false);

    // Drops placements of jobs that have stopped and of nothing.
    auto tidy = [&](ReclaimServer& s) {
        std::erase_if(s.placements,
                      [&](const Placement& p) { return p.workers <= 0 || plan.preempted[p.job]; });
    };

    while (plan.steps.size() < k) {
        std::size_t pick = servers.size();
        ReclaimKind pick_kind = ReclaimKind::preempt;
        double pick_cost = std::numeric_limits<double>::infinity();
        int pick_used = std::numeric_limits<int>::max();
        for (std::size_t s = 0; s < servers.size(); ++s) {
            if (!servers[s].loaned || returned[s]) continue;
            tidy(servers[s]);
            const double cost = preemption_cost(jobs, servers[s]);
            ReclaimKind kind = servers[s].placements.empty() ? ReclaimKind::empty
                               : cost == 0                   ? ReclaimKind::shrink
                                                             : ReclaimKind::preempt;
            int used = 0;  // the tie-break: GPUs in use (for shrink: GPUs its jobs lose)
            for (const Placement& p : servers[s].placements)
                used += p.workers * jobs[p.job].gpus_per_worker;
            // Lexicographic: kind (empty < shrink < preempt), cost, GPUs in use; the first index
            // wins.
            const bool better = kind != pick_kind   ? kind < pick_kind
                                : cost != pick_cost ? cost < pick_cost
                                                    : used < pick_used;
            if (pick == servers.size() || better) {
                pick = s;
                pick_kind = kind;
                pick_cost = cost;
                pick_used = used;
            }
        }
        if (pick == servers.size()) break;  // no loaned server left

        returned[pick] = true;
        plan.steps.push_back(
            {pick, pick_kind, pick_kind == ReclaimKind::preempt ? pick_cost : 0.0});
        plan.cost += plan.steps.back().cost;
        for (const Placement& p : servers[pick].placements) {
            ReclaimJob& job = jobs[p.job];
            if (job.workers - p.workers < job.min_workers) {
                plan.preempted[p.job] = true;
                plan.workers_lost[p.job] = 0;
                job.workers = 0;
            } else {
                job.workers -= p.workers;
                plan.workers_lost[p.job] += p.workers;
            }
        }
        servers[pick].placements.clear();
    }
    return plan;
}

}  // namespace phasescale::policy
