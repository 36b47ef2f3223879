// The value rules of spec 5 and the limits of spec 9 on a Pack's metadata, shared by reader and writer so
// that the writer never produces a pack the reader rejects.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "format/metadata.h"

namespace nmc {
namespace {

Status rule_error(const std::string& path, const std::string& what) {
    return Status(StatusCode::corrupt, "section 'META': '" + path + "': " + what);
}

std::string index_path(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// An integer in lo..hi: below is corrupt, above is a spec-9 limit.
Status check_int(const std::string& path, int64_t value, int64_t lo, int64_t hi) {
    if (value >= lo && value <= hi) return Status::success();
    const std::string what =
        "expected " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(value);
    if (value > hi) return Status(StatusCode::limit_exceeded, "section 'META': '" + path + "': " + what);
    return rule_error(path, what);
}

Status check_count(const std::string& path, size_t count, int lo, int hi) {
    return check_int(path + " (count)", static_cast<int64_t>(count), lo, hi);
}

Status check_range(const std::string& path, float lo, float hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
        return rule_error(path, "expected finite [lo, hi] with lo < hi, got [" + std::to_string(lo) + ", " +
                                    std::to_string(hi) + "]");
    return Status::success();
}

Status check_name(const std::string& path, const std::string& name) {
    if (name.empty() || name.size() > kMaxNameBytes)
        return rule_error(
            path, "expected 1.." + std::to_string(kMaxNameBytes) + " bytes, got " + std::to_string(name.size()));
    return Status::success();
}

// The length of the UTF-8 sequence at the start of p[0..size), or 0 when none starts there.
size_t utf8_sequence_length(const uint8_t* p, size_t size) {
    const uint8_t lead = p[0];
    if (lead < 0x80) return 1;
    size_t length = 0;
    uint8_t lo = 0x80;  // the range of the second byte, narrowed against overlong forms, surrogates and > U+10FFFF
    uint8_t hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (size < length || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < length; ++i)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return length;
}

bool is_control(char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 || b == 0x7F;
}

bool is_valid_utf8(const std::string& text) {
    return valid_utf8_prefix(reinterpret_cast<const uint8_t*>(text.data()), text.size()) == text.size();
}

// spec 5.2: a name shown to people: valid UTF-8 without control characters.
Status check_text(const std::string& path, const std::string& text) {
    if (!is_valid_utf8(text) || std::any_of(text.begin(), text.end(), is_control))
        return rule_error(path, "expected UTF-8 text without control characters, got '" + printable(text) + "'");
    return Status::success();
}

// spec 5.4
Status check_file_name(const std::string& path, const std::string& name) {
    if (const char* problem = file_name_problem(name))
        return rule_error(path, "expected a plain file name, got '" + printable(name) + "' (" + problem + ")");
    return Status::success();
}

char ascii_upper(char c) {
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// spec 5.4: CON, PRN, AUX, NUL, COM0..9, LPT0..9 and COM/LPT with a superscript 1, 2 or 3, in any case, alone or
// before an extension (Windows ignores spaces before it).
bool is_windows_device_name(const std::string& name) {
    std::string stem = name.substr(0, name.find('.'));
    while (!stem.empty() && stem.back() == ' ') stem.pop_back();
    std::transform(stem.begin(), stem.end(), stem.begin(), ascii_upper);
    if (stem == "CON" || stem == "PRN" || stem == "AUX" || stem == "NUL") return true;
    if (stem.size() < 4 || (stem.compare(0, 3, "COM") != 0 && stem.compare(0, 3, "LPT") != 0)) return false;
    const std::string number = stem.substr(3);
    return (number.size() == 1 && number[0] >= '0' && number[0] <= '9') || number == "\xC2\xB9" ||
           number == "\xC2\xB2" || number == "\xC2\xB3";
}

// floor(log2(n)) + 1 for n >= 1: the longest mip chain of a side of n texels.
int full_mip_count(int n) {
    int count = 1;
    while (n > 1) {
        n >>= 1;
        ++count;
    }
    return count;
}

// spec 5.2
Status check_material(const MaterialInfo& m) {
    NMC_RETURN_IF_ERROR(check_name("material.name", m.name));
    NMC_RETURN_IF_ERROR(check_text("material.name", m.name));
    NMC_RETURN_IF_ERROR(check_int("material.width", m.width, 1, kMaxDimension));
    NMC_RETURN_IF_ERROR(check_int("material.height", m.height, 1, kMaxDimension));
    const int max_mips = std::min(kMaxMipCount, full_mip_count(std::max(m.width, m.height)));
    return check_int("material.mip_count", m.mip_count, 1, max_mips);
}

// spec 5.4: one texture's channel sources and normal-map shape.
Status check_texture(const TextureLayout& t, const std::string& path, int channel_count) {
    NMC_RETURN_IF_ERROR(check_name(path + ".name", t.name));
    NMC_RETURN_IF_ERROR(check_file_name(path + ".name", t.name));
    NMC_RETURN_IF_ERROR(check_name(path + ".file_name", t.file_name));
    NMC_RETURN_IF_ERROR(check_file_name(path + ".file_name", t.file_name));
    NMC_RETURN_IF_ERROR(check_count(path + ".channels", t.channels.size(), 1, kMaxTextureChannels));
    for (size_t c = 0; c < t.channels.size(); ++c) {
        const ChannelSource& s = t.channels[c];
        const std::string cpath = index_path(path + ".channels", c);
        if (s.kind == ChannelSource::Kind::pack)
            NMC_RETURN_IF_ERROR(check_int(cpath + ".pack_channel", s.pack_channel, 0, channel_count - 1));
        if (s.kind == ChannelSource::Kind::constant && !std::isfinite(s.constant_value))
            return rule_error(cpath + ".value", "expected a finite number");
        const bool z_allowed = t.normal_mode == NormalMode::xy && c == 2;
        if (s.kind == ChannelSource::Kind::normal_z && !z_allowed)
            return rule_error(cpath + ".source",
                              "'normal_z' is allowed only as the third channel of an 'xy' normal map");
    }
    if (t.value_encoding == ValueEncoding::hlg) {
        if (!std::isfinite(t.peak) || !(t.peak > 0)) return rule_error(path + ".peak", "expected a finite number > 0");
        if (t.normal_mode != NormalMode::none) return rule_error(path + ".value_encoding", "'hlg' on a normal map");
        for (size_t c = 0; c < t.channels.size(); ++c)
            if (t.channels[c].kind == ChannelSource::Kind::pack && t.channels[c].invert)
                return rule_error(index_path(path + ".channels", c) + ".invert", "must be false in an 'hlg' texture");
    }
    if (t.normal_mode == NormalMode::none) return Status::success();
    const bool xy = t.normal_mode == NormalMode::xy;
    const std::string shape =
        xy ? "an 'xy' normal map has 3 channels: pack, pack, normal_z" : "an 'xyz' normal map has 3 pack channels";
    if (t.channels.size() != 3)
        return rule_error(path + ".channels", shape + ", got " + std::to_string(t.channels.size()));
    for (size_t c = 0; c < 3; ++c) {
        const ChannelSource::Kind expected = xy && c == 2 ? ChannelSource::Kind::normal_z : ChannelSource::Kind::pack;
        if (t.channels[c].kind != expected) return rule_error(index_path(path + ".channels", c) + ".source", shape);
    }
    return Status::success();
}

// spec 5.4: who uses which pack channel.
Status check_channel_use(const std::vector<TextureLayout>& textures, int channel_count) {
    std::vector<int> normal_owner(static_cast<size_t>(channel_count), -1);
    std::vector<int> users(static_cast<size_t>(channel_count), 0);
    for (size_t i = 0; i < textures.size(); ++i) {
        std::set<int> used;
        for (const ChannelSource& s : textures[i].channels)
            if (s.kind == ChannelSource::Kind::pack) used.insert(s.pack_channel);
        for (const int c : used) {
            ++users[static_cast<size_t>(c)];
            if (textures[i].normal_mode != NormalMode::none) normal_owner[static_cast<size_t>(c)] = static_cast<int>(i);
        }
    }
    for (int c = 0; c < channel_count; ++c) {
        const auto ci = static_cast<size_t>(c);
        if (users[ci] == 0)
            return rule_error(index_path("channels", ci),
                              "pack channel " + std::to_string(c) + " is used by no texture");
        if (normal_owner[ci] >= 0 && users[ci] > 1)
            return rule_error(
                index_path("textures", static_cast<size_t>(normal_owner[ci])),
                "pack channel " + std::to_string(c) + " belongs to a normal map and must be used by no other texture");
    }
    return Status::success();
}

// spec 5.4: a pack channel of an 'hlg' texture holds encoded values, in [0, 1], for that texture alone.
Status check_encoded_channels(const Pack& pack) {
    for (size_t i = 0; i < pack.textures.size(); ++i) {
        if (pack.textures[i].value_encoding == ValueEncoding::none) continue;
        for (const ChannelSource& s : pack.textures[i].channels) {
            if (s.kind != ChannelSource::Kind::pack) continue;
            const ChannelInfo& channel = pack.channels[static_cast<size_t>(s.pack_channel)];
            const std::string name = "pack channel " + std::to_string(s.pack_channel);
            if (channel.lo < 0 || channel.hi > 1)
                return rule_error(index_path("channels", static_cast<size_t>(s.pack_channel)) + ".range",
                                  name + " holds HLG-encoded values of " + index_path("textures", i) +
                                      ": its range must lie within [0, 1]");
            for (size_t j = 0; j < pack.textures.size(); ++j)
                for (const ChannelSource& other : pack.textures[j].channels)
                    if (j != i && other.kind == ChannelSource::Kind::pack && other.pack_channel == s.pack_channel)
                        return rule_error(index_path("textures", j),
                                          name + " holds HLG-encoded values of " + index_path("textures", i) +
                                              " and must be used by no other texture");
        }
    }
    return Status::success();
}

// spec 5.5
Status check_latents(const LatentGrids& g, const MaterialInfo& m, Arithmetic arithmetic) {
    NMC_RETURN_IF_ERROR(check_int("latents.feature_count", g.feature_count, 1, kMaxFeatures));
    NMC_RETURN_IF_ERROR(check_int("latents.grid_scale", g.grid_scale, 1, kMaxGridScale));
    NMC_RETURN_IF_ERROR(check_count("latents.levels", g.levels.size(), kMinLevels, kMaxLevels));
    for (size_t k = 0; k < g.levels.size(); ++k) {
        const LatentLevel& l = g.levels[k];
        const std::string path = index_path("latents.levels", k);
        const int level = static_cast<int>(k);
        const int w = latent_level_size(m.width, g.grid_scale, level);
        const int h = latent_level_size(m.height, g.grid_scale, level);
        if (l.width != w || l.height != h)
            return rule_error(path, "expected " + std::to_string(w) + " x " + std::to_string(h) +
                                        " latent texels, got " + std::to_string(l.width) + " x " +
                                        std::to_string(l.height));
        if (l.bits != 1 && l.bits != 2 && l.bits != 4 && l.bits != 8)
            return rule_error(path + ".bits", "expected 1, 2, 4 or 8, got " + std::to_string(l.bits));
        NMC_RETURN_IF_ERROR(check_range(path + ".range", l.lo, l.hi));
        if (arithmetic == Arithmetic::binary16 &&
            (std::fabs(l.lo) > kMaxBinary16LatentMagnitude || std::fabs(l.hi) > kMaxBinary16LatentMagnitude)) {
            return Status(StatusCode::limit_exceeded,
                          "section 'META': '" + path + ".range': [" + std::to_string(l.lo) + ", " +
                              std::to_string(l.hi) + "] outside [-16384, 16384], the limit of the binary16 arithmetic");
        }
    }
    return Status::success();
}

// spec 5.6
Status check_network(const Network& n, const std::vector<bool>& has_scale, int feature_count, int channel_count) {
    NMC_RETURN_IF_ERROR(check_count("network.layers", n.layers.size(), kMinLayers, kMaxLayers));
    for (size_t i = 0; i < n.layers.size(); ++i) {
        const Layer& l = n.layers[i];
        const std::string path = index_path("network.layers", i);
        NMC_RETURN_IF_ERROR(check_int(path + ".input_width", l.input_width, 1, kMaxLayerWidth));
        NMC_RETURN_IF_ERROR(check_int(path + ".output_width", l.output_width, 1, kMaxLayerWidth));
        if (i == 0 && l.input_width < network_input_count(feature_count))
            return rule_error(path + ".input_width", "expected at least 2 * feature_count + 13 = " +
                                                         std::to_string(network_input_count(feature_count)) + ", got " +
                                                         std::to_string(l.input_width));
        if (i > 0 && l.input_width != n.layers[i - 1].output_width)
            return rule_error(path + ".input_width", "expected the previous layer's output_width " +
                                                         std::to_string(n.layers[i - 1].output_width) + ", got " +
                                                         std::to_string(l.input_width));
        if (i + 1 == n.layers.size() && l.output_width != channel_count)
            return rule_error(path + ".output_width", "expected the pack channel count " +
                                                          std::to_string(channel_count) + ", got " +
                                                          std::to_string(l.output_width));
        if (l.weight_type == WeightType::int8 && !has_scale[i])
            return rule_error(path + ".has_scale", "an 'int8' layer must have scales");
    }
    return Status::success();
}

bool all_finite(const std::vector<double>& values) {
    for (const double v : values)
        if (!std::isfinite(v)) return false;
    return true;
}

// spec 5.7, 5.8: informational values only need to be representable in JSON (finite numbers).
Status check_info(const Pack& pack) {
    const EncoderInfo& e = pack.encoder;
    if (!std::isfinite(e.target_bpp) || !std::isfinite(e.training_seconds) || !std::isfinite(e.latent_learning_rate) ||
        !std::isfinite(e.network_learning_rate) || !std::isfinite(e.latent_rounding_at) ||
        !std::isfinite(e.weight_rounding_at))
        return rule_error("encoder", "numbers must be finite");
    const QualityReport& q = pack.quality;
    if (!q.present) return Status::success();
    bool finite = std::isfinite(q.psnr_db) && std::isfinite(q.bits_per_texel) && std::isfinite(q.psnr8_mip0_db) &&
                  all_finite(q.channels) && all_finite(q.mips);
    std::set<std::string> names;
    for (const TextureQuality& t : q.textures) {
        finite = finite && std::isfinite(t.psnr_db) && std::isfinite(t.mean_angle_deg) &&
                 std::isfinite(t.psnr8_mip0_db) && all_finite(t.channels) && all_finite(t.mips);
        if (!names.insert(t.texture).second)
            return rule_error("quality.textures", "'" + printable(t.texture) + "' appears twice");
    }
    if (!finite) return rule_error("quality", "numbers must be finite (write 99 for a lossless channel)");
    return Status::success();
}

}  // namespace

size_t valid_utf8_prefix(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
        const size_t length = utf8_sequence_length(data + i, size - i);
        if (length == 0) return i;
        i += length;
    }
    return size;
}

std::string printable(const std::string& text) {
    static const char kHex[] = "0123456789ABCDEF";
    const auto* p = reinterpret_cast<const uint8_t*>(text.data());
    std::string out;
    for (size_t i = 0; i < text.size();) {
        const size_t length = utf8_sequence_length(p + i, text.size() - i);
        if (length == 0 || is_control(text[i])) {
            out += "\\x";
            out += kHex[p[i] >> 4];
            out += kHex[p[i] & 15];
            ++i;
        } else if (text[i] == '\\') {
            out += "\\\\";
            ++i;
        } else {
            out.append(text, i, length);
            i += length;
        }
    }
    return out;
}

const char* file_name_problem(const std::string& name) {
    if (name.empty()) return "it is empty";
    if (!is_valid_utf8(name)) return "it is not valid UTF-8";
    if (std::any_of(name.begin(), name.end(), is_control)) return "it contains a control character";
    if (name.find_first_of("/\\") != std::string::npos) return "it contains '/' or '\\'";
    if (name == "." || name == "..") return "it is '.' or '..'";
    if (name.find("..") != std::string::npos) return "it contains '..'";
    if (name.back() == ' ' || name.back() == '.') return "it ends in a space or a dot";
    if (is_windows_device_name(name)) return "it is a device name reserved on Windows";
    return nullptr;
}

Status check_metadata(const Pack& pack, const std::vector<bool>& has_scale) {
    NMC_RETURN_IF_ERROR(check_material(pack.material));
    NMC_RETURN_IF_ERROR(check_count("channels", pack.channels.size(), 1, kMaxChannels));
    for (size_t c = 0; c < pack.channels.size(); ++c)
        NMC_RETURN_IF_ERROR(
            check_range(index_path("channels", c) + ".range", pack.channels[c].lo, pack.channels[c].hi));
    const int channel_count = static_cast<int>(pack.channels.size());
    NMC_RETURN_IF_ERROR(check_count("textures", pack.textures.size(), 1, kMaxTextures));
    std::set<std::string> names;
    std::map<std::string, size_t> file_names;  // in lower case: decoded files may land on a case-insensitive system
    for (size_t i = 0; i < pack.textures.size(); ++i) {
        const TextureLayout& t = pack.textures[i];
        const std::string path = index_path("textures", i);
        NMC_RETURN_IF_ERROR(check_texture(t, path, channel_count));
        if (!names.insert(t.name).second)
            return rule_error(path + ".name", "'" + printable(t.name) + "' is not unique");
        std::string folded = t.file_name;
        std::transform(folded.begin(), folded.end(), folded.begin(), ascii_lower);
        const auto [other, inserted] = file_names.emplace(folded, i);
        if (!inserted)
            return rule_error(path + ".file_name", "'" + printable(t.file_name) + "' is also the file name of " +
                                                       index_path("textures", other->second) +
                                                       " (file names must differ in more than ASCII case)");
    }
    NMC_RETURN_IF_ERROR(check_channel_use(pack.textures, channel_count));
    NMC_RETURN_IF_ERROR(check_encoded_channels(pack));
    NMC_RETURN_IF_ERROR(check_latents(pack.latents, pack.material, pack.network.arithmetic));
    NMC_RETURN_IF_ERROR(check_network(pack.network, has_scale, pack.latents.feature_count, channel_count));
    return check_info(pack);
}

}  // namespace nmc
