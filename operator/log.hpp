// The operator's logs: one JSON object per line on stdout ({"time", "level", "msg", fields...}).
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace phasescale::app {

enum class Level { Debug = 0, Info = 1, Warning = 2, Error = 3 };

// "debug", "info", "warning" (or "warn"), "error".
std::optional<Level> parse_level(const std::string& text);

// Thread-safe: lines from several threads never mix.
class Logger {
public:
    void set_level(Level level) { level_ = level; }
    // `level` as parse_level reads it (an unknown one logs as info); `fields` join the line.
    void log(const std::string& level, const std::string& message,
             const nlohmann::json& fields = {});

private:
    std::mutex mutex_;
    Level level_ = Level::Info;
};

}  // namespace phasescale::app
