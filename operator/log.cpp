#include "log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace phasescale::app {

namespace {

// RFC 3339 in UTC with milliseconds: 2026-12-01T12:44:41.123Z.
std::string now_text() {
    const auto now = std::chrono::system_clock::now();
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char full[48];
    std::snprintf(full, sizeof full, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
    return full;
}

}  // namespace

std::optional<Level> parse_level(const std::string& text) {
    if (text == "debug") return Level::Debug;
    if (text == "info") return Level::Info;
    if (text == "warning" || text == "warn") return Level::Warning;
    if (text == "error") return Level::Error;
    return std::nullopt;
}

void Logger::log(const std::string& level, const std::string& message,
                 const nlohmann::json& fields) {
    if (parse_level(level).value_or(Level::Info) < level_) return;
    nlohmann::json line = nlohmann::json::object();
    line["time"] = now_text();
    line["level"] = level == "warn" ? "warning" : level;
    line["msg"] = message;
    if (fields.is_object())
        for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = it.value();
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::lock_guard lock(mutex_);
    std::cout << text << '\n' << std::flush;
}

}  // namespace phasescale::app
