#include "command.hpp"

#include <phasescale/model/number_text.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace phasescale::cli {

std::string format_number(double value) {
    return model::number_text(value);
}

std::string format_duration(double seconds) {
    char buffer[32];
    if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
    if (seconds < 0.1) {
        std::snprintf(buffer, sizeof buffer, "%.3f s", seconds);
    } else if (seconds < 60) {
        std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
    } else if (seconds < 3600) {
        auto s = static_cast<long>(std::lround(seconds));
        std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
    } else {
        auto m = static_cast<long>(std::lround(seconds / 60));
        std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", m / 60, m % 60);
    }
    return buffer;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

bool is_terminal(std::FILE* stream) {
    return ::isatty(::fileno(stream)) == 1;
}

bool use_colour(std::FILE* stream) {
    const char* no_colour = std::getenv("NO_COLOR");
    return is_terminal(stream) && (no_colour == nullptr || *no_colour == '\0');
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
    if (path_ == "-") {
        stream_ = stdout;
        return;
    }
    file_.emplace(path_);
    // The stream writes through a duplicate, so that the file keeps its own descriptor to commit.
    const int fd = ::dup(file_->fd());
    if (fd >= 0) stream_ = ::fdopen(fd, "w");
    if (stream_ == nullptr) {
        const int error = errno;
        if (fd >= 0) ::close(fd);
        throw std::runtime_error(path_ + ": cannot open: " + std::strerror(error));
    }
}

OutputFile::~OutputFile() {
    if (stream_ != nullptr && stream_ != stdout) std::fclose(stream_);
}

void OutputFile::commit() {
    if (stream_ == stdout) {
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            throw std::runtime_error(std::string("stdout: write failed: ") + std::strerror(errno));
        }
        return;
    }
    bool written = std::ferror(stream_) == 0;
    written = std::fclose(stream_) == 0 && written;
    stream_ = nullptr;
    if (!written) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    file_->commit();
}

}  // namespace phasescale::cli
