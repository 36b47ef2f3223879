// Parsing of the "cpu" / "cuda" / "cuda:N" device names (core/device_name.h).
#include "core/device_name.h"

namespace nmc {

std::optional<int> cuda_index_of_device(const std::string& name) {
    if (name == "cpu") return -1;
    if (name == "cuda") return 0;
    const std::string prefix = "cuda:";
    if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() || name.size() > prefix.size() + 3 ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
        return std::nullopt;
    return std::stoi(name.substr(prefix.size()));
}

}  // namespace nmc
