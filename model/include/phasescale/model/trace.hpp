#pragma once
// Reading resource traces: CSV with a header row, quoted or unquoted fields, one row per sample.
// Rows are grouped into executions by an id column and must be in time order within each id.

#include <phasescale/model/types.hpp>

#include <string>
#include <vector>

namespace phasescale::model {

// One execution (one container run): its samples in time order.
struct Execution {
    std::string id;                  // value of the id column
    std::string source;              // file it was read from
    std::vector<double> timestamps;  // unix seconds, non-decreasing
    std::vector<std::size_t> lines;  // 1-based line of each sample in the source file
    Matrix values;                   // rows = samples, columns = Trace::columns
};

struct Trace {
    std::vector<std::string> columns;   // the numeric columns read, in this order
    std::vector<Execution> executions;  // in order of first appearance, file by file

    // Index of a column in `columns`; throws InputError naming the column if absent.
    std::size_t column_index(const std::string& name) const;
    std::size_t rows() const;
};

struct TraceOptions {
    std::string id_column = "pod.id";
    std::string time_column = "timestamp";
    // Numeric columns to read. Every one must exist; other columns (text ones included) are
    // ignored.
    std::vector<std::string> columns;
};

// Reads one or more CSV files. Executions with the same id in different files stay distinct.
// Throws InputError "FILE:LINE:COLUMN: message" for a missing file or column, a non-numeric value,
// time going backwards within an id, a row with the wrong number of fields, or an empty file.
Trace read_trace(const std::vector<std::string>& paths, const TraceOptions& options);

// The column names of a trace file's header row (InputError for a missing or empty file).
std::vector<std::string> read_header(const std::string& path);

}  // namespace phasescale::model
