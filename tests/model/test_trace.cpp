#include <phasescale/model/error.hpp>
#include <phasescale/model/trace.hpp>

#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace fs = std::filesystem;
using namespace phasescale::model;

using phasescale::testing::read_file;
using phasescale::testing::TempDir;

namespace {

const std::string kSample = "../shared/data/ai4dl/sample.csv";
const std::string kSampleVr = "../shared/data/ai4dl/sample-vr.csv";

TraceOptions usage_options() {
    TraceOptions o;
    o.columns = {"cpu.usage.cores", "mem.working.set"};
    return o;
}

// The message read_trace throws on `text`.
std::string error_of(const std::string& path, const TraceOptions& options) {
    try {
        read_trace({path}, options);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("read_trace reads the quoted AI4DL sample", "[trace]") {
    const Trace trace = read_trace({kSample}, usage_options());
    REQUIRE(trace.columns == std::vector<std::string>{"cpu.usage.cores", "mem.working.set"});
    REQUIRE(trace.executions.size() == 4);
    const std::vector<std::string> ids = {"exec1", "exec2", "exec3", "exec4"};
    const std::vector<Eigen::Index> rows = {65, 52, 59, 28};
    for (std::size_t i = 0; i < 4; ++i) {
        const Execution& e = trace.executions[i];
        CHECK(e.id == ids[i]);
        CHECK(e.source == kSample);
        CHECK(e.values.rows() == rows[i]);
        CHECK(e.values.cols() == 2);
        CHECK(e.timestamps.size() == static_cast<std::size_t>(rows[i]));
        CHECK(e.lines.size() == static_cast<std::size_t>(rows[i]));
    }
    CHECK(trace.rows() == 204);

    // First row: 1565962220,"service1","exec1",4,756911788,0.041,...,2478080
    const Execution& first = trace.executions[0];
    CHECK(first.timestamps[0] == 1565962220.0);
    CHECK(first.lines[0] == 2);
    CHECK(first.values(0, 0) == 0.041);
    CHECK(first.values(0, 1) == 2478080.0);
    CHECK(first.values(1, 1) == 10719232.0);
    // The executions follow each other in the file.
    CHECK(trace.executions[1].lines[0] == 2 + 65);
    CHECK(trace.executions[3].lines.back() == 205);

    CHECK(trace.column_index("mem.working.set") == 1);
    REQUIRE_THROWS_WITH(trace.column_index("gpu"),
                        "trace has no column \"gpu\" (columns: cpu.usage.cores, mem.working.set)");
}

TEST_CASE("read_trace reads the unquoted sample and every model feature", "[trace]") {
    TraceOptions options;
    options.columns = {
        "cpu.usage",   "cpu.usage.cores", "cpu.usage.pct", "cpu.usage.pct.container.requested",
        "mem.current", "mem.limit",       "mem.usage.pct", "mem.working.set"};
    const Trace trace = read_trace({kSampleVr}, options);
    REQUIRE(trace.executions.size() == 1);
    const Execution& e = trace.executions[0];
    CHECK(e.id == "exec2");
    REQUIRE(e.values.rows() == 2286);
    REQUIRE(e.values.cols() == 8);
    // 1566384070,service2,exec2,16,26388206571,1.802,11.26,43.99,20598784,19327352832,0.11,20566016
    CHECK(e.timestamps[0] == 1566384070.0);
    CHECK(e.values(0, 0) == 26388206571.0);
    CHECK(e.values(0, 1) == 1.802);
    CHECK(e.values(0, 3) == 43.99);
    CHECK(e.values(0, 5) == 19327352832.0);
    CHECK(e.values(0, 7) == 20566016.0);
    CHECK(e.lines.back() == 2287);
    CHECK(std::is_sorted(e.timestamps.begin(), e.timestamps.end()));
}

TEST_CASE("read_trace groups interleaved ids in order of first appearance", "[trace]") {
    TempDir dir;
    const std::string path = dir.write("interleaved.csv",
                                       "pod.id,timestamp,note,cpu.usage.cores,mem.working.set\n"
                                       "b,10,x,1,100\n"
                                       "a,5,y,2,200\n"
                                       "b,20,z,3,300\n"
                                       "c,1,,4,400\n"
                                       "a,6,w,5,500\n");
    const Trace trace = read_trace({path}, usage_options());
    REQUIRE(trace.executions.size() == 3);
    const Execution& b = trace.executions[0];
    const Execution& a = trace.executions[1];
    const Execution& c = trace.executions[2];
    CHECK(b.id == "b");
    CHECK(a.id == "a");
    CHECK(c.id == "c");
    CHECK(b.timestamps == std::vector<double>{10, 20});
    CHECK(b.lines == std::vector<std::size_t>{2, 4});
    CHECK(b.values(1, 0) == 3.0);
    CHECK(b.values(1, 1) == 300.0);
    CHECK(a.timestamps == std::vector<double>{5, 6});
    CHECK(a.lines == std::vector<std::size_t>{3, 6});
    CHECK(a.values(1, 1) == 500.0);
    CHECK(c.values.rows() == 1);
    CHECK(trace.rows() == 5);
}

TEST_CASE("read_trace handles quoting, CRLF, number forms and blank lines", "[trace]") {
    TempDir dir;
    const std::string path = dir.write("forms.csv",
                                       "\"timestamp\",\"pod.id\",\"comment, with "
                                       "comma\",\"mem.working.set\",\"cpu.usage.cores\"\r\n"
                                       "1,\"pod \"\"one\"\", x\",\"said \"\"hi\"\"\",1e3,2.5E-1\r\n"
                                       "2,\"pod \"\"one\"\", x\",\"two\nlines\",+7,\" 0.5 \"\r\n"
                                       "3,plain,text,123456789012345678,0\r\n"
                                       "\r\n"
                                       "\n");
    const Trace trace = read_trace({path}, usage_options());
    REQUIRE(trace.executions.size() == 2);
    const Execution& one = trace.executions[0];
    CHECK(one.id == "pod \"one\", x");
    REQUIRE(one.values.rows() == 2);
    CHECK(one.values(0, 0) == 0.25);
    CHECK(one.values(0, 1) == 1000.0);
    CHECK(one.values(1, 0) == 0.5);
    CHECK(one.values(1, 1) == 7.0);
    // The quoted newline makes the second record span lines 3-4.
    CHECK(one.lines == std::vector<std::size_t>{2, 3});
    const Execution& plain = trace.executions[1];
    CHECK(plain.lines == std::vector<std::size_t>{5});
    CHECK(plain.values(0, 1) == 123456789012345678.0);
}

TEST_CASE("read_trace keeps executions of different files apart", "[trace]") {
    TempDir dir;
    const std::string header = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    const std::string one = dir.write("one.csv", header + "1,p,1,10\n2,p,2,20\n");
    const std::string two = dir.write("two.csv", header + "1,p,3,30\n");
    const Trace trace = read_trace({one, two}, usage_options());
    REQUIRE(trace.executions.size() == 2);
    CHECK(trace.executions[0].source == one);
    CHECK(trace.executions[0].values.rows() == 2);
    CHECK(trace.executions[1].source == two);
    CHECK(trace.executions[1].values(0, 0) == 3.0);
    // A file without a final newline, and the reading of only the id and time columns.
    const std::string bare = dir.write("bare.csv", "timestamp,pod.id\n5,q");
    TraceOptions none;
    const Trace ids = read_trace({bare}, none);
    REQUIRE(ids.executions.size() == 1);
    CHECK(ids.executions[0].values.cols() == 0);
    CHECK(ids.executions[0].timestamps == std::vector<double>{5});
}

TEST_CASE("read_trace refuses a file given twice, however it is spelt", "[trace]") {
    TempDir dir;
    const std::string one =
        dir.write("one.csv", "timestamp,pod.id,cpu.usage.cores,mem.working.set\n1,p,1,10\n");
    const std::string again = (fs::path(one).parent_path() / "." / "one.csv").string();
    const std::string link = (dir.path() / "link.csv").string();
    fs::create_symlink(one, link);
    for (const std::string& second : {one, again, link}) {
        std::string message = "(no error)";
        try {
            read_trace({one, second}, usage_options());
        } catch (const InputError& e) {
            message = e.what();
        }
        CHECK(message == second + ": this trace file is given twice");
    }
    // Missing files are left to the reader, which names them.
    CHECK_THROWS_AS(read_trace({one, (dir.path() / "none.csv").string()}, usage_options()),
                    InputError);
}

TEST_CASE("read_trace reports a missing column with the header", "[trace]") {
    TempDir dir;
    const std::string path = dir.write("trace.csv", "timestamp,pod.id,cpu.usage.cores\n1,a,0.5\n");
    CHECK(error_of(path, usage_options()) ==
          path +
              ":1: missing column \"mem.working.set\" (header has: timestamp, pod.id, "
              "cpu.usage.cores)");
    TraceOptions other_id = usage_options();
    other_id.id_column = "job";
    CHECK(error_of(path, other_id).starts_with(path + ":1: missing column \"job\""));
    const std::string twice =
        dir.write("twice.csv", "timestamp,pod.id,cpu.usage.cores,mem.working.set,pod.id\n");
    CHECK(error_of(twice, usage_options()) == twice + ":1:5: duplicate column \"pod.id\"");
}

TEST_CASE("read_trace reports bad numbers with line, field and column name", "[trace]") {
    TempDir dir;
    const std::string header = "timestamp,service,pod.id,x,cpu.usage.cores,mem.working.set\n";
    const auto bad = [&](const std::string& value) {
        const std::string path = dir.write(
            "trace.csv", header + "1,s,a,text,0.5,100\n" + "2,s,a,text," + value + ",100\n");
        return error_of(path, usage_options());
    };
    const std::string where = dir.path("trace.csv") + ":3:5: column \"cpu.usage.cores\": ";
    CHECK(bad("abc") == where + "\"abc\" is not a number");
    CHECK(bad("1.5x") == where + "\"1.5x\" is not a number");
    CHECK(bad("0x10") == where + "\"0x10\" is not a number");
    CHECK(bad("") == where + "empty value, expected a number");
    CHECK(bad("\"\"") == where + "empty value, expected a number");
    CHECK(bad("nan") == where + "\"nan\" is not a finite number");
    CHECK(bad("NaN") == where + "\"NaN\" is not a finite number");
    CHECK(bad("-inf") == where + "\"-inf\" is not a finite number");
    CHECK(bad("1e999") == where + "\"1e999\" is out of range for a double");
    // The time column is a number too.
    const std::string path = dir.write("time.csv", header + "soon,s,a,t,0.5,100\n");
    CHECK(error_of(path, usage_options()) ==
          path + ":2:1: column \"timestamp\": \"soon\" is not a number");
}

TEST_CASE("read_trace refuses time going backwards within an id", "[trace]") {
    TempDir dir;
    const std::string path = dir.write("trace.csv",
                                       "timestamp,pod.id,cpu.usage.cores,mem.working.set\n"
                                       "1565962340,exec2,1,1\n"
                                       "1565962000,exec1,1,1\n"
                                       "1565962300,exec2,1,1\n");
    CHECK(error_of(path, usage_options()) ==
          path +
              ":4:1: time goes backwards for pod.id \"exec2\": 1565962300 after 1565962340 "
              "(line 2)");
}

TEST_CASE("read_trace refuses empty files, bare headers and ragged rows", "[trace]") {
    TempDir dir;
    const std::string empty = dir.write("empty.csv", "");
    CHECK(error_of(empty, usage_options()) == empty + ": empty file (no header)");
    const std::string blank = dir.write("blank.csv", "\n\r\n");
    CHECK(error_of(blank, usage_options()) == blank + ": empty file (no header)");

    const std::string header = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    const std::string bare = dir.write("header.csv", header + "\n");
    CHECK(error_of(bare, usage_options()) == bare + ": no data rows");

    const std::string short_row = dir.write("short.csv", header + "1,a,1,1\n2,a,1\n");
    CHECK(error_of(short_row, usage_options()) ==
          short_row + ":3:4: row has 3 fields, the header has 4");
    const std::string long_row = dir.write("long.csv", header + "1,a,1,1,9\n");
    CHECK(error_of(long_row, usage_options()) ==
          long_row + ":2:5: row has 5 fields, the header has 4");

    const std::string open_quote = dir.write("quote.csv", header + "1,\"a,1,1\n");
    CHECK(error_of(open_quote, usage_options()) == open_quote + ":2:2: unterminated quoted field");
    const std::string after_quote = dir.write("after.csv", header + "1,\"a\"b,1,1\n");
    CHECK(error_of(after_quote, usage_options()) ==
          after_quote + ":2:2: unexpected text after a closing quote");
    const std::string no_id = dir.write("noid.csv", header + "1,,1,1\n");
    CHECK(error_of(no_id, usage_options()) == no_id + ":2:2: column \"pod.id\": empty id");

    const std::string missing = dir.path("missing.csv");
    CHECK(error_of(missing, usage_options()) ==
          missing + ": cannot open: No such file or directory");
    REQUIRE_THROWS_AS(read_trace({}, usage_options()), InputError);
}

TEST_CASE("read_trace reads records that cross its read blocks", "[trace]") {
    // Long enough to span several 1 MiB blocks, with quoted fields that get split between them.
    TempDir dir;
    std::string text = "\"timestamp\",\"pod.id\",\"cpu.usage.cores\",\"mem.working.set\"\n";
    const int rows = 80000;
    for (int i = 0; i < rows; ++i) {
        text += std::to_string(i) + ",\"execution \"\"" + std::to_string(i % 3) +
                "\"\" of a long name\"," + std::to_string(i % 7) + ".25,\"" + std::to_string(i) +
                "\"\n";
    }
    REQUIRE(text.size() > 3 * (1 << 20));
    const Trace trace = read_trace({dir.write("big.csv", text)}, usage_options());
    REQUIRE(trace.executions.size() == 3);
    REQUIRE(trace.rows() == static_cast<std::size_t>(rows));
    const Execution& e = trace.executions[1];
    CHECK(e.id == "execution \"1\" of a long name");
    bool all_right = true;
    for (Eigen::Index r = 0; r < e.values.rows(); ++r) {
        const int i = 3 * static_cast<int>(r) + 1;
        all_right = all_right && e.timestamps[r] == i && e.values(r, 0) == i % 7 + 0.25 &&
                    e.values(r, 1) == i && e.lines[r] == static_cast<std::size_t>(i + 2);
    }
    CHECK(all_right);
}

TEST_CASE("read_trace refuses impossible rows with file:line and a short quote", "[trace]") {
    TempDir dir;
    const std::string header = "timestamp,pod.id,cpu.usage.cores,mem.working.set\n";
    auto error_of = [&](const std::string& rows) {
        const std::string path = dir.write("bad.csv", header + "1,p,1,10\n" + rows);
        try {
            read_trace({path}, usage_options());
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(error_of("1,p,1,10\n"),
               Catch::Contains("bad.csv:3:1: a second sample at the same time"));
    CHECK_THAT(error_of("2,p,-1,10\n"),
               Catch::Contains("bad.csv:3:3") && Catch::Contains("negative"));
    CHECK_THAT(error_of("2,p,1,1e300\n"),
               Catch::Contains("bad.csv:3:4") && Catch::Contains("beyond any machine"));
    CHECK_THAT(error_of("1e300,p,1,10\n"),
               Catch::Contains("bad.csv:3:1") && Catch::Contains("not a unix time"));
    CHECK_THAT(error_of("2,p,nan,10\n"), Catch::Contains("bad.csv:3:3"));
    const std::string huge = error_of("2,p," + std::string(1 << 20, '7') + "x,10\n");
    CHECK_THAT(huge, Catch::Contains("bad.csv:3:3"));
    CHECK(huge.size() < 200);  // not the megabyte of the field
}
