// POSIX implementation of whole-file reads and atomic writes.
#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nmc {
namespace {

Status errno_status(const std::string& path, const char* what) {
    return Status(StatusCode::io_error, path + ": " + what + ": " + std::strerror(errno));
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::string make_temp_name(const std::string& destination) {
    static std::atomic<unsigned> counter{0};
    return destination + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// The temporary file beside a destination: removed on destruction unless commit() renamed it into place.
class AtomicOutputPath {
public:
    explicit AtomicOutputPath(std::string destination)
        : destination_(std::move(destination)), temp_path_(make_temp_name(destination_)) {}
    ~AtomicOutputPath() {
        if (!committed_) ::unlink(temp_path_.c_str());
    }
    AtomicOutputPath(const AtomicOutputPath&) = delete;
    AtomicOutputPath& operator=(const AtomicOutputPath&) = delete;

    const std::string& temp_path() const { return temp_path_; }

    // Renames the temporary file over the destination (fails if overwrite is refused and it exists).
    Status commit(Overwrite overwrite) {
        if (overwrite == Overwrite::refuse && exists(destination_))
            return Status(StatusCode::io_error, destination_ + ": exists (use --force to overwrite)");
        if (::rename(temp_path_.c_str(), destination_.c_str()) != 0)
            return errno_status(destination_, "cannot rename temporary file into place");
        committed_ = true;
        return Status::success();
    }

private:
    std::string destination_;
    std::string temp_path_;
    bool committed_ = false;
};

}  // namespace

Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(path, "cannot open");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        Status s = errno_status(path, "cannot stat");
        ::close(fd);
        return s;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status(StatusCode::io_error, path + ": not a regular file");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_bytes) {
        ::close(fd);
        return Status(StatusCode::limit_exceeded,
                      path + ": file is " + std::to_string(size) + " bytes, limit " + std::to_string(max_bytes));
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            Status s = errno_status(path, "read failed");
            ::close(fd);
            return s;
        }
        if (n == 0) break;
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    bytes.resize(done);  // a file that shrank while being read is read as it now is
    return bytes;
}

Status write_file_atomically(const std::string& path, const void* data, size_t size, Overwrite overwrite) {
    if (overwrite == Overwrite::refuse && exists(path))
        return Status(StatusCode::io_error, path + ": exists (use --force to overwrite)");
    AtomicOutputPath out(path);
    const int fd = ::open(out.temp_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    // Messages name the destination: the temporary file is gone by the time anyone reads them.
    if (fd < 0) {
        const int error = errno;
        return Status(StatusCode::io_error,
                      path + ": cannot create temporary file " + out.temp_path() + ": " + std::strerror(error));
    }
    const auto* p = static_cast<const uint8_t*>(data);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(fd, p + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            Status s = errno_status(path, "write failed");
            ::close(fd);
            return s;
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) {
        Status s = errno_status(path, "fsync failed");
        ::close(fd);
        return s;
    }
    if (::close(fd) != 0) return errno_status(path, "close failed");
    return out.commit(overwrite);
}

Status make_directories(const std::string& dir) {
    std::string partial;
    for (size_t i = 0; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') {
            if (!partial.empty() && !exists(partial) && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
                return errno_status(partial, "cannot create folder");
        }
        if (i < dir.size()) partial += dir[i];
    }
    return Status::success();
}

Status prepare_output_file(const std::string& path, Overwrite overwrite) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return Status(StatusCode::io_error, path + ": is a folder; the output must be a file name");
        if (overwrite == Overwrite::refuse)
            return Status(StatusCode::io_error, path + ": exists (use --force to overwrite)");
    }
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0)
        if (Status made = make_directories(path.substr(0, slash)); !made.ok())
            return Status(StatusCode::io_error, path + ": " + made.message());
    // Permissions, a read-only file system or a parent that is a file show only when a file is created there.
    const std::string probe = make_temp_name(path);
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errno_status(path, "cannot create a file in its folder");
    ::close(fd);
    ::unlink(probe.c_str());
    return Status::success();
}

}  // namespace nmc
