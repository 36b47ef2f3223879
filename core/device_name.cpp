// Parsing of device names (core/device_name.h).
#include "core/device_name.h"

namespace nmc {

std::optional<DeviceName> parse_device_name(const std::string& name) {
    if (name == "cpu") return DeviceName{DeviceKind::cpu, -1};
    for (const auto& [prefix, kind] : {std::pair<std::string, DeviceKind>{"cuda", DeviceKind::cuda},
                                       std::pair<std::string, DeviceKind>{"vulkan", DeviceKind::vulkan}}) {
        if (name == prefix) return DeviceName{kind, -1};
        const std::string indexed = prefix + ":";
        if (name.rfind(indexed, 0) == 0 && name.size() > indexed.size() && name.size() <= indexed.size() + 3 &&
            name.find_first_not_of("0123456789", indexed.size()) == std::string::npos)
            return DeviceName{kind, std::stoi(name.substr(indexed.size()))};
    }
    return std::nullopt;
}

std::optional<int> cuda_index_of_device(const std::string& name) {
    const std::optional<DeviceName> device = parse_device_name(name);
    if (!device || device->kind == DeviceKind::vulkan) return std::nullopt;
    if (device->kind == DeviceKind::cpu) return -1;
    return device->index < 0 ? 0 : device->index;
}

}  // namespace nmc
