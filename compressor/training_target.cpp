// TrainingTarget checks and the conversion from a loaded Material.
#include "compressor/training_target.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "format/limits.h"

namespace nmc {

Status check_training_target(const TrainingTarget& t) {
    const auto fail = [](const std::string& m) { return Status(StatusCode::invalid_argument, m); };
    if (t.width < 1 || t.width > kMaxDimension || t.height < 1 || t.height > kMaxDimension)
        return fail("material size must be 1.." + std::to_string(kMaxDimension) + " per side, got " +
                    std::to_string(t.width) + "x" + std::to_string(t.height));
    int max_mips = 1;
    while ((std::max(t.width, t.height) >> max_mips) > 0) ++max_mips;
    if (t.mip_count < 1 || t.mip_count > max_mips)
        return fail("mip count must be 1.." + std::to_string(max_mips) + ", got " + std::to_string(t.mip_count));
    if (t.channels.empty() || t.channels.size() > static_cast<size_t>(kMaxChannels))
        return fail("a material needs 1.." + std::to_string(kMaxChannels) + " pack channels, got " +
                    std::to_string(t.channels.size()));
    float weight_sum = 0;
    for (const auto& c : t.channels) {
        if (!std::isfinite(c.lo) || !std::isfinite(c.hi) || !(c.lo < c.hi))
            return fail("channel '" + c.name + "': range must be finite with lo < hi");
        if (!(c.loss_weight >= 0) || !std::isfinite(c.loss_weight))
            return fail("channel '" + c.name + "': loss weight must be finite and >= 0");
        weight_sum += c.loss_weight;
    }
    if (!(weight_sum > 0)) return fail("at least one channel needs a positive loss weight");
    if (t.textures.empty() || t.textures.size() > 16)
        return fail("a material needs 1..16 textures, got " + std::to_string(t.textures.size()));
    if (t.planes.size() != static_cast<size_t>(t.mip_count))
        return fail("expected " + std::to_string(t.mip_count) + " mips of planes, got " +
                    std::to_string(t.planes.size()));
    for (int m = 0; m < t.mip_count; ++m) {
        const size_t texels = static_cast<size_t>(std::max(1, t.width >> m)) * static_cast<size_t>(std::max(1, t.height >> m));
        if (t.planes[m].size() != t.channels.size())
            return fail("mip " + std::to_string(m) + ": expected " + std::to_string(t.channels.size()) +
                        " channel planes, got " + std::to_string(t.planes[m].size()));
        for (size_t c = 0; c < t.channels.size(); ++c) {
            if (t.planes[m][c].size() != texels)
                return fail("mip " + std::to_string(m) + " channel " + std::to_string(c) + ": expected " +
                            std::to_string(texels) + " values, got " + std::to_string(t.planes[m][c].size()));
            for (float v : t.planes[m][c])
                if (!std::isfinite(v))
                    return fail("mip " + std::to_string(m) + " channel '" + t.channels[c].name +
                                "': non-finite value");
        }
    }
    return Status::success();
}

TrainingTarget training_target_from_material(Material&& material) {
    TrainingTarget target;
    target.name = std::move(material.name);
    target.source_folder = std::move(material.source_folder);
    target.width = material.width;
    target.height = material.height;
    target.mip_count = material.mip_count;
    target.address_mode = AddressMode::wrap;
    for (const auto& c : material.channels) target.channels.push_back({c.name, c.lo, c.hi, c.loss_weight});
    target.textures = std::move(material.textures);
    target.source_paths = std::move(material.source_paths);
    target.planes = std::move(material.mips);
    return target;
}

}  // namespace nmc
