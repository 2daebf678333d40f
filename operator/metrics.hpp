// The operator's own metrics (/metrics, prometheus-cpp), and the hooks that feed them from the
// control loop and the Prometheus client.
#pragma once

#include <memory>
#include <mutex>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <phasescale/control/reconciler.hpp>
#include <phasescale/prom/client.hpp>

#include "log.hpp"

namespace phasescale::app {

struct Metrics {
    Metrics();

    std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
    prometheus::Gauge& pods_tracked;
    prometheus::Counter& phase_transitions;
    prometheus::Family<prometheus::Counter>& samples_rejected;
    prometheus::Family<prometheus::Counter>& resizes;
    prometheus::Histogram& inference;
    prometheus::Family<prometheus::Histogram>& prom_latency;
    prometheus::Family<prometheus::Counter>& prom_errors;
    prometheus::Family<prometheus::Histogram>& api_latency;
    prometheus::Family<prometheus::Counter>& api_errors;
    prometheus::Histogram& tick_seconds;
    prometheus::Family<prometheus::Histogram>& tick_step_seconds;
    prometheus::Counter& ticks;
    prometheus::Counter& namespaces_skipped;
    prometheus::Gauge& leader;
    prometheus::Gauge& writes_waiting;

    // The /metrics page (Prometheus text format).
    std::string text() const;
};

// The control loop's hooks: its counts into `metrics`, its logs to `logger`.
control::ReconcilerHooks reconciler_hooks(Metrics& metrics, Logger& logger);
// Each Prometheus request's latency and failure.
prom::RequestObserver prometheus_observer(Metrics& metrics);
// One tick: its time, each step's, and what it left.
void record_tick(Metrics& metrics, const control::TickSummary& summary, double seconds);

}  // namespace phasescale::app
