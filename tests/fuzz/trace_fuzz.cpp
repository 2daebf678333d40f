// The trace reader (model::read_trace) on any file: InputError or a trace that keeps its promises.
#include <phasescale/model/error.hpp>
#include <phasescale/model/trace.hpp>

#include <algorithm>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

// The header's columns but the id and the time, as `phasescale train` reads them. Split here,
// roughly (quotes dropped): read_header would read the file a second time, through the reader's
// 1 MiB buffer, halving the runs for nothing (read_trace reads the header the same way).
model::TraceOptions options_for(std::string_view text) {
    model::TraceOptions options;
    const std::string_view header = text.substr(0, text.find_first_of("\r\n"));
    for (std::size_t begin = 0; begin <= header.size();) {
        const std::size_t comma = std::min(header.find(',', begin), header.size());
        std::string name(header.substr(begin, comma - begin));
        std::erase(name, '"');
        if (name != options.id_column && name != options.time_column)
            options.columns.push_back(name);
        begin = comma + 1;
    }
    return options;
}

void check(const model::Trace& trace, const model::TraceOptions& options) {
    fuzz::require(trace.columns == options.columns, "the columns asked for are the columns read");
    for (const auto& e : trace.executions) {
        const auto rows = e.timestamps.size();
        fuzz::require(rows > 0 && e.lines.size() == rows, "one line per sample");
        fuzz::require(static_cast<std::size_t>(e.values.rows()) == rows,
                      "one row of values per sample");
        fuzz::require(std::is_sorted(e.timestamps.begin(), e.timestamps.end()),
                      "time never goes backwards");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = fuzz::text_of(data, size);
    const fuzz::MemoryFile file(text);
    try {
        const auto options = options_for(text);
        check(model::read_trace({file.path()}, options), options);
    } catch (const model::InputError&) {
        // A bad trace, reported: what the reader promises.
    }
    return 0;
}
