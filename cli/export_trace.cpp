// phasescale export-trace: the history of a namespace's containers in Prometheus, written as a
// trace CSV (what `train --prometheus` trains on), to inspect it, keep it, or train elsewhere.

#include "command.hpp"
#include "prometheus_trace.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

namespace phasescale::cli {

Command add_export_trace_command(CLI::App& parent) {
    struct Args {
        PrometheusSource source;
        std::string out = "-";
    };
    auto args = std::make_shared<Args>();
    CLI::App* app = parent.add_subcommand(
        "export-trace",
        "Write the CPU and memory history of a namespace's containers in Prometheus (cAdvisor "
        "metrics) as a trace "
        "CSV: timestamp, pod.id (NAMESPACE/POD/CONTAINER), cpu.usage.cores, mem.working.set");
    add_prometheus_options(app, args->source, true);
    app->add_option("--out", args->out, "Where to write the CSV ('-': stdout)")
        ->capture_default_str()
        ->type_name("TRACE.csv");
    app->footer(
        "Example:\n"
        "  phasescale export-trace --prometheus http://prometheus:9090 --namespace ml --selector "
        "app=trainer \\\n"
        "      --since 14d --step 15s --out trainers.csv");

    return {app, [args] {
                const model::Trace trace = read_prometheus_trace(args->source);
                OutputFile out(args->out);
                write_trace_csv(trace, out.stream());
                out.commit();
                std::fprintf(stderr, "exported %zu containers, %zu rows, from %s\n",
                             trace.executions.size(), trace.rows(), describe(args->source).c_str());
                return 0;
            }};
}

}  // namespace phasescale::cli
