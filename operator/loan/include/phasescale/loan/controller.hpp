// The CapacityLoan controller: every reconcile, for each CapacityLoan (in name order), it reads
// the nodes of its two pools and the pods on them (from informers that keep only what it reads),
// and its elastic jobs with their scale subresources; decides with plan() (decision.hpp); and
// writes the plan: node labels and taints (returns, then loans), evictions (policy/v1 Eviction) of
// the training pods on returned nodes, the replicas of elastic jobs (PATCH .../scale), an Event per
// action, and the CapacityLoan's status (only when it changed). Nothing throws out of reconcile():
// a bad spec or a failed request becomes a condition, a log line and a retry next time.
// What it reads and writes on the API server beyond the informers goes through ClusterApi.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <phasescale/kube/client.hpp>
#include <phasescale/kube/events.hpp>
#include <phasescale/kube/informer.hpp>

#include "phasescale/loan/cluster_api.hpp"
#include "phasescale/loan/decision.hpp"
#include "phasescale/loan/spec.hpp"

namespace phasescale::loan {

namespace resources {
inline const kube::Resource capacity_loans{"phasescale.io", "v1alpha1", "capacityloans",
                                           "CapacityLoan", false};
}

struct ControllerOptions {
    std::chrono::milliseconds interval{15000};  // between two reconciles in run()
    std::string field_manager = "phasescale-operator";
    std::size_t max_recent_decisions = 20;
    // A pod informer to read instead of one of its own (the operator shares the control loop's):
    // every namespace, every pod not finished (kPodFieldSelector), each keeping at least what
    // trim_pod keeps. Its owner starts and stops it.
    std::shared_ptr<kube::Informer> pods;
    // A node informer to read instead of one of its own (the operator shares the control loop's):
    // every node, each keeping at least what trim_node keeps. Its owner starts and stops it.
    std::shared_ptr<kube::Informer> nodes;
};

// The pods the loan controller must see: all but the finished ones.
inline constexpr const char* kPodFieldSelector = "status.phase!=Succeeded,status.phase!=Failed";

// One CapacityLoan after a pass, for the operator's metrics.
struct LoanReport {
    std::string name;
    std::size_t loaned = 0;    // nodes on loan after the pass
    std::size_t returned = 0;  // nodes returned to inference in the pass
    std::size_t evicted = 0;   // training pods evicted in the pass
};

struct ControllerHooks {
    std::function<void(const std::string& level, const std::string& message,
                       const nlohmann::json& fields)>
        log;
    std::function<void(const LoanReport& report)> loan_reconciled;
    std::function<void(const std::string& name)> loan_gone;  // a CapacityLoan deleted
};

struct ReconcileSummary {
    std::size_t loans = 0;  // CapacityLoans reconciled
    std::size_t loaned = 0;
    std::size_t returned = 0;
    std::size_t evicted = 0;
    std::size_t scaled = 0;
    std::size_t errors = 0;
    std::size_t status_updates = 0;
};

class Controller {
public:
    Controller(kube::Client kube, ControllerOptions options = {}, ControllerHooks hooks = {});
    // Over any cluster (tests: an in-memory one); start() then watches nothing, and
    // reconcile(nodes, pods, now) is the way in.
    Controller(std::unique_ptr<ClusterApi> cluster, ControllerOptions options = {},
               ControllerHooks hooks = {});
    ~Controller();
    Controller(const Controller&) = delete;
    Controller& operator=(const Controller&) = delete;

    // Informers of nodes and of bound, running pods.
    void start();
    void stop();
    bool wait_for_sync(std::chrono::milliseconds timeout) const;

    // One pass over every CapacityLoan, at `now` (unix seconds).
    ReconcileSummary reconcile(double now);
    // The same over given nodes and pods (tests), as the informers would hold them.
    ReconcileSummary reconcile(const std::vector<kube::Store::ObjectPtr>& nodes,
                               const std::vector<kube::Store::ObjectPtr>& pods, double now);

