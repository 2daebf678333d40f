#include "metrics.hpp"

#include <algorithm>

#include <prometheus/text_serializer.h>

#include <phasescale/version.hpp>

namespace phasescale::app {

namespace {

prometheus::Histogram::BucketBoundaries latency_buckets() {
    return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

prometheus::Histogram::BucketBoundaries inference_buckets() {
    return {1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2};
}

template <class Builder>
auto& family(Builder builder, const char* name, const char* help, prometheus::Registry& registry) {
    return builder.Name(name).Help(help).Register(registry);
}

}  // namespace

Metrics::Metrics()
    : pods_tracked(family(prometheus::BuildGauge(), "phasescale_pods_tracked",
                          "Pods tracked by PhaseAutoscalers in the last tick", *registry)
                       .Add({})),
      phase_transitions(family(prometheus::BuildCounter(), "phasescale_phase_transitions_total",
                               "Stable phase changes of tracked containers", *registry)
                            .Add({})),
      samples_rejected(
          family(prometheus::BuildCounter(), "phasescale_samples_rejected_total",
                 "Container samples skipped as impossible, by reason (non_finite, not_positive, "
                 "too_large, above_node)",
                 *registry)),
      resizes(family(prometheus::BuildCounter(), "phasescale_resizes_total",
                     "In-place resizes by result (ok, error, blocked)", *registry)),
      inference(family(prometheus::BuildHistogram(), "phasescale_inference_seconds",
                       "Time of one container's phase inference and recommendation", *registry)
                    .Add({}, inference_buckets())),
      prom_latency(family(prometheus::BuildHistogram(), "phasescale_prometheus_request_seconds",
                          "Prometheus API request latency by endpoint", *registry)),
      prom_errors(family(prometheus::BuildCounter(), "phasescale_prometheus_request_errors_total",
                         "Failed Prometheus requests by endpoint and outcome", *registry)),
      api_latency(family(prometheus::BuildHistogram(), "phasescale_kube_request_seconds",
                         "Kubernetes API request latency by verb", *registry)),
      api_errors(family(prometheus::BuildCounter(), "phasescale_kube_request_errors_total",
                        "Failed Kubernetes API requests by verb", *registry)),
      tick_seconds(family(prometheus::BuildHistogram(), "phasescale_tick_seconds",
                          "Duration of one reconcile tick", *registry)
                       .Add({}, latency_buckets())),
      tick_step_seconds(
          family(prometheus::BuildHistogram(), "phasescale_tick_step_seconds",
                 "Time of one step of a reconcile tick (select, plan, read, step, decide, status), "
                 "summed over its namespaces and pods",
                 *registry)),
      ticks(family(prometheus::BuildCounter(), "phasescale_ticks_total", "Reconcile ticks run",
                   *registry)
                .Add({})),
      namespaces_skipped(
          family(prometheus::BuildCounter(), "phasescale_namespaces_skipped_total",
                 "Namespaces a tick left alone because it passed its deadline (a slow Prometheus)",
                 *registry)
              .Add({})),
      leader(family(prometheus::BuildGauge(), "phasescale_leader", "1 while this replica leads",
                    *registry)
                 .Add({})),
      writes_waiting(family(prometheus::BuildGauge(), "phasescale_writes_waiting",
                            "API writes queued and not yet sent at the end of the last tick",
                            *registry)
                         .Add({})),
      requested_cpu(family(prometheus::BuildGauge(), "phasescale_requested_cpu_cores",
                           "CPU requested by a container of an autoscaler's pods, summed over them",
                           *registry)),
      recommended_cpu(family(prometheus::BuildGauge(), "phasescale_recommended_cpu_cores",
                             "CPU recommended (target) for a container of an autoscaler's pods, "
                             "summed over them",
                             *registry)),
      requested_memory(family(prometheus::BuildGauge(), "phasescale_requested_memory_bytes",
                              "Memory requested by a container of an autoscaler's pods, summed "
                              "over them",
                              *registry)),
      recommended_memory(family(prometheus::BuildGauge(), "phasescale_recommended_memory_bytes",
                                "Memory recommended (target) for a container of an autoscaler's "
                                "pods, summed over them",
                                *registry)),
      autoscaler_resizes(family(prometheus::BuildCounter(), "phasescale_autoscaler_resizes_total",
                                "In-place resizes of an autoscaler's pods by result (ok, error, "
                                "blocked) and reason",
                                *registry)),
      oom_kills_after_resize(
          family(prometheus::BuildCounter(), "phasescale_oom_kills_after_resize_total",
                 "OOM kills of containers on pods phasescale resized", *registry)),
      containers_in_phase(family(prometheus::BuildGauge(), "phasescale_containers_in_phase",
                                 "Tracked containers of an autoscaler in each phase", *registry)),
      autoscaler_ready(family(prometheus::BuildGauge(), "phasescale_autoscaler_ready",
                              "1 while the autoscaler's Ready condition is True", *registry)),
      loans_loaned(family(prometheus::BuildGauge(), "phasescale_capacity_loans_loaned",
                          "Inference nodes on loan to training", *registry)),
      loan_returns(family(prometheus::BuildCounter(), "phasescale_capacity_loan_returns_total",
                          "Loaned nodes returned to inference", *registry)),
      loan_evictions(family(prometheus::BuildCounter(), "phasescale_capacity_loan_evictions_total",
                            "Training pods evicted from returned nodes", *registry)) {
    for (const char* r : {"ok", "error", "blocked"}) resizes.Add({{"result", r}});
    for (const std::string& step : control::kTickSteps)
        tick_step_seconds.Add({{"step", step}}, latency_buckets());
    family(prometheus::BuildGauge(), "phasescale_build_info",
           "1, labelled with the version and git revision of this build", *registry)
        .Add({{"version", kVersion}, {"revision", kRevision}})
        .Set(1);
}

std::string Metrics::text() const {
    prometheus::TextSerializer serializer;
    return serializer.Serialize(registry->Collect());
}

void Metrics::keep_gauges(const std::string& object, Series fresh) {
    std::lock_guard lock(mutex_);
    Series& old = series_[object];
    for (const auto& [f, g] : old.gauges)
        if (std::none_of(fresh.gauges.begin(), fresh.gauges.end(),
                         [g = g](const auto& n) { return n.second == g; }))
            f->Remove(g);
    old.gauges = std::move(fresh.gauges);
}

prometheus::Counter& Metrics::counter(const std::string& object,
                                      prometheus::Family<prometheus::Counter>& family,
                                      const prometheus::Labels& labels) {
    std::lock_guard lock(mutex_);
    prometheus::Counter& c = family.Add(labels);
    auto& counters = series_[object].counters;
    if (std::none_of(counters.begin(), counters.end(),
                     [&](const auto& n) { return n.second == &c; }))
        counters.emplace_back(&family, &c);
    return c;
}

void Metrics::observe(const control::AutoscalerReport& r) {
    Series fresh;
    const prometheus::Labels base = {{"namespace", r.ns}, {"autoscaler", r.name}};
    auto set = [&](prometheus::Family<prometheus::Gauge>& f, prometheus::Labels labels,
                   double value) {
        prometheus::Gauge& g = f.Add(labels);
        g.Set(value);
        fresh.gauges.emplace_back(&f, &g);
    };
    auto with = [&](const char* key, const std::string& value) {
        prometheus::Labels l = base;
        l[key] = value;
        return l;
    };
    set(autoscaler_ready, base, r.ready ? 1 : 0);
    for (const control::ContainerSummary& c : r.containers) {
        set(requested_cpu, with("container", c.name), c.requested.cpu);
        set(requested_memory, with("container", c.name), c.requested.memory);
        if (c.recommended == 0) continue;  // no recommendation yet: no series rather than 0
        set(recommended_cpu, with("container", c.name), c.target_sum.cpu);
        set(recommended_memory, with("container", c.name), c.target_sum.memory);
    }
    for (const auto& [phase, n] : r.containers_per_phase)
        set(containers_in_phase, with("phase", phase), n);
    keep_gauges(r.ns + "/" + r.name, std::move(fresh));
}

void Metrics::count_resize(const std::string& autoscaler, const std::string& result,
                           const std::string& reason) {
    resizes.Add({{"result", result}}).Increment();
    const auto slash = autoscaler.find('/');
    counter(autoscaler, autoscaler_resizes,
            {{"namespace", autoscaler.substr(0, slash)},
             {"autoscaler", autoscaler.substr(slash + 1)},
             {"result", result},
             {"reason", reason}})
        .Increment();
}

void Metrics::count_oom_after_resize(const std::string& autoscaler) {
    const auto slash = autoscaler.find('/');
    counter(
        autoscaler, oom_kills_after_resize,
        {{"namespace", autoscaler.substr(0, slash)}, {"autoscaler", autoscaler.substr(slash + 1)}})
        .Increment();
}

void Metrics::observe_loan(const loan::LoanReport& r) {
    // Loans are cluster-scoped: their key holds no "/", unlike an autoscaler's.
    const prometheus::Labels labels = {{"capacityloan", r.name}};
    Series fresh;
    prometheus::Gauge& g = loans_loaned.Add(labels);
    g.Set(static_cast<double>(r.loaned));
    fresh.gauges.emplace_back(&loans_loaned, &g);
    keep_gauges(r.name, std::move(fresh));
    // Added at 0 too, so that rate() sees the first return.
    counter(r.name, loan_returns, labels).Increment(static_cast<double>(r.returned));
    counter(r.name, loan_evictions, labels).Increment(static_cast<double>(r.evicted));
}

void Metrics::forget(const std::string& object) {
    std::lock_guard lock(mutex_);
    const auto it = series_.find(object);
    if (it == series_.end()) return;
    for (const auto& [f, g] : it->second.gauges) f->Remove(g);
    for (const auto& [f, c] : it->second.counters) f->Remove(c);
    series_.erase(it);
}

control::ReconcilerHooks reconciler_hooks(Metrics& metrics, Logger& logger) {
    control::ReconcilerHooks hooks;
    hooks.pods_tracked = [&metrics](std::size_t n) {
        metrics.pods_tracked.Set(static_cast<double>(n));
    };
    hooks.phase_transition = [&metrics] { metrics.phase_transitions.Increment(); };
    hooks.sample_rejected = [&metrics](const std::string& reason) {
        metrics.samples_rejected.Add({{"reason", reason}}).Increment();
    };
    hooks.resize = [&metrics](const std::string& autoscaler, const std::string& result,
                              const std::string& reason) {
        metrics.count_resize(autoscaler, result, reason);
    };
    hooks.oom_after_resize = [&metrics](const std::string& autoscaler) {
        metrics.count_oom_after_resize(autoscaler);
    };
    hooks.autoscaler_observed = [&metrics](const control::AutoscalerReport& r) {
        metrics.observe(r);
    };
    hooks.autoscaler_gone = [&metrics](const std::string& autoscaler) {
        metrics.forget(autoscaler);
    };
    hooks.inference = [&metrics](double s) { metrics.inference.Observe(s); };
    hooks.api_request = [&metrics](const std::string& verb, double s, bool ok) {
        metrics.api_latency.Add({{"verb", verb}}, latency_buckets()).Observe(s);
        if (!ok) metrics.api_errors.Add({{"verb", verb}}).Increment();
    };
    hooks.log = [&logger](const std::string& l, const std::string& m, const nlohmann::json& f) {
        logger.log(l, m, f);
    };
    return hooks;
}

prom::RequestObserver prometheus_observer(Metrics& metrics) {
    return [&metrics](const prom::RequestRecord& r) {
        const std::string endpoint(r.endpoint);
        metrics.prom_latency.Add({{"endpoint", endpoint}}, latency_buckets())
            .Observe(r.latency.count());
        if (r.outcome != prom::Outcome::Ok)
            metrics.prom_errors
                .Add({{"endpoint", endpoint}, {"outcome", prom::to_string(r.outcome)}})
                .Increment();
    };
}

void record_tick(Metrics& metrics, const control::TickSummary& summary, double seconds) {
    metrics.tick_seconds.Observe(seconds);
    for (const auto& [step, secs] : summary.step_seconds)
        metrics.tick_step_seconds.Add({{"step", step}}, latency_buckets()).Observe(secs);
    metrics.ticks.Increment();
    metrics.namespaces_skipped.Increment(static_cast<double>(summary.namespaces_skipped));
    metrics.writes_waiting.Set(static_cast<double>(summary.writes_waiting));
}

}  // namespace phasescale::app
