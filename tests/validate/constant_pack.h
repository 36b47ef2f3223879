// Test support for validate and the decompress/validate CLI: packs whose network outputs a chosen constant per
// pack channel (zero weights, the constants as the last layer's binary16 biases, so spec 8.6 gives
// y = 0 * scale + bias), which makes every decoded value and quality figure computable by hand; source files
// written next to them; and a temporary folder.
#pragma once

#include <string>
#include <vector>

#include "core/image.h"
#include "core/status.h"
#include "format/pack.h"

namespace nmc::testing {

// A pack of width x height texels and `mips` mips with the given channels, where pack channel c decodes to
// lo_c + (hi_c - lo_c) * outputs[c] at every texel of every mip (spec 8.7). Each output must be in [0, 1] and
// exact in binary16 (0.25, 0.625, ...), or the bias rounds it. Textures, encoder and quality are left empty.
Pack constant_pack(int width, int height, int mips, const std::vector<ChannelInfo>& channels,
                   const std::vector<float>& outputs);

// Channel sources of a texture layout.
ChannelSource from_pack(int pack_channel, Semantic semantic = Semantic::other, bool invert = false);
ChannelSource constant_channel(float value, Semantic semantic = Semantic::other);
ChannelSource normal_z_channel();

// A texture layout named after its file's stem, the file format taken from the extension.
TextureLayout texture_layout(const std::string& file_name, SampleType sample_type, ColorSpace color_space,
                             std::vector<ChannelSource> channels);

// Writes images[t] as pack.textures[t]'s file in `folder` (the format and sample type of the layout), records
// each file's SHA-256 as read back in the layout, and records `folder` as the encoder's source folder.
Status write_sources(Pack& pack, const std::string& folder, const std::vector<Image>& images);

// Sets pack.quality to what measure_quality() finds against the sources in `folder`: the quality a correct
// compressor stores, so validation sees no drift.
Status store_measured_quality(Pack& pack, const std::string& folder);

// A fresh folder under the system's temporary folder, removed with everything in it at destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

bool file_exists(const std::string& path);
std::string read_text(const std::string& path);

}  // namespace nmc::testing
