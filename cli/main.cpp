// phasescale: train, apply and inspect phase models of deep-learning training containers.
// Exit codes: 0 success, 1 an error while running (bad trace, bad model file, ...), 2 a bad
// command line.

#include "command.hpp"

#include <phasescale/version.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int kRunError = 1;
constexpr int kUsageError = 2;

void report(const char* what) {
    std::fprintf(stderr, "phasescale: error: %s\n", what);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace phasescale::cli;

    CLI::App app{
        "phasescale learns the phases of deep-learning training containers from their resource "
        "traces (a CRBM plus k-means, the AI4DL method), and finds the phase of every sample.",
        "phasescale"};
    // Every option's help shows its default.
    app.option_defaults()->always_capture_default();
    app.set_version_flag("--version", std::string("phasescale ") + phasescale::kVersion +
                                          " (revision " + phasescale::kRevision + ")");

    std::vector<Command> commands;
    try {
        commands = {
            add_train_command(app),       add_export_trace_command(app), add_predict_command(app),
            add_inspect_command(app),     add_generate_command(app),     add_simulate_command(app),
            add_cluster_sim_command(app), add_cluster_gen_command(app),  add_recommend_command(app),
            add_name_phases_command(app), add_score_live_command(app)};
        app.require_subcommand(1);
        app.footer("Run 'phasescale COMMAND --help' for the options of a command.");
        app.failure_message([](const CLI::App*, const CLI::Error& e) {
            return std::string("phasescale: error: ") + e.what() +
                   "\nRun with --help for more information.\n";
        });
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);  // prints the help or the error
        return code == 0 ? 0 : kUsageError;
    }

    std::string running;
    try {
        for (const Command& command : commands) {
            if (!command.app->parsed()) continue;
            running = command.app->get_name();
            return command.run();
        }
        return kUsageError;  // unreachable: a subcommand is required
    } catch (const std::bad_alloc&) {
        const std::string message =
            "out of memory in `phasescale " + running +
            "`: the inputs or options (trace size, --jobs, --hidden, --history...) need more "
            "memory than there is";
        report(message.c_str());
        return kRunError;
    } catch (const UsageError& e) {
        report(e.what());
        std::fprintf(stderr, "Run with --help for more information.\n");
        return kUsageError;
    } catch (const std::exception& e) {
        report(e.what());
        return kRunError;
    } catch (...) {
        report("unknown failure");
        return kRunError;
    }
}
