// Source-channel to pack-channel allocation (channel_allocation.h). The order of pack channels follows the
// order of the textures and of their channels, so the same material always gets the same layout.
#include "material/channel_allocation.h"

#include <algorithm>

#include "core/hlg.h"

namespace nmc {
namespace {

const char* kComponentSuffix[] = {".r", ".g", ".b", ".a"};
const char* kNormalSuffix[] = {".x", ".y", ".z"};

// Pack channels one texture needs (for the limit message).
int cost_of(const TextureLayout& layout) {
    int n = 0;
    std::vector<int> seen;
    for (const auto& c : layout.channels)
        if (c.kind == ChannelSource::Kind::pack &&
            std::find(seen.begin(), seen.end(), c.pack_channel) == seen.end()) {
            seen.push_back(c.pack_channel);
            ++n;
        }
    return n;
}

Status too_many_channels(const std::vector<AllocationInput>& textures, int total) {
    std::string costs;
    std::vector<int> cost(textures.size());
    for (size_t t = 0; t < textures.size(); ++t) {
        cost[t] = cost_of(textures[t].layout);
        costs += (t ? ", " : "") + textures[t].layout.file_name + " " + std::to_string(cost[t]);
    }
    // Suggest dropping maps from the end of the order (least important semantics come last).
    std::string drop;
    int remaining = total;
    for (size_t t = textures.size(); t-- > 0 && remaining > kMaxPackChannels;) {
        if (cost[t] == 0) continue;
        remaining -= cost[t];
        drop += (drop.empty() ? "" : ", ") + textures[t].layout.file_name;
    }
    return Status(StatusCode::limit_exceeded,
                  "the material needs " + std::to_string(total) + " pack channels, the limit is " +
                      std::to_string(kMaxPackChannels) + " (pack channels per map: " + costs + "); drop " + drop +
                      ", or pack scalar maps into one file (ORM), or store normals as xy");
}

}  // namespace

Result<std::vector<PackChannel>> allocate_channels(std::vector<AllocationInput>& textures, bool gloss_to_roughness) {
    std::vector<PackChannel> pack;
    int total = 0;  // counted past the limit so the error can say how many are needed
    auto add = [&](const PackChannel& p) {
        ++total;
        if (static_cast<int>(pack.size()) < kMaxPackChannels) pack.push_back(p);
        return total - 1;
    };
    auto take_name = [&](std::string name, const TextureLayout& layout) {
        for (const auto& p : pack)
            if (p.name == name) return layout.name + "." + name;
        return name;
    };

    for (auto& input : textures) {
        TextureLayout& layout = input.layout;
        const size_t n = layout.channels.size();
        if (layout.normal_mode != NormalMode::none) {
            // spec 5.4: X and Y always in the pack (Y inverted for DirectX), Z rebuilt or packed.
            for (size_t i = 0; i < 3; ++i) {
                ChannelSource& c = layout.channels[i];
                if (i == 2 && layout.normal_mode == NormalMode::xy) {
                    c.kind = ChannelSource::Kind::normal_z;
                    continue;
                }
                PackChannel p;
                p.name = take_name(std::string("normal") + kNormalSuffix[i], layout);
                p.semantic = Semantic::normal;
                p.loss_weight = input.loss_weights[i];
                c.kind = ChannelSource::Kind::pack;
                c.pack_channel = add(p);
                c.invert = i == 1 && layout.normal_convention == NormalConvention::directx;
            }
            continue;
        }
        // An HDR map (float values beyond [0, 1], none negative) is stored HLG-encoded relative to its peak
        // (spec 8.9), so the pack's error scales with the value and black stays black. A gloss channel stored as
        // roughness (an invert) keeps it linear: spec 5.4 allows no invert in an HLG texture.
        float min = input.stats.front().min, max = input.stats.front().max;
        bool inverts = false;
        for (size_t i = 0; i < n; ++i) {
            min = std::min(min, input.stats[i].min);
            max = std::max(max, input.stats[i].max);
            inverts = inverts || (gloss_to_roughness && layout.channels[i].semantic == Semantic::glossiness);
        }
        const bool hdr = !inverts && is_hdr_map(layout.sample_type, min, max);
        if (hdr) {
            layout.value_encoding = ValueEncoding::hlg;
            layout.peak = max;
        }
        // How many distinct, non-constant channels share each semantic: they get .r/.g/.b suffixes.
        auto distinct_with = [&](Semantic s) {
            int count = 0;
            for (size_t i = 0; i < n; ++i)
                if (layout.channels[i].semantic == s && !input.stats[i].constant && input.stats[i].same_as < 0)
                    ++count;
            return count;
        };
        for (size_t i = 0; i < n; ++i) {
            ChannelSource& c = layout.channels[i];
            const ChannelStats& stats = input.stats[i];
            if (stats.constant) {
                c.kind = ChannelSource::Kind::constant;
                c.constant_value = *stats.constant;
                continue;
            }
            if (stats.same_as >= 0) {
                const ChannelSource& first = layout.channels[static_cast<size_t>(stats.same_as)];
                c.kind = first.kind;
                c.pack_channel = first.pack_channel;
                c.invert = first.invert;
                c.constant_value = first.constant_value;
                // The weights add up: the user's metric (and NTC's psnr8_mip0) counts every source channel once,
                // so grey saved as RGB weighs three times a one-channel map in the loss as in the metric.
                if (c.pack_channel >= 0 && c.pack_channel < static_cast<int>(pack.size()))
                    pack[static_cast<size_t>(c.pack_channel)].loss_weight += input.loss_weights[i];
                continue;
            }
            const bool as_roughness = c.semantic == Semantic::glossiness && gloss_to_roughness;
            PackChannel p;
            p.semantic = as_roughness ? Semantic::roughness : c.semantic;
            p.name = to_string(p.semantic);
            // Normals stored as plain channels (normal_mode none, material.h NormalModeChoice::stored) keep .x/.y/.z.
            if (distinct_with(c.semantic) > 1)
                p.name += c.semantic == Semantic::normal && i < 3 ? kNormalSuffix[i] : kComponentSuffix[i];
            p.name = take_name(p.name, layout);
            p.color_space = is_color(c.semantic) ? layout.color_space : ColorSpace::linear;
            p.loss_weight = input.loss_weights[i];
            if (is_float(layout.sample_type) && !hdr) {  // float data keeps its own range, widened to include [0, 1]
                p.lo = std::min(0.0f, stats.min);
                p.hi = std::max(1.0f, stats.max);
            }
            c.kind = ChannelSource::Kind::pack;
            c.invert = as_roughness;
            c.pack_channel = add(p);
        }
    }
    if (total > kMaxPackChannels) return too_many_channels(textures, total);
    if (pack.empty())
        return Status(StatusCode::invalid_argument,
                      "every channel of the material is constant: there is nothing to compress");
    return pack;
}

}  // namespace nmc
