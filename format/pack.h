// The in-memory form of an .nmc pack and its reader and writer (docs/format-spec.md is normative).
// Memory in, memory out; read_pack_file/write_pack_file are thin wrappers (atomic writes).
// Readers treat every byte as hostile: sizes are checked against the spec's limits before allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/texture_layout.h"
#include "format/limits.h"

namespace nmc {

// spec 11: 1.0 packs decode with the float32 arithmetic, 2.0 packs name theirs (spec 5.6), 3.0 packs may store
// textures through a value encoding (spec 5.4, 8.9); a writer writes the lowest version whose features the pack uses,
// so a float32 pack without encoded textures is still 1.0.
constexpr uint16_t kFormatVersionMajorFloat32 = 1;
constexpr uint16_t kFormatVersionMajorArithmetic = 2;
constexpr uint16_t kFormatVersionMajorValueEncoding = 3;
constexpr uint16_t kFormatVersionMinor = 0;

enum class AddressMode { wrap, clamp };
const char* to_string(AddressMode m);

// spec 5.2
struct MaterialInfo {
    std::string name;
    int width = 0;
    int height = 0;
    int mip_count = 1;
    AddressMode address_mode = AddressMode::wrap;

    int mip_width(int mip) const { return width >> mip > 0 ? width >> mip : 1; }
    int mip_height(int mip) const { return height >> mip > 0 ? height >> mip : 1; }
};

// spec 5.3: one pack channel (network output) and its output range.
struct ChannelInfo {
    std::string name;
    float lo = 0.0f;
    float hi = 1.0f;
};

// spec 5.5 and 6: one latent grid level, with its codes unpacked to one byte per feature
// (index (y * width + x) * feature_count + j), each in 0 .. 2^bits - 1.
struct LatentLevel {
    int width = 0;
    int height = 0;
    int bits = 4;
    float lo = -1.0f;
    float hi = 1.0f;
    std::vector<uint8_t> codes;
};

struct LatentGrids {
    int feature_count = 16;
    int grid_scale = 2;
    std::vector<LatentLevel> levels;
};

// Level size for a material of mip-0 size `size` (spec 5.5): max(1, ceil(size / (grid_scale * 2^level))).
int latent_level_size(int size, int grid_scale, int level);

enum class WeightType { e4m3, int8 };
const char* to_string(WeightType t);

// spec 5.6 and 7: one layer, weights row-major (output n's inputs at [n * input_width, (n+1) * input_width)).
struct Layer {
    int input_width = 0;
    int output_width = 0;
    WeightType weight_type = WeightType::e4m3;
    std::vector<uint8_t> weights;   // E4M3 codes, or Int8 values as two's-complement bytes
    std::vector<float> scales;      // output_width entries when the layer has scales, else empty
    std::vector<uint16_t> biases;   // output_width binary16 codes

