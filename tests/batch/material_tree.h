// Test support for the batch tests: the small materials their trees are made of.
#pragma once

#include <string>

namespace nmc::test {

// A 16x16 two-map material (albedo + roughness) in `folder`, its files named `name`_albedo.png and
// `name`_roughness.png, whose pixels depend on `variant`.
void write_material(const std::string& folder, const std::string& name, int variant);

// A file's whole content ("" when it cannot be read).
std::string slurp(const std::string& path);

}  // namespace nmc::test
