// The spec's limits (docs/format-spec.md section 9), its layout constants (3) and the network input count (8.5):
// the one definition every reader, writer, decoder and the compressor use. Plain constexpr, so CUDA code can use
// it too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmc {

// spec 3.1, 3.2, 3.3
constexpr size_t kHeaderSize = 64;
constexpr size_t kSectionEntrySize = 48;
constexpr uint64_t kSectionAlignment = 64;      // where each section starts in the file
constexpr uint64_t kLatentLevelAlignment = 16;  // spec 6: where each level starts in LATN
constexpr uint64_t kWeightAlignment = 4;        // spec 7: where a layer's scales start in WGHT
constexpr uint64_t kLayerAlignment = 16;        // spec 7: where each layer starts in WGHT

// spec 9: the container.
constexpr uint32_t kMaxSectionCount = 64;
constexpr uint64_t kMaxFileSize = uint64_t{4} << 30;
constexpr uint64_t kMaxSectionRawSize = uint64_t{1} << 30;
constexpr uint64_t kMaxCompressionRatio = 64;
constexpr int kMaxZstdWindowLog = 27;                     // a zstd frame's window at most 128 MiB
constexpr uint64_t kMaxMetadataSize = uint64_t{1} << 20;  // META raw size
constexpr size_t kMaxMetadataMembers = 64;                // members of one META object
constexpr size_t kMaxMetadataDepth = 16;                  // nesting of META's objects and arrays (the top level is 1)

// spec 9: the metadata.
constexpr int kMaxDimension = 16384;  // material width and height
constexpr int kMaxMipCount = 15;
constexpr int kMaxChannels = 16;  // pack channels: the last layer's output width
constexpr int kMaxTextures = 16;
constexpr int kMaxTextureChannels = 4;
constexpr int kMinLevels = 2;
constexpr int kMaxLevels = 16;
constexpr int kMaxFeatures = 16;
constexpr int kMaxGridScale = 16;
constexpr int kMinLayers = 2;
constexpr int kMaxLayers = 8;
constexpr int kMaxLayerWidth = 256;
constexpr size_t kMaxNameBytes = 256;
// In the binary16 arithmetic, |lo|, |hi| of every latent level <= 16384, so f16(step) <= 32768 and every value stays
// far below binary16's 65504 (no saturation anywhere in dequantisation).
constexpr float kMaxBinary16LatentMagnitude = 16384.0f;

// spec 8.4, 8.5: the positional-encoding values and the LOD input that follow the 2F sampled features.
constexpr int kPositionalInputs = 13;

// spec 8.5: the inputs layer 0 reads for F features per level, 2F + 13; its input_width is at least this and the
// inputs beyond it are zero.
constexpr int network_input_count(int feature_count) {
    return 2 * feature_count + kPositionalInputs;
}

// x rounded up to a multiple of `multiple` (> 0): the spec's align16, align64 and padding.
template <typename T>
constexpr T round_up(T x, T multiple) {
    return (x + multiple - 1) / multiple * multiple;
}

// spec 5.6: layer 0's input width as writers normally choose it, round_up(2F + 13, 16).
constexpr int padded_network_input_count(int feature_count) {
    return round_up(network_input_count(feature_count), 16);
}

}  // namespace nmc
