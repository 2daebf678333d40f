// Runs the built `phasescale` (PHASESCALE_CLI) as a user would, its outputs captured in files of
// a temporary directory: one helper for every CLI test.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "fixtures.hpp"

namespace phasescale::testing {

struct Run {
    int code = -1;
    std::string out, err;
};

inline std::string shell_quote(const std::string& word) {
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// `phasescale ARGUMENTS...` with stdout and stderr in DIR; the exit code (-1: killed by a signal).
inline Run run_cli(const TempDir& dir, const std::vector<std::string>& arguments) {
    std::string command = shell_quote(PHASESCALE_CLI);
    for (const auto& argument : arguments) command += " " + shell_quote(argument);
    command += " >" + shell_quote(dir / "stdout") + " 2>" + shell_quote(dir / "stderr");
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(dir / "stdout"),
            read_file(dir / "stderr")};
}

}  // namespace phasescale::testing
