// The operator's own metrics (/metrics, prometheus-cpp), and the hooks that feed them from the
// control loop and the Prometheus client.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <phasescale/control/reconciler.hpp>
#include <phasescale/loan/controller.hpp>
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

    // Per PhaseAutoscaler (labels namespace, autoscaler; container or phase): its outcome.
    prometheus::Family<prometheus::Gauge>& requested_cpu;
    prometheus::Family<prometheus::Gauge>& recommended_cpu;
    prometheus::Family<prometheus::Gauge>& requested_memory;
    prometheus::Family<prometheus::Gauge>& recommended_memory;
    prometheus::Family<prometheus::Counter>& autoscaler_resizes;
    prometheus::Family<prometheus::Counter>& oom_kills_after_resize;
    prometheus::Family<prometheus::Gauge>& containers_in_phase;
    prometheus::Family<prometheus::Gauge>& autoscaler_ready;
    // Per CapacityLoan (label capacityloan).
    prometheus::Family<prometheus::Gauge>& loans_loaned;
    prometheus::Family<prometheus::Counter>& loan_returns;
    prometheus::Family<prometheus::Counter>& loan_evictions;

    // The /metrics page (Prometheus text format).
    std::string text() const;

    // An autoscaler's gauges after a tick: the series it no longer has (a container or phase
    // gone) are removed.
    void observe(const control::AutoscalerReport& report);
    void count_resize(const std::string& autoscaler, const std::string& result,
                      const std::string& reason);
    void count_oom_after_resize(const std::string& autoscaler);
    // A CapacityLoan after a pass.
    void observe_loan(const loan::LoanReport& report);
    // Every series of an object that is gone ("namespace/name" of an autoscaler, or a
    // CapacityLoan's name): no stale series stay.
    void forget(const std::string& object);

private:
    // The series of one object, each with the family that removes it.
    struct Series {
        std::vector<std::pair<prometheus::Family<prometheus::Gauge>*, prometheus::Gauge*>> gauges;
        std::vector<std::pair<prometheus::Family<prometheus::Counter>*, prometheus::Counter*>>
            counters;
    };
    void keep_gauges(const std::string& object, Series fresh);
    prometheus::Counter& counter(const std::string& object,
                                 prometheus::Family<prometheus::Counter>& family,
                                 const prometheus::Labels& labels);
    std::mutex mutex_;                      // the tick's and the loan controller's threads
    std::map<std::string, Series> series_;  // by object
};

// The control loop's hooks: its counts into `metrics`, its logs to `logger`.
control::ReconcilerHooks reconciler_hooks(Metrics& metrics, Logger& logger);
// Each Prometheus request's latency and failure.
prom::RequestObserver prometheus_observer(Metrics& metrics);
// One tick: its time, each step's, and what it left.
void record_tick(Metrics& metrics, const control::TickSummary& summary, double seconds);

}  // namespace phasescale::app
