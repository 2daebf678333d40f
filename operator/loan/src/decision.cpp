#include "phasescale/loan/decision.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace phasescale::loan {

bool idle(const std::string& node, const std::vector<PodView>& pods) {
    return std::none_of(pods.begin(), pods.end(), [&](const PodView& p) {
        return p.node == node && p.role == PodRole::Inference;
    });
}

int loan_target(const std::vector<NodeView>& inference, int required_servers,
                int headroom_servers) {
    const int usable = static_cast<int>(std::count_if(
        inference.begin(), inference.end(), [](const NodeView& n) { return n.schedulable; }));
    return std::max(0, usable - std::max(0, required_servers) - std::max(0, headroom_servers));
}

std::vector<std::size_t> choose_loans(const std::vector<NodeView>& inference,
                                      const std::vector<PodView>& pods, std::size_t count) {
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < inference.size(); ++i) {
        const NodeView& n = inference[i];
        if (!n.loaned && n.schedulable && idle(n.name, pods)) candidates.push_back(i);
    }
    std::sort(candidates.begin(), candidates.end(),
              [&](std::size_t a, std::size_t b) { return inference[a].name < inference[b].name; });
    if (candidates.size() > count) candidates.resize(count);
    return candidates;
}

std::vector<policy::ReclaimStep> choose_returns(const std::vector<NodeView>& inference,
                                                const std::vector<PodView>& pods,
                                                const std::vector<JobView>& jobs,
                                                std::size_t count) {
    std::vector<policy::ReclaimJob> rjobs(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j)
        rjobs[j].gpus_per_worker = std::max(1, jobs[j].gpus_per_worker);
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < inference.size(); ++i) index[inference[i].name] = i;
    std::vector<std::map<std::size_t, int>> on(inference.size());
    for (const PodView& p : pods) {
        if (p.role != PodRole::Training || !p.job || *p.job >= jobs.size()) continue;
        ++rjobs[*p.job].workers;
        auto it = index.find(p.node);
        if (it != index.end()) ++on[it->second][*p.job];
    }
    for (std::size_t j = 0; j < jobs.size(); ++j)
        rjobs[j].min_workers =
            jobs[j].elastic ? std::min(jobs[j].min_replicas, rjobs[j].workers) : rjobs[j].workers;
    std::vector<policy::ReclaimServer> servers(inference.size());
    for (std::size_t i = 0; i < inference.size(); ++i) {
        servers[i].loaned = inference[i].loaned;
        for (const auto& [job, workers] : on[i]) servers[i].placements.push_back({job, workers});
    }
    return policy::plan_reclaim(rjobs, servers, count).steps;
}

std::vector<std::size_t> pods_to_evict(const std::vector<NodeView>& inference,
                                       const std::vector<bool>& returned_after,
                                       const std::vector<PodView>& pods) {
    std::set<std::string> returned;
    for (std::size_t i = 0; i < inference.size() && i < returned_after.size(); ++i)
        if (returned_after[i]) returned.insert(inference[i].name);
    std::vector<std::size_t> out;
    for (std::size_t p = 0; p < pods.size(); ++p)
        if (pods[p].role == PodRole::Training && returned.count(pods[p].node) != 0)
            out.push_back(p);
    return out;
}

int spare_gpus(const LoanInputs& in, const std::vector<bool>& loaned_after) {
    std::set<std::string> pool;
    long total = 0;
    for (const NodeView& n : in.training) {
        pool.insert(n.name);
        total += std::max(0, n.gpus);
    }
    for (std::size_t i = 0; i < in.inference.size() && i < loaned_after.size(); ++i) {
        if (!loaned_after[i]) continue;
        pool.insert(in.inference[i].name);
        total += std::max(0, in.inference[i].gpus);
    }
    for (const PodView& p : in.pods) {
        const bool elastic = p.job && *p.job < in.jobs.size() && in.jobs[*p.job].elastic;
        if (!elastic && pool.count(p.node) != 0) total -= std::max(0, p.gpus);
    }
    for (const JobView& j : in.jobs)
        if (j.elastic && j.replicas > 0)
            total -= static_cast<long>(j.min_replicas) * std::max(1, j.gpus_per_worker);
    return static_cast<int>(std::max(0L, total));
}

std::vector<int> elastic_replicas(const std::vector<JobView>& jobs, int spare) {
    std::vector<int> out(jobs.size());
    std::vector<policy::KnapsackClass> classes;
    std::vector<std::size_t> owner;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobView& job = jobs[j];
        out[j] = job.replicas;
        if (!job.elastic || job.replicas <= 0) continue;
        const int min = std::max(1, job.min_replicas);
        const int max = std::max(min, job.max_replicas);
        const double at_min = std::max(0.0, job.remaining_seconds);
        policy::KnapsackClass c;
        c.gpus_per_worker = std::max(1, job.gpus_per_worker);
        for (int k = 0; k <= max - min; ++k)
            c.values.push_back(policy::jct_reduction(job.curve, at_min, min, k));
        classes.push_back(std::move(c));
        owner.push_back(j);
    }
    const policy::KnapsackChoice choice = policy::solve_knapsack(classes, spare);
    for (std::size_t c = 0; c < owner.size(); ++c)
        out[owner[c]] = std::max(1, jobs[owner[c]].min_replicas) + choice.extra[c];
    return out;
}

