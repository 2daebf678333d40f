#include "phasescale/loan/spec.hpp"

#include <phasescale/kube/spec_reader.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace phasescale::loan {

std::string ParsedLoan::message() const {
    std::string m;
    for (const std::string& e : errors) m += (m.empty() ? "" : "; ") + e;
    return m;
}

namespace {

using Reader = kube::SpecReader;

void read_job(Reader& r, const json& item, const std::string& field, std::vector<JobSource>& out) {
    JobSource job;
    if (!item.is_object()) {
        r.error(field, "expected an object");
        return;
    }
    job.resource.group = r.string(item, "group", field + ".group").value_or("");
    auto version = r.string(item, "version", field + ".version");
    auto plural = r.string(item, "resource", field + ".resource");
    if (!version || version->empty()) r.error(field + ".version", "is required");
    if (!plural || plural->empty()) r.error(field + ".resource", "is required");
    job.resource.version = version.value_or("");
    job.resource.plural = plural.value_or("");
    job.resource.namespaced = true;
    job.ns = r.string(item, "namespace", field + ".namespace").value_or("");
    r.selector(item, "selector", field + ".selector", job.selector, false);
    job.min_replicas = r.integer(item, "minReplicas", field + ".minReplicas", 1, 100000)
                           .value_or(job.min_replicas);
    job.max_replicas = r.integer(item, "maxReplicas", field + ".maxReplicas", 1, 100000)
                           .value_or(job.max_replicas);
    job.gpus_per_worker = r.integer(item, "gpusPerWorker", field + ".gpusPerWorker", 1, 1024)
                              .value_or(job.gpus_per_worker);
    job.remaining_seconds =
        r.number(item, "remainingSeconds", field + ".remainingSeconds", 0, 1e9, false)
            .value_or(job.remaining_seconds);
    if (job.max_replicas < job.min_replicas) {
        r.error(field + ".maxReplicas",
                "must be at least minReplicas (" + std::to_string(job.min_replicas) + ")");
        return;
    }
    if (version && plural && !version->empty() && !plural->empty()) out.push_back(std::move(job));
}

}  // namespace

ParsedLoan parse_loan(const json& object) {
    ParsedLoan parsed;
    Reader r{parsed.errors};
    const json& spec = object.is_object() && object.contains("spec") ? object["spec"] : object;
    if (!spec.is_object()) {
        r.error("", "expected an object");
        return parsed;
    }
    LoanSpec& s = parsed.spec;
    if (const json* pool = r.object(spec, "inferencePool", "inferencePool", true))
        r.selector(*pool, "nodeSelector", "inferencePool.nodeSelector", s.inference_nodes, true);
    if (const json* pool = r.object(spec, "trainingPool", "trainingPool", true))
        r.selector(*pool, "nodeSelector", "trainingPool.nodeSelector", s.training_nodes, true);
    if (const json* inf = r.object(spec, "inference", "inference", true)) {
        if (!Reader::present(*inf, "requiredServers"))
            r.error("inference.requiredServers", "is required");
        s.required_servers =
            r.integer(*inf, "requiredServers", "inference.requiredServers", 0, 1000000).value_or(0);
        s.headroom_servers =
            r.integer(*inf, "headroomServers", "inference.headroomServers", 0, 1000000).value_or(0);
    }
    if (const json* tr = r.object(spec, "training", "training")) {
        if (Reader::present(*tr, "podSelector")) {
            kube::LabelSelector pods;
            r.selector(*tr, "podSelector", "training.podSelector", pods, false);
            s.training_pods = pods;
        }
        if (Reader::present(*tr, "elasticJobs")) {
            const json& jobs = (*tr)["elasticJobs"];
            if (!jobs.is_array())
                r.error("training.elasticJobs", "expected a list");
            else
                for (std::size_t i = 0; i < jobs.size(); ++i)
                    read_job(r, jobs[i], "training.elasticJobs[" + std::to_string(i) + "]", s.jobs);
        }
    }
    if (auto gpu = r.string(spec, "gpuResource", "gpuResource")) {
        if (gpu->empty())
            r.error("gpuResource", "must not be empty");
        else
            s.gpu_resource = *gpu;
    }
    // Both pools selecting every node would loan the training pool to itself.
    if (parsed.ok() && s.inference_nodes.empty())
        r.error("inferencePool.nodeSelector", "must select something (it is empty)");
    if (parsed.ok() && s.training_nodes.empty())
        r.error("trainingPool.nodeSelector", "must select something (it is empty)");
    return parsed;
}

}  // namespace phasescale::loan
