#include <phasescale/model/error.hpp>
#include <phasescale/model/trace.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace phasescale::model {

std::size_t Trace::column_index(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (columns[i] == name) return i;
    }
    std::string have;
    for (const auto& c : columns) have += (have.empty() ? "" : ", ") + c;
    throw InputError("trace has no column \"" + name + "\" (columns: " + have + ")");
}

std::size_t Trace::rows() const {
    std::size_t n = 0;
    for (const auto& e : executions) n += static_cast<std::size_t>(e.values.rows());
    return n;
}

namespace {

// Traces can be hundreds of megabytes: read them in blocks, never whole.
constexpr std::size_t kBlockSize = 1 << 20;

struct Field {
    std::string_view text;  // between the quotes for a quoted field, "" not yet unescaped
    bool escaped = false;   // contains "" pairs
};

std::string unescape(const Field& f) {
    if (!f.escaped) return std::string(f.text);
    std::string out;
    out.reserve(f.text.size());
    for (std::size_t i = 0; i < f.text.size(); ++i) {
        out += f.text[i];
        if (f.text[i] == '"') ++i;  // skip the second quote of a pair
    }
    return out;
}

std::string format_number(double x) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

// Reads CSV records from a file block by block. A record is parsed only once it is complete in
// the buffer, so the field views stay valid until the next call.
class CsvReader {
public:
    CsvReader(std::FILE* file, std::string source) : file_(file), source_(std::move(source)) {}

    // Next non-blank record; false at the end of the file.
    bool next(std::vector<Field>& fields, std::size_t& line) {
        for (;;) {
            std::size_t pos = pos_, lines = 0;
            const Status s = parse(fields, pos, lines);
            if (s == Status::kNeedMore) {
                refill();
                continue;
            }
            if (s == Status::kEnd) return false;
            line = line_;
            line_ += lines;
            pos_ = pos;
            if (fields.size() == 1 && fields[0].text.empty()) continue;  // blank line
            return true;
        }
    }

private:
    enum class Status { kRecord, kNeedMore, kEnd };

    // Parses one record at `pos`; on success advances pos past its line end and counts the line
    // breaks it spans (quoted fields may hold newlines).
    Status parse(std::vector<Field>& fields, std::size_t& pos, std::size_t& lines) {
        fields.clear();
        const std::string_view b(buffer_);
        if (pos >= b.size()) return eof_ ? Status::kEnd : Status::kNeedMore;
        for (;;) {
            Field f;
            if (pos < b.size() && b[pos] == '"') {
                const std::size_t start = ++pos;
                const std::size_t opened = line_ + lines;
                for (;;) {
                    if (pos >= b.size()) {
                        if (!eof_) return Status::kNeedMore;
                        fail(opened, fields.size() + 1, "unterminated quoted field");
                    }
                    if (b[pos] == '"') {
                        if (pos + 1 >= b.size() && !eof_) return Status::kNeedMore;
                        if (pos + 1 < b.size() && b[pos + 1] == '"') {
                            f.escaped = true;
                            pos += 2;
                            continue;
                        }
                        break;
                    }
                    if (b[pos] == '\n') ++lines;
                    ++pos;
                }
                f.text = b.substr(start, pos - start);
                ++pos;  // closing quote
                if (pos < b.size() && b[pos] == '\r') ++pos;
                if (pos < b.size() && b[pos] != ',' && b[pos] != '\n') {
                    fail(line_ + lines, fields.size() + 1, "unexpected text after a closing quote");
                }
                if (pos >= b.size() && !eof_) return Status::kNeedMore;
            } else {
                const std::size_t start = pos;
                while (pos < b.size() && b[pos] != ',' && b[pos] != '\n') ++pos;
                if (pos >= b.size() && !eof_) return Status::kNeedMore;
                std::size_t end = pos;
                if (end > start && b[end - 1] == '\r') --end;  // CRLF
                f.text = b.substr(start, end - start);
            }
            fields.push_back(f);
            if (pos >= b.size()) return Status::kRecord;  // last line without a newline
            if (b[pos] == '\n') {
                ++pos;
                ++lines;
                return Status::kRecord;
            }
            ++pos;  // comma
        }
    }