LoanPlan plan(const LoanInputs& in) {
    LoanPlan p;
    const std::size_t n = in.inference.size();
    p.target_loaned = loan_target(in.inference, in.required_servers, in.headroom_servers);
    const int loaned_now = static_cast<int>(std::count_if(
        in.inference.begin(), in.inference.end(), [](const NodeView& v) { return v.loaned; }));
    if (loaned_now < p.target_loaned) {
        p.loan = choose_loans(in.inference, in.pods,
                              static_cast<std::size_t>(p.target_loaned - loaned_now));
    } else if (loaned_now > p.target_loaned) {
        p.reclaim = choose_returns(in.inference, in.pods, in.jobs,
                                   static_cast<std::size_t>(loaned_now - p.target_loaned));
        for (const policy::ReclaimStep& s : p.reclaim) p.ret.push_back(s.server);
    }
    p.loaned_after.assign(n, false);
    p.returned_after.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
        p.loaned_after[i] = in.inference[i].loaned;
        p.returned_after[i] = in.inference[i].returned && !in.inference[i].loaned;
    }
    for (std::size_t i : p.loan) {
        p.loaned_after[i] = true;
        p.returned_after[i] = false;
    }
    for (std::size_t i : p.ret) {
        p.loaned_after[i] = false;
        p.returned_after[i] = true;
    }
    p.evict = pods_to_evict(in.inference, p.returned_after, in.pods);
    p.spare_gpus = spare_gpus(in, p.loaned_after);
    p.replicas = elastic_replicas(in.jobs, p.spare_gpus);
    return p;
}

const char* to_string(NodeState state) {
    switch (state) {
        case NodeState::Inference: return "Inference";
        case NodeState::Loaned: return "Loaned";
        case NodeState::Returned: return "Returned";
    }
    return "?";
}

json node_patch(const json& node, NodeState state) {
    const json md = node.value("metadata", json::object());
    const json labels = md.value("labels", json::object());
    const bool has_label =
        labels.is_object() && labels.contains(kLoanedLabel) && labels[kLoanedLabel] == "true";
    const bool want_label = state == NodeState::Loaned;
    const bool want_io = state != NodeState::Loaned;
    const bool want_returned = state == NodeState::Returned;

    json taints = json::array();
    if (node.contains("spec") && node["spec"].contains("taints") &&
        node["spec"]["taints"].is_array())
        taints = node["spec"]["taints"];
    bool has_io = false, has_returned = false;
    json kept = json::array();
    for (const json& t : taints) {
        const std::string key = t.value("key", "");
        const bool ours_io = key == kInferenceOnlyTaint && t.value("effect", "") == "NoSchedule";
        const bool ours_ret = key == kReturnedTaint && t.value("effect", "") == "NoSchedule";
        if (ours_io) has_io = true;
        if (ours_ret) has_returned = true;
        if ((ours_io && !want_io) || (ours_ret && !want_returned)) continue;
        kept.push_back(t);
    }
    if (has_label == want_label && has_io == want_io && has_returned == want_returned)
        return nullptr;
    if (want_io && !has_io)
        kept.push_back({{"key", kInferenceOnlyTaint}, {"effect", "NoSchedule"}});
    if (want_returned && !has_returned)
        kept.push_back({{"key", kReturnedTaint}, {"effect", "NoSchedule"}});

    json patch = {{"metadata", {{"resourceVersion", md.value("resourceVersion", "")}}}};
    if (patch["metadata"]["resourceVersion"] == "") patch["metadata"].erase("resourceVersion");
    if (has_label != want_label)
        patch["metadata"]["labels"] = {{kLoanedLabel, want_label ? json("true") : json(nullptr)}};
    if (has_io != want_io || has_returned != want_returned)
        patch["spec"] = {{"taints", kept.empty() ? json(nullptr) : kept}};
    return patch;
}

std::optional<policy::ScalingCurve> parse_curve(const std::string& text) {
    std::vector<std::pair<double, double>> points;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos) return std::nullopt;
        try {
            std::size_t used = 0;
            const std::string a = item.substr(0, colon), b = item.substr(colon + 1);
            const double w = std::stod(a, &used);
            if (a.find_first_not_of(" \t", used) != std::string::npos) return std::nullopt;
            const double t = std::stod(b, &used);
            if (b.find_first_not_of(" \t", used) != std::string::npos) return std::nullopt;
            if (!(w > 0) || !(t > 0)) return std::nullopt;
            points.emplace_back(w, t);
        } catch (...) {
            return std::nullopt;
        }
    }
    if (points.empty()) return std::nullopt;
    try {
        return policy::ScalingCurve(std::move(points));
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace phasescale::loan
