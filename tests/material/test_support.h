// Helpers for material tests: a temporary folder removed at the end of the test, small synthetic images, and a
// loaded material's texture by file name.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "material/material.h"

namespace nmc::test {

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "nmc-material-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data()) ? pattern : "";
        EXPECT_FALSE(path_.empty());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    // Names of the entries in the folder, sorted.
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    std::string path_;
};

// An image whose value at (x, y, c) is f(x, y, c).
inline Image make_image(int w, int h, int channels, const std::function<float(int, int, int)>& f,
                        SampleType type = SampleType::uint8) {
    Image image(w, h, channels, type);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < channels; ++c) image.at(x, y, c) = f(x, y, c);
    return image;
}

// A varying 8-bit value exactly representable as code / 255.
inline float code(int x, int y, int c) { return static_cast<float>((x * 37 + y * 11 + c * 53) % 256) / 255.0f; }

inline void write_png(const std::string& path, const Image& image) {
    ASSERT_TRUE(write_image(path, image, "png", true).ok()) << path;
}

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The texture of `material` loaded from `file` (a test failure, and the first texture, when there is none).
inline const TextureLayout& texture_of(const Material& material, const std::string& file) {
    for (const TextureLayout& t : material.textures)
        if (t.file_name == file) return t;
    ADD_FAILURE() << "no texture " << file;
    return material.textures.front();
}

}  // namespace nmc::test
