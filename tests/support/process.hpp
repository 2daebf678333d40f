// What the C++ tests that start servers share: temporary folders, files, free loopback ports,
// bounded waits, and child processes that are always stopped (also when the test dies).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace test_support {

// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "phasescale-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    // Writes `text` to path()/name and returns the full path.
    std::string write(const std::string& name, const std::string& text) const;

private:
    std::filesystem::path path_;
};

// Throw std::runtime_error naming the file when it cannot be read or written.
std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);

// A loopback TCP port nobody listens on right now.
int free_port();
// Polls `ready` every `interval` until it returns true or `timeout` passes; returns whether it did.
bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds(100));
// Waits until something accepts connections on 127.0.0.1:port.
bool wait_for_port(int port, std::chrono::milliseconds timeout);

// A child process in a process group of its own, its stdout and stderr in `log`, run in `cwd`
// (default: ours). The destructor (and stop()) sends SIGTERM to the group, then SIGKILL if it has
// not ended within a grace time. If this test process dies, the kernel kills the child
// (PR_SET_PDEATHSIG).
class ChildProcess {
public:
    ChildProcess(std::vector<std::string> argv, std::filesystem::path log,
                 std::filesystem::path cwd = {});
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // False once the process has ended; then exit_code() tells how (-signal if killed).
    bool running();
    int exit_code() const { return exit_code_; }
    // Waits at most `timeout` for the process to end; returns its exit code, or throws.
    int wait(std::chrono::milliseconds timeout);
    void stop();
    // The end of the log, for failure messages.
    std::string log_tail(std::size_t bytes = 4000) const;
    std::string describe() const;  // "argv[0] (pid N)"

private:
    std::vector<std::string> argv_;
    std::filesystem::path log_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    int exit_code_ = 0;
};

}  // namespace test_support
