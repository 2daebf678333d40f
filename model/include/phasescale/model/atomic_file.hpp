#pragma once
// A file written in full or not at all. The content goes to an unnamed file (O_TMPFILE) in the
// target's folder, which the kernel frees if the process dies first, and is linked into place by
// commit(); a file system without O_TMPFILE gets a named temporary file instead, removed on any
// error. An existing special file at the path (a device, a FIFO) is written through, never
// replaced by a regular file; a folder is refused.

#include <string>

namespace phasescale::model {

class AtomicFile {
public:
    // Throws InputError naming the path when it cannot be written.
    explicit AtomicFile(std::string path);
    ~AtomicFile();  // without commit(): nothing at the path changes (but a special file's bytes)
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Where to write; owned by this object (close it only through commit() or the destructor).
    int fd() const { return fd_; }
    // Writes all of `data` (retrying short writes); throws InputError.
    void write(const char* data, std::size_t size);
    // Flushes to disk and puts the file in place; throws InputError.
    void commit();

private:
    std::string path_;
    std::string named_temporary_;  // the fallback's name, if it is used
    int fd_ = -1;
    bool through_ = false;  // writing through to a special file
};

}  // namespace phasescale::model
