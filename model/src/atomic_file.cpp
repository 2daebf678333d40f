#include <phasescale/model/atomic_file.hpp>
#include <phasescale/model/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace phasescale::model {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw InputError(path + ": " + what + ": " + std::strerror(error));
}

std::string folder_of(const std::string& path) {
    const std::string parent = std::filesystem::path(path).parent_path().string();
    return parent.empty() ? "." : parent;
}

// A name beside the target that no one else uses now (O_EXCL checks it when it is created).
std::string fresh_name(const std::string& path) {
    static std::mt19937_64 random{std::random_device{}()};
    return path + ".tmp-" + std::to_string(::getpid()) + "-" +
           std::to_string(random() % 1000000000);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw InputError(path_ + ": is a folder, not a file");
        if (!S_ISREG(st.st_mode)) {  // a device or a FIFO: written through, never replaced
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd_ < 0) fail(path_, "cannot write", errno);
            through_ = true;
            return;
        }
    }
    fd_ = ::open(folder_of(path_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ >= 0) return;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        fail(path_, "cannot create", errno);
    named_temporary_ = fresh_name(path_);
    fd_ = ::open(named_temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        const int error = errno;
        named_temporary_.clear();
        fail(path_, "cannot create", error);
    }
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!named_temporary_.empty()) ::unlink(named_temporary_.c_str());
}

void AtomicFile::write(const char* data, std::size_t size) {
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = ::write(fd_, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(path_, "cannot write", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
}

void AtomicFile::commit() {
    if (through_) {
        const int closed = ::close(fd_);
        fd_ = -1;
        if (closed != 0) fail(path_, "cannot write", errno);
        return;
    }
    if (::fsync(fd_) != 0) fail(path_, "cannot write", errno);
    if (named_temporary_.empty()) {
        // The unnamed file gets a name: the target itself if there is none yet, else a fresh name
        // renamed over the target (linkat never replaces a file).
        const std::string self = "/proc/self/fd/" + std::to_string(fd_);
        if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
            ::close(fd_);
            fd_ = -1;
            return;
        }
        if (errno != EEXIST) fail(path_, "cannot create", errno);
        named_temporary_ = fresh_name(path_);
        if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, named_temporary_.c_str(),
                     AT_SYMLINK_FOLLOW) != 0) {
            const int error = errno;
            named_temporary_.clear();
            fail(path_, "cannot create", error);
        }
    }
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail(path_, "cannot write", errno);
    if (std::rename(named_temporary_.c_str(), path_.c_str()) != 0)
        fail(path_, "cannot replace", errno);
    named_temporary_.clear();
}

}  // namespace phasescale::model
