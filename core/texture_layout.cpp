// String names of the texture vocabulary, as they appear in pack metadata, manifests and reports.
#include "core/texture_layout.h"

#include <algorithm>
#include <utility>

namespace nmc {
namespace {

template <typename E, size_t N>
std::optional<E> lookup(const std::pair<E, const char*> (&table)[N], const std::string& s) {
    for (const auto& entry : table)
        if (s == entry.second) return entry.first;
    return std::nullopt;
}

template <typename E, size_t N>
const char* name_of(const std::pair<E, const char*> (&table)[N], E value) {
    for (const auto& entry : table)
        if (entry.first == value) return entry.second;
    return "unknown";
}

const std::pair<Semantic, const char*> kSemantics[] = {
    {Semantic::albedo, "albedo"},       {Semantic::normal, "normal"},
    {Semantic::roughness, "roughness"}, {Semantic::metalness, "metalness"},
    {Semantic::ambient_occlusion, "ambient_occlusion"},
    {Semantic::height, "height"},       {Semantic::opacity, "opacity"},
    {Semantic::emissive, "emissive"},   {Semantic::specular, "specular"},
    {Semantic::glossiness, "glossiness"}, {Semantic::other, "other"},
};
const std::pair<ColorSpace, const char*> kColorSpaces[] = {{ColorSpace::linear, "linear"},
                                                           {ColorSpace::srgb, "srgb"}};
const std::pair<NormalConvention, const char*> kConventions[] = {{NormalConvention::opengl, "opengl"},
                                                                 {NormalConvention::directx, "directx"}};
const std::pair<NormalMode, const char*> kNormalModes[] = {
    {NormalMode::none, "none"}, {NormalMode::xy, "xy"}, {NormalMode::xyz, "xyz"}};
const std::pair<ValueEncoding, const char*> kValueEncodings[] = {{ValueEncoding::none, "none"},
                                                                 {ValueEncoding::hlg, "hlg"}};
const std::pair<SampleType, const char*> kSampleTypes[] = {{SampleType::uint8, "uint8"},
                                                           {SampleType::uint16, "uint16"},
                                                           {SampleType::float16, "float16"},
                                                           {SampleType::float32, "float32"}};

}  // namespace

const char* to_string(Semantic s) { return name_of(kSemantics, s); }
std::optional<Semantic> semantic_from_string(const std::string& s) { return lookup(kSemantics, s); }

bool is_color(Semantic s) { return s == Semantic::albedo || s == Semantic::emissive || s == Semantic::specular; }
const char* to_string(ColorSpace c) { return name_of(kColorSpaces, c); }
std::optional<ColorSpace> color_space_from_string(const std::string& s) { return lookup(kColorSpaces, s); }
const char* to_string(NormalConvention c) { return name_of(kConventions, c); }
std::optional<NormalConvention> normal_convention_from_string(const std::string& s) {
    return lookup(kConventions, s);
}
const char* to_string(NormalMode m) { return name_of(kNormalModes, m); }
std::optional<NormalMode> normal_mode_from_string(const std::string& s) { return lookup(kNormalModes, s); }
const char* to_string(ValueEncoding e) { return name_of(kValueEncodings, e); }
std::optional<ValueEncoding> value_encoding_from_string(const std::string& s) { return lookup(kValueEncodings, s); }
const char* to_string(SampleType t) { return name_of(kSampleTypes, t); }
std::optional<SampleType> sample_type_from_string(const std::string& s) { return lookup(kSampleTypes, s); }

bool is_float(SampleType t) { return t == SampleType::float16 || t == SampleType::float32; }

int bits_of(SampleType t) {
    switch (t) {
        case SampleType::uint8: return 8;
        case SampleType::uint16: return 16;
        case SampleType::float16: return 16;
        case SampleType::float32: return 32;
    }
    return 0;
}

bool TextureLayout::holds_normals() const {
    if (normal_mode != NormalMode::none) return true;
    return channels.size() == 3 && std::all_of(channels.begin(), channels.end(), [](const ChannelSource& c) {
               return c.semantic == Semantic::normal;
           });
}

std::string TextureLayout::semantic_label() const {
    if (channels.empty()) return "other";
    const Semantic first = channels.front().semantic;
    for (const auto& c : channels)
        if (c.semantic != first) return "packed";
    return to_string(first);
}

}  // namespace nmc
