// The trace reader (model::read_trace) on any file: InputError or a trace that keeps its promises.
#include <phasescale/model/error.hpp>
#include <phasescale/model/trace.hpp>

#include <algorithm>

#include "fuzz.hpp"

using namespace phasescale;

namespace {

// Every column of the header but the id and the time, as `phasescale train` reads them.
model::TraceOptions options_for(const std::vector<std::string>& header) {
  model::TraceOptions options;
  for (const auto& name : header) {
    if (name != options.id_column && name != options.time_column) options.columns.push_back(name);
  }
  return options;
}

void check(const model::Trace& trace, const model::TraceOptions& options) {
  fuzz::require(trace.columns == options.columns, "the columns asked for are the columns read");
  for (const auto& e : trace.executions) {
    const auto rows = e.timestamps.size();
    fuzz::require(rows > 0 && e.lines.size() == rows, "one line per sample");
    fuzz::require(static_cast<std::size_t>(e.values.rows()) == rows, "one row of values per sample");
    fuzz::require(std::is_sorted(e.timestamps.begin(), e.timestamps.end()), "time never goes backwards");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemoryFile file(fuzz::text_of(data, size));
  try {
    const auto options = options_for(model::read_header(file.path()));
    check(model::read_trace({file.path()}, options), options);
  } catch (const model::InputError&) {
    // A bad trace, reported: what the reader promises.
  }
  return 0;
}
