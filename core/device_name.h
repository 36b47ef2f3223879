// The device names every command and library takes: "cpu", "cuda" (device 0) or "cuda:N" (N of 1 to 3 digits).
#pragma once

#include <optional>
#include <string>

namespace nmc {

// The CUDA device index a name selects: -1 for "cpu", 0 for "cuda", N for "cuda:N"; nullopt for anything else.
std::optional<int> cuda_index_of_device(const std::string& name);

}  // namespace nmc
