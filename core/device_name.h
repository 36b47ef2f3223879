// The device names commands and libraries take: "cpu", "cuda" / "cuda:N" and "vulkan" / "vulkan:N" (N of 1 to 3
// digits).
#pragma once

#include <optional>
#include <string>

namespace nmc {

enum class DeviceKind { cpu, cuda, vulkan };

struct DeviceName {
    DeviceKind kind = DeviceKind::cpu;
    int index = -1;  // N of "cuda:N" / "vulkan:N"; -1 where no index was given ("cpu", "cuda", "vulkan")
};

// The device a name selects; nullopt for anything but the five forms above.
std::optional<DeviceName> parse_device_name(const std::string& name);

// For the commands that take only the CPU or CUDA (compress, batch): -1 for "cpu", 0 for "cuda", N for "cuda:N";
// nullopt for anything else, "vulkan" included.
std::optional<int> cuda_index_of_device(const std::string& name);

}  // namespace nmc
