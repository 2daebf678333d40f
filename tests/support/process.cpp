#include "process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace test_support {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TempDir::TempDir(const std::string& prefix) {
    std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed: " + std::string(strerror(errno)));
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    write_file(p, text);
    return p.string();
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        throw std::runtime_error("cannot bind a loopback port");
    }
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (ready()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(interval);
    }
}

bool wait_for_port(int port, std::chrono::milliseconds timeout) {
    return wait_until(
        [port] {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            addr.sin_port = htons(static_cast<uint16_t>(port));
            const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
            close(fd);
            return ok;
        },
        timeout, 50ms);
}

ChildProcess::ChildProcess(std::vector<std::string> argv, fs::path log, fs::path cwd)
    : argv_(std::move(argv)), log_(std::move(log)) {
    if (argv_.empty()) throw std::invalid_argument("ChildProcess: empty argv");
    const pid_t parent = getpid();
    int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error("cannot open " + log_.string());
    std::vector<char*> args;
    for (auto& a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
        close(log_fd);
        throw std::runtime_error("fork failed: " + std::string(strerror(errno)));
    }
    if (pid_ == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // the test died before prctl
        if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        // Signals blocked by the test's threads must not stay blocked in the child.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execvp(args[0], args.data());
        dprintf(STDERR_FILENO, "exec %s failed: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid_, pid_);  // also here, so that the group exists before stop() can be called
    close(log_fd);
}

ChildProcess::~ChildProcess() {
    stop();
}

bool ChildProcess::running() {
    if (reaped_) return false;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != pid_) {
        return true;
    }
    // Still a zombie, so its group id cannot have been reused: end whatever it left in its group,
    // then reap it.
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return false;
}

int ChildProcess::wait(std::chrono::milliseconds timeout) {
    if (!wait_until([this] { return !running(); }, timeout, 20ms)) {
        throw std::runtime_error(describe() + " still running after " +
                                 std::to_string(timeout.count()) + " ms");
    }
    return exit_code_;
}

void ChildProcess::stop() {
    if (pid_ <= 0 || !running()) return;
    kill(-pid_, SIGTERM);
    if (!wait_until([this] { return !running(); }, 5s, 20ms)) {
        kill(-pid_, SIGKILL);
        wait_until([this] { return !running(); }, 5s, 20ms);
    }
}

std::string ChildProcess::log_tail(std::size_t bytes) const {
    std::string text;
    try {
        text = read_file(log_);
    } catch (const std::exception&) {
        return "(no log: " + log_.string() + ")";
    }
    if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
    return text;
}

std::string ChildProcess::describe() const {
    return argv_.front() + " (pid " + std::to_string(pid_) + ")";
}

}  // namespace test_support
