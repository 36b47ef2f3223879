// Test support for the batch tests: see material_tree.h.
#include "tests/batch/material_tree.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/material/test_support.h"

namespace nmc::test {

void write_material(const std::string& folder, const std::string& name, int variant) {
    std::filesystem::create_directories(folder);
    write_png(folder + "/" + name + "_albedo.png", make_image(16, 16, 3, [&](int x, int y, int c) {
                  return static_cast<float>((x * 13 + y * 7 + c * 29 + variant * 41) % 256) / 255.0f;
              }));
    write_png(folder + "/" + name + "_roughness.png", make_image(16, 16, 1, [&](int x, int y, int) {
                  return static_cast<float>((x * 5 + y * 17 + variant * 3) % 256) / 255.0f;
              }));
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace nmc::test
