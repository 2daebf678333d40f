// What every harness shares: the input as text or as a file, and properties that abort (a crash
// libFuzzer reports with its input) when they do not hold. An exception a harness does not catch
// is a finding too: std::terminate aborts.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace phasescale::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

inline void require(bool ok, const char* property) {
    if (ok) return;
    std::fprintf(stderr, "fuzz: property violated: %s\n", property);
    std::abort();
}

// The input as a file for readers that take a path: an anonymous in-memory file, so that
// millions of runs touch no disk and leave nothing behind.
class MemoryFile {
public:
    explicit MemoryFile(std::string_view content) : fd_(memfd_create("fuzz-input", 0)) {
        require(fd_ >= 0, "memfd_create works");
        std::size_t done = 0;
        while (done < content.size()) {
            const ssize_t n = write(fd_, content.data() + done, content.size() - done);
            require(n > 0, "writing the input file works");
            done += static_cast<std::size_t>(n);
        }
    }
    ~MemoryFile() { close(fd_); }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    // A path that opens the file from the start.
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

}  // namespace phasescale::fuzz