    bool has_scale() const { return !scales.empty(); }
};

// spec 5.6 `arithmetic`: the decoding arithmetic of spec 6, 8.3 and 8.6.
enum class Arithmetic { float32, binary16 };
const char* to_string(Arithmetic a);

// spec 5.6 `activation`: the function after every layer but the last (spec 8.6). The JSON names are to_string's.
enum class Activation { hgelu_clamped };
const char* to_string(Activation a);

struct Network {
    Activation activation = Activation::hgelu_clamped;
    Arithmetic arithmetic = Arithmetic::float32;
    std::vector<Layer> layers;
};

// spec 5.7 (informational).
struct EncoderInfo {
    std::string tool;
    std::string preset;
    double target_bpp = 0;
    int64_t steps = 0;
    int64_t seed = 0;
    std::string device;
    double training_seconds = 0;
    std::string source_folder;
    // The training schedule (written only when `trainer` is set, so packs of other tools keep their bytes).
    std::string trainer;           // "fused" or "eager"
    int64_t batch_size = 0;        // texels per step
    double latent_learning_rate = 0;
    double network_learning_rate = 0;
    std::string latent_rounding;   // "straight-through" or "freeze"
    double latent_rounding_at = 0; // fractions of the steps
    double weight_rounding_at = 0;
    std::string latent_adam;       // "dense" or "sparse"
};

// spec 5.8 (informational). PSNR values in dB; 99 stands for lossless. Empty vectors: not measured.
struct TextureQuality {
    std::string texture;          // texture name
    double psnr_db = 0;
    std::vector<double> channels; // per source channel, file order
    std::vector<double> mips;     // per mip
    double mean_angle_deg = -1;   // normal maps only; -1 otherwise
    double psnr8_mip0_db = 0;     // 8-bit, mip 0, every file channel weighted equally (0: not measured)
};

struct QualityReport {
    bool present = false;
    double psnr_db = 0;
    double bits_per_texel = 0;
    double psnr8_mip0_db = 0;
    std::vector<double> channels;
    std::vector<double> mips;
    std::vector<TextureQuality> textures;
};

// Everything a pack holds.
struct Pack {
    // The major version the writer gives a pack of this arithmetic and these textures (spec 11).
    uint16_t format_version_major() const {
        for (const TextureLayout& t : textures)
            if (t.value_encoding != ValueEncoding::none) return kFormatVersionMajorValueEncoding;
        return network.arithmetic == Arithmetic::float32 ? kFormatVersionMajorFloat32 : kFormatVersionMajorArithmetic;
    }

    MaterialInfo material;
    std::vector<ChannelInfo> channels;
    std::vector<TextureLayout> textures;
    LatentGrids latents;
    Network network;
    EncoderInfo encoder;
    QualityReport quality;
};

// spec 3.2: one entry of the section table as found in a file.
struct SectionEntry {
    std::string fourcc;
    bool required = false;
    int compression = 0;  // 0 none, 1 zstd
    uint64_t offset = 0;
    uint64_t stored_size = 0;
    uint64_t raw_size = 0;
    uint32_t stored_crc = 0;
    uint32_t raw_crc = 0;
};

// The container-level view of a file (header and section table), for inspect and validate.
struct ContainerInfo {
    uint16_t version_major = 0;
    uint16_t version_minor = 0;
    uint64_t file_size = 0;
    std::vector<SectionEntry> sections;
};

struct ReadOptions {
    // Collect every problem found instead of stopping at the first (used by `nmc validate`); read_pack still
    // fails if any was found. Problems are appended here when non-null.
    std::vector<Status>* problems = nullptr;
};

// Parses and checks a whole pack (spec section 10). On success `container` (if non-null) describes the file.
Result<Pack> read_pack(const uint8_t* data, size_t size, ContainerInfo* container = nullptr,
                       const ReadOptions& options = {});

// Reads a pack from a file; error messages start with the path.
Result<Pack> read_pack_file(const std::string& path, ContainerInfo* container = nullptr,
                            const ReadOptions& options = {});

class CompressedSectionCache;  // format/container.h

struct WriteOptions {
    bool compress = true;     // zstd-compress sections where that makes them smaller
    int zstd_level = 19;
    // zstd's output of earlier writes, for writing a pack again with only some sections changed; null: none.
    CompressedSectionCache* cache = nullptr;
};

// Checks a Pack built in memory against every rule a reader checks in a file (spec 5-7 and 10: metadata ranges and
// rules, latent code counts and values, layer sizes, weight, scale and bias values). invalid_argument naming the
// field. read_pack's results pass it; write_pack and the GPU runtime call it before using a Pack from anywhere.
Status check_pack(const Pack& pack);

// Serialises a pack. Fails with invalid_argument if the Pack breaks a rule of the spec (the writer checks
// everything the reader checks, so it never writes a pack the reader would reject).
Result<std::vector<uint8_t>> write_pack(const Pack& pack, const WriteOptions& options = {});

// write_pack, then an atomic write to `path`.
Status write_pack_file(const std::string& path, const Pack& pack, const WriteOptions& options = {},
                       bool overwrite = true);

}  // namespace nmc
