#include "metrics.hpp"

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
                 "too_large)",
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
                         .Add({})) {
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

control::ReconcilerHooks reconciler_hooks(Metrics& metrics, Logger& logger) {
    control::ReconcilerHooks hooks;
    hooks.pods_tracked = [&metrics](std::size_t n) {
        metrics.pods_tracked.Set(static_cast<double>(n));
    };
    hooks.phase_transition = [&metrics] { metrics.phase_transitions.Increment(); };
    hooks.sample_rejected = [&metrics](const std::string& reason) {
        metrics.samples_rejected.Add({{"reason", reason}}).Increment();
    };
    hooks.resize = [&metrics](const std::string& result) {
        metrics.resizes.Add({{"result", result}}).Increment();
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
