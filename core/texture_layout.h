// The vocabulary shared by the material library (files on disk), the pack format (metadata) and the decoders
// (output transform): what a source texture file is, what each of its channels means, and how each of its
// channels is produced from the pack's channels on decode. docs/format-spec.md, "Textures", is normative.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nmc {

// What one channel of a source file means. A texture whose channels differ (an ORM map) is "packed".
enum class Semantic {
    albedo,             // base colour / diffuse
    normal,             // tangent-space normal (X, Y, Z channels)
    roughness,
    metalness,
    ambient_occlusion,
    height,             // height / displacement
    opacity,            // alpha / mask
    emissive,
    specular,
    glossiness,         // kept as glossiness unless the user asked for roughness = 1 - gloss
    other,
};
const char* to_string(Semantic s);
std::optional<Semantic> semantic_from_string(const std::string& s);
// Colour semantics (albedo, emissive, specular): their channels carry the texture's colour space, so in an sRGB
// texture they hold sRGB-encoded values. Every other semantic is data and always linear.
bool is_color(Semantic s);

enum class ColorSpace { linear, srgb };
const char* to_string(ColorSpace c);
std::optional<ColorSpace> color_space_from_string(const std::string& s);

// How a texture's pack values encode its values (spec 5.4 value_encoding, 8.9). HDR maps (float values beyond
// [0, 1]) are stored through the HLG curve (core/hlg.h), so that error in the pack is relative to the value and black
// stays black, instead of an absolute error spread over the whole range.
enum class ValueEncoding { none, hlg };
const char* to_string(ValueEncoding e);
std::optional<ValueEncoding> value_encoding_from_string(const std::string& s);

// Normal-map Y convention of the source file. Packs always hold OpenGL (+Y); DirectX files have their Y
// channel inverted on the way in and on the way out (ChannelSource::invert).
enum class NormalConvention { opengl, directx };
const char* to_string(NormalConvention c);
std::optional<NormalConvention> normal_convention_from_string(const std::string& s);

// How a normal map's vector is rebuilt on decode (spec: "Output transform").
enum class NormalMode {
    none,  // not a normal map
    xy,    // X and Y in the pack; Z = sqrt(max(0, 1 - x^2 - y^2)); vector renormalised
    xyz,   // X, Y and Z in the pack; vector renormalised
};
const char* to_string(NormalMode m);
std::optional<NormalMode> normal_mode_from_string(const std::string& s);

// Sample type of a source file's channels, which decoded output keeps.
enum class SampleType { uint8, uint16, float16, float32 };
const char* to_string(SampleType t);
std::optional<SampleType> sample_type_from_string(const std::string& s);
int bits_of(SampleType t);
// float16 and float32: values stored as they are, outside [0, 1] included; integer types hold [0, 1] only.
bool is_float(SampleType t);

// How one channel of a source file is produced on decode.
struct ChannelSource {
    enum class Kind {
        pack,      // pack channel `pack_channel` (after the texture's normal transform), optionally 1 - v
        constant,  // the constant `constant_value`; the map costs no pack channel
        normal_z,  // the rebuilt Z of a NormalMode::xy normal map
    };
    Kind kind = Kind::pack;
    int pack_channel = -1;      // Kind::pack: 0..channel_count-1
    bool invert = false;        // Kind::pack: output is 1 - value (DirectX normal Y, gloss stored as roughness)
    float constant_value = 0;   // Kind::constant, in the texture's normalised value range
    Semantic semantic = Semantic::other;  // what this source channel means
};

// One source texture file of a material and how to rebuild it from the pack.
struct TextureLayout {
    std::string name;              // unique within the material, e.g. "Metal009_2K_Color"
    std::string file_name;         // original file name, e.g. "Metal009_2K_Color.jpg"
    std::string file_format;       // "png", "jpeg", "tga", "exr", "tiff"
    SampleType sample_type = SampleType::uint8;
    ColorSpace color_space = ColorSpace::linear;
    NormalConvention normal_convention = NormalConvention::opengl;
    NormalMode normal_mode = NormalMode::none;
    ValueEncoding value_encoding = ValueEncoding::none;
    float peak = 0;                // value_encoding hlg: the value that pack value 1 decodes to (finite, > 0)
    std::vector<ChannelSource> channels;  // one per channel of the source file, in file order (1..4)
    std::string source_sha256;     // hex SHA-256 of the source file's bytes, "" if unknown

    // "albedo", "normal", ... when every channel has one semantic, else "packed".
    std::string semantic_label() const;
    // A tangent-space normal map: normal_mode xy or xyz, or three channels of semantic normal stored as plain
    // pack channels (normal_mode none). Its first three channels are the vector's X, Y, Z.
    bool holds_normals() const;
};

}  // namespace nmc
