// Whole-file reads with a limit and atomic writes (no temporary left behind, refuse-overwrite honoured).
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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

TEST(FileIo, UncommittedOutputPathRemovesItsTemporary) {
    TempFolder dir;
    {
        AtomicOutputPath out(dir.path() + "/image.png");
        std::FILE* f = std::fopen(out.temp_path().c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fclose(f);
        EXPECT_EQ(dir.entries().size(), 1u);
    }
    EXPECT_TRUE(dir.entries().empty());
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