    void refill() {
        buffer_.erase(0, pos_);
        pos_ = 0;
        const std::size_t old = buffer_.size();
        buffer_.resize(old + kBlockSize);
        const std::size_t got = std::fread(buffer_.data() + old, 1, kBlockSize, file_);
        buffer_.resize(old + got);
        if (got < kBlockSize) {
            if (std::ferror(file_)) {
                throw InputError(source_ + ": cannot read: " + std::strerror(errno));
            }
            eof_ = true;
        }
        if (first_block_) {
            first_block_ = false;
            if (buffer_.starts_with("\xEF\xBB\xBF")) buffer_.erase(0, 3);  // UTF-8 byte order mark
        }
    }

    [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& message) const {
        throw InputError(source_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
                         ": " + message);
    }

    std::FILE* file_;
    std::string source_;
    std::string buffer_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;  // line of the record at pos_
    bool eof_ = false;
    bool first_block_ = true;
};

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// Locale-independent; accepts a leading '+', which from_chars does not. Tens of millions of calls
// per trace: the reason for a failure is worked out separately, by number_error.
bool parse_number(std::string_view text, double& out, std::from_chars_result& result) {
    text = trim(text);
    if (text.empty()) return false;
    if (text.front() == '+' && text.size() > 1 && text[1] != '-') text.remove_prefix(1);
    const char* end = text.data() + text.size();
    result = std::from_chars(text.data(), end, out);
    return result.ec == std::errc() && result.ptr == end && std::isfinite(out);
}

std::string number_error(std::string_view text) {
    double x;
    std::from_chars_result r{};
    parse_number(text, x, r);
    text = trim(text);
    if (text.empty()) return "empty value, expected a number";
    // At most 60 characters of the input: a bad field can be a megabyte long.
    std::string quoted(1, '"');  // built piecewise: GCC 12 warns falsely on "\"" + string
    quoted.append(text.substr(0, 60)).append(text.size() > 60 ? "...\"" : "\"");
    if (r.ec == std::errc::result_out_of_range) return quoted + " is out of range for a double";
    if (r.ec != std::errc() || r.ptr != text.data() + text.size())
        return quoted + " is not a number";
    return quoted + " is not a finite number";
}

// Samples are unix seconds up to the year 5138, and usage (cores, bytes, rates) neither negative
// nor beyond 1e18: anything else is a broken trace, not a workload.
constexpr double kLatestTime = 1e11, kLargestValue = 1e18;

struct Building {
    Execution execution;
    std::vector<double> values;  // row-major, copied into execution.values at the end
};

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_file(const std::string& path) {
    File file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw InputError(path + ": cannot open: " + std::strerror(errno));
    return file;
}

// The column names of the first row; `line` is left at that row's line.
std::vector<std::string> header_row(CsvReader& csv, const std::string& path, std::size_t& line) {
    std::vector<Field> fields;
    if (!csv.next(fields, line)) throw InputError(path + ": empty file (no header)");
    std::vector<std::string> header;
    header.reserve(fields.size());
    for (const auto& f : fields) header.push_back(unescape(f));
    return header;
}

void read_file(const std::string& path, const TraceOptions& options, Trace& trace) {
    const File file = open_file(path);
    CsvReader csv(file.get(), path);
    std::size_t line = 0;
    const std::vector<std::string> header = header_row(csv, path, line);
    std::vector<Field> fields;
    const auto find = [&](const std::string& name) {
        std::size_t found = header.size();
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (header[i] != name) continue;
            if (found != header.size()) {
                throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(i + 1) +
                                 ": duplicate column \"" + name + "\"");
            }
            found = i;
        }
        if (found == header.size()) {
            std::string have;
            for (const auto& h : header) have += (have.empty() ? "" : ", ") + h;
            if (have.size() > 200) have = have.substr(0, 200) + "...";
            throw InputError(path + ":" + std::to_string(line) + ": missing column \"" + name +
                             "\" (header has: " + have + ")");
        }
        return found;
    };
    const std::size_t id_field = find(options.id_column);
    const std::size_t time_field = find(options.time_column);
    std::vector<std::size_t> value_fields;
    value_fields.reserve(options.columns.size());
    for (const auto& c : options.columns) value_fields.push_back(find(c));
    const std::size_t width = options.columns.size();

    std::vector<Building> building;
    std::unordered_map<std::string, std::size_t> by_id;
    std::string last_id;
    std::size_t last = 0;  // index in `building` of last_id, when building is not empty

    const auto fail = [&](std::size_t field, const std::string& message) {
        throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(field + 1) +
                         ": " + message);
    };
    const auto number = [&](std::size_t field, const std::string& column) {
        double x = 0;
        std::from_chars_result r;
        if (!parse_number(fields[field].text, x, r)) {
            fail(field, "column \"" + column + "\": " + number_error(fields[field].text));
        }
        return x;
    };

    while (csv.next(fields, line)) {
        if (fields.size() != header.size()) {
            fail(std::min(fields.size(), header.size()),
                 "row has " + std::to_string(fields.size()) + " fields, the header has " +
                     std::to_string(header.size()));
        }
        const Field& idf = fields[id_field];
        if (idf.text.empty()) fail(id_field, "column \"" + options.id_column + "\": empty id");
        // Rows of one execution usually come together: skip the hash lookup for them.
        if (building.empty() || idf.escaped || idf.text != last_id) {
            std::string id = unescape(idf);
            auto [it, added] = by_id.try_emplace(id, building.size());
            if (added) {
                Building b;
                b.execution.id = id;
                b.execution.source = path;
                building.push_back(std::move(b));
            }
            last = it->second;
            last_id = std::move(id);
        }
        Building& b = building[last];
        Execution& e = b.execution;

        const double t = number(time_field, options.time_column);
        if (!(t >= 0 && t <= kLatestTime))
            fail(time_field, "column \"" + options.time_column + "\": not a unix time in seconds");
        if (!e.timestamps.empty() && t <= e.timestamps.back()) {
            fail(time_field,
                 std::string(t == e.timestamps.back() ? "a second sample at the same time"
                                                      : "time goes backwards") +
                     " for " + options.id_column + " \"" + e.id + "\": " + format_number(t) +
                     " after " + format_number(e.timestamps.back()) + " (line " +
                     std::to_string(e.lines.back()) + ")");
        }
        for (std::size_t k = 0; k < width; ++k) {
            const double x = number(value_fields[k], options.columns[k]);
            if (!(x >= 0 && x <= kLargestValue))
                fail(value_fields[k], "column \"" + options.columns[k] + "\": " + format_number(x) +
                                          (x < 0 ? " is negative (usage never is)"
                                                 : " is beyond any machine (at most 1e18)"));
            b.values.push_back(x);
        }
        e.timestamps.push_back(t);
        e.lines.push_back(line);
    }
    if (building.empty()) throw InputError(path + ": no data rows");

    for (auto& b : building) {
        const auto rows = static_cast<Eigen::Index>(b.execution.timestamps.size());
        b.execution.values =
            Eigen::Map<const Matrix>(b.values.data(), rows, static_cast<Eigen::Index>(width));
        b.values = {};
        trace.executions.push_back(std::move(b.execution));
    }
}

// The first path that names the same file as an earlier one, through `.`, `..` or a symbolic link
// (its executions would count twice).
std::optional<std::string> repeated_file(const std::vector<std::string>& paths) {
    std::set<std::filesystem::path> seen;
    for (const std::string& path : paths) {
        std::error_code error;  // one that cannot be resolved is read_file's to report
        const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, error);
        if (!error && !seen.insert(resolved).second) return path;
    }
    return std::nullopt;
}

}  // namespace

std::vector<std::string> read_header(const std::string& path) {
    const File file = open_file(path);
    CsvReader csv(file.get(), path);
    std::size_t line = 0;
    return header_row(csv, path, line);
}

Trace read_trace(const std::vector<std::string>& paths, const TraceOptions& options) {
    if (paths.empty()) throw InputError("no trace files given");
    if (const std::optional<std::string> again = repeated_file(paths))
        throw InputError(*again + ": this trace file is given twice");
    Trace trace;
    trace.columns = options.columns;
    for (const auto& path : paths) read_file(path, options, trace);
    return trace;
}

}  // namespace phasescale::model