    // start(), then reconcile every options.interval while `active()` (e.g. while this replica
    // leads; always when null) until `stop` is requested; then stop(). For a thread of its own.
    void run(std::stop_token stop, const std::function<bool()>& active = {});

private:
    struct LoanState {
        nlohmann::json decisions = nlohmann::json::array();
    };
    // One CapacityLoan in a pass: what was read of the cluster for it, its plan, its status.
    struct Pass;
    using Objects = std::vector<kube::Store::ObjectPtr>;

    // Reads, plans and writes one CapacityLoan: the steps below, in order. Returns the nodes on
    // loan after it (its status's loanedCount).
    std::size_t reconcile_one(const nlohmann::json& loan, const Objects& nodes, const Objects& pods,
                              std::set<std::string>& claimed, double now, ReconcileSummary& sum);
    // Its spec parsed, and the decisions it remembers (after a restart, its status's).
    Pass begin_pass(const nlohmann::json& loan);
    // The nodes of its two pools that no earlier CapacityLoan claimed; claims them.
    void read_nodes(Pass& pass, const Objects& nodes, std::set<std::string>& claimed);
    // Its elastic jobs, with their scale subresources and annotations.
    void read_jobs(Pass& pass);
    // The pods on its pools' nodes and training pods anywhere, each with its role and job.
    void read_pods(Pass& pass, const Objects& pods);
    // Labels and taints of every inference node's state; a loan or return is an Event.
    void mark_nodes(Pass& pass, double now, ReconcileSummary& sum);
    // Evicts the training pods on returned nodes that now keep new ones off.
    void evict_pods(Pass& pass, double now, ReconcileSummary& sum);
    // Sets each elastic job's replicas to the plan's.
    void scale_jobs(Pass& pass, double now, ReconcileSummary& sum);
    // The status fields of the cluster as the pass left it.
    void report(Pass& pass);
    // The Ready condition; writes the status when it changed.
    void update_status(Pass& pass, double now, ReconcileSummary& sum);
    // The nodes with each one this controller marked as its write left it, while the node cache
    // still holds an older version: a watch can lag a write, and a pass must not plan from marks
    // the previous pass already changed.
    Objects with_own_writes(const Objects& nodes);

    void log(const std::string& level, const std::string& message,
             const nlohmann::json& fields = {}) const;
    void event(const kube::ObjectReference& object, kube::EventType type, const std::string& reason,
               const std::string& message);
    void decide(LoanState& state, double now, const std::string& action, const std::string& object,
                const std::string& message);

    std::optional<kube::Client> kube_;  // for the informers; none over other clusters
    std::unique_ptr<ClusterApi> cluster_;
    ControllerOptions options_;
    ControllerHooks hooks_;
    std::shared_ptr<kube::Informer> nodes_;  // its own, or options.nodes
    std::shared_ptr<kube::Informer> pods_;   // its own, or options.pods
    bool own_nodes_ = false, own_pods_ = false;
    std::map<std::string, LoanState> loans_;
    std::map<std::string, kube::Store::ObjectPtr> written_nodes_;  // by name, until cached
};

// What the informers keep of a node (name, labels, resourceVersion, taints, unschedulable,
// allocatable, and capacity: all control::trim_node keeps, for a cache shared with it) and of a pod
// (name, namespace, uid, labels, owner references, node, the containers' requests,
// deletionTimestamp).
void trim_node(nlohmann::json& node);
void trim_pod(nlohmann::json& pod);

// A job's annotations (kMinReplicasAnnotation...) over its CapacityLoan entry's values in `v`:
// replicas only within [1, source.max_replicas], GPUs per worker within [1, 1024]; a value out
// of bounds leaves the entry's and adds a problem naming `who`.
void apply_job_annotations(const nlohmann::json& annotations, const JobSource& source,
                           const std::string& who, JobView& v, std::vector<std::string>& problems);

// The sum of the containers' requests of `resource` (whole units) in a pod.
int pod_requests(const nlohmann::json& pod, const std::string& resource);

}  // namespace phasescale::loan
