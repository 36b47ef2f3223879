// Whole-file reads with a limit and atomic writes (no temporary left behind, also when a write fails;
// refuse-overwrite honoured).
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/file_io.h"

namespace nmc {
namespace {

// A fresh, empty folder for one test, removed (with its files) afterwards.
class TempFolder {
public:
    TempFolder() {
        std::string pattern = ::testing::TempDir() + "/nmc_file_io_XXXXXX";
        path_ = ::mkdtemp(pattern.data()) ? pattern : "";
    }
    ~TempFolder() {
        for (const std::string& name : entries()) std::remove((path_ + "/" + name).c_str());
        ::rmdir(path_.c_str());
    }
    const std::string& path() const { return path_; }
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        if (DIR* d = ::opendir(path_.c_str())) {
            while (const dirent* e = ::readdir(d))
                if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
            ::closedir(d);
        }
        return names;
    }

private:
    std::string path_;
};

TEST(FileIo, AtomicWriteLeavesOnlyTheDestination) {
    TempFolder dir;
    ASSERT_FALSE(dir.path().empty());
    const std::string path = dir.path() + "/out.bin";
    const std::vector<uint8_t> data = {1, 2, 3, 4, 5};
    ASSERT_TRUE(write_file_atomically(path, data.data(), data.size()).ok());
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.bin"});
    Result<std::vector<uint8_t>> back = read_file(path, 100);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, data);
}

TEST(FileIo, RefuseOverwriteKeepsTheOldFile) {
    TempFolder dir;
    const std::string path = dir.path() + "/out.bin";
    const uint8_t first[] = {7};
    const uint8_t second[] = {8, 9};
    ASSERT_TRUE(write_file_atomically(path, first, 1).ok());
    const Status refused = write_file_atomically(path, second, 2, Overwrite::refuse);
    EXPECT_EQ(refused.code(), StatusCode::io_error);
    EXPECT_NE(refused.message().find("exists"), std::string::npos);
    EXPECT_EQ(read_file(path, 100).value(), std::vector<uint8_t>{7});
    EXPECT_EQ(dir.entries().size(), 1u);
    ASSERT_TRUE(write_file_atomically(path, second, 2, Overwrite::allow).ok());
    EXPECT_EQ(read_file(path, 100).value(), (std::vector<uint8_t>{8, 9}));
}

// A full disk, without one: in a child process whose file size limit (RLIMIT_FSIZE) is 4 KiB, with SIGXFSZ
// ignored so that a write past it fails with EFBIG, 64 KiB are written over an existing file. The write must fail
// naming the file and the reason, leave no temporary file, and leave the old file as it was. The child reports
// through its exit code: 0 as expected, 2 the write succeeded, 3 another status or message.
TEST(FileIo, FailedWriteLeavesNoTemporaryAndKeepsTheOldFile) {
    TempFolder dir;
    const std::string path = dir.path() + "/out.bin";
    const std::vector<uint8_t> old = {1, 2, 3};
    ASSERT_TRUE(write_file_atomically(path, old.data(), old.size()).ok());
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const rlimit limit{4096, 4096};
        std::signal(SIGXFSZ, SIG_IGN);
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(4);
        const std::vector<uint8_t> big(65536, 0x5A);
        const Status s = write_file_atomically(path, big.data(), big.size());
        if (s.ok()) ::_exit(2);
        const bool expected = s.code() == StatusCode::io_error &&
                              s.message().rfind(path + ": write failed: ", 0) == 0 &&
                              s.message().find(std::strerror(EFBIG)) != std::string::npos;
        ::_exit(expected ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.bin"});
    EXPECT_EQ(read_file(path, 100).value(), old);
}

TEST(FileIo, ReadFileLimitAndMissingFile) {
    TempFolder dir;
    const std::string path = dir.path() + "/ten.bin";
    const std::vector<uint8_t> data(10, 0xAA);
    ASSERT_TRUE(write_file_atomically(path, data.data(), data.size()).ok());
    EXPECT_TRUE(read_file(path, 10).ok());
    Result<std::vector<uint8_t>> over = read_file(path, 9);
    EXPECT_EQ(over.status().code(), StatusCode::limit_exceeded);
    EXPECT_EQ(read_file(dir.path() + "/missing.bin", 100).status().code(), StatusCode::io_error);
    EXPECT_EQ(read_file(dir.path(), 100).status().code(), StatusCode::io_error);  // a folder is not a file
}

}  // namespace
}  // namespace nmc
