#include <catch2/catch.hpp>

#include <phasescale/model/atomic_file.hpp>
#include <phasescale/model/error.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <fstream>
#include <sstream>

#include "fixtures.hpp"

using phasescale::model::AtomicFile;
using phasescale::model::InputError;
using phasescale::testing::TempDir;

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("AtomicFile: nothing at the path before commit, the whole content after",
          "[unit][output]") {
    TempDir dir;
    const std::string path = dir / "out.csv";
    {
        AtomicFile f(path);
        f.write("abc", 3);
        CHECK(dir.files() == 0);  // the unnamed file has no name yet
    }
    CHECK(dir.files() == 0);  // not committed: nothing left
    AtomicFile f(path);
    f.write("abc", 3);
    f.commit();
    CHECK(read(path) == "abc");
    AtomicFile g(path);  // replacing an existing file
    g.write("de", 2);
    CHECK(read(path) == "abc");
    g.commit();
    CHECK(read(path) == "de");
    CHECK(dir.files() == 1);
}

TEST_CASE("AtomicFile: a process killed while writing leaves nothing behind", "[unit][output]") {
    TempDir dir;
    const std::string path = dir / "big.csv";
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        AtomicFile f(path);
        const std::string chunk(1 << 16, 'x');
        for (int i = 0; i < 256; ++i) f.write(chunk.data(), chunk.size());  // 16 MiB
        for (;;) ::pause();                                                 // until killed
    }
    ::usleep(200'000);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(dir.files() == 0);
}

TEST_CASE("AtomicFile: special files are written through, folders refused", "[unit][output]") {
    TempDir dir;
    CHECK_THROWS_WITH(AtomicFile(dir.path().string()), Catch::Contains("is a folder"));
    CHECK_THROWS_WITH(AtomicFile(dir / "missing/out.csv"),
                      Catch::Contains("missing/out.csv") && Catch::Contains("cannot create"));
    {
        AtomicFile null("/dev/null");
        null.write("abc", 3);
        null.commit();
    }
    struct stat st {};
    REQUIRE(::stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));  // still the device
    AtomicFile full("/dev/full");
    CHECK_THROWS_AS(full.write("abc", 3), InputError);  // ENOSPC, reported
    REQUIRE(::stat("/dev/full", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
}
