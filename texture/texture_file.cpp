// DDS and KTX2 files of block-compressed textures. DDS: Microsoft's "DDS file layout" (DDS_HEADER and
// DDS_HEADER_DXT10). KTX2: the Khronos KTX 2.0 specification (sections 3 "File structure" to 4 "Level data")
// with a Khronos Data Format basic descriptor block (KDFS section 5); KTX2 levels optionally supercompressed with
// zstd (KTX 2.0 section 3.10, scheme 2).
#include "texture/texture_file.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <memory>

#include "core/byte_io.h"
#include "core/file_io.h"

namespace nmc::texture {
namespace {

constexpr int kMaxExtent = 65536;

int full_chain_levels(int width, int height) {
    int levels = 1;
    while ((width >> levels) > 0 || (height >> levels) > 0) ++levels;
    return levels;
}

Status check_texture(const BlockTexture& t) {
    const std::string what = std::string(to_string(t.format)) + " texture: ";
    if (t.width < 1 || t.height < 1 || t.width > kMaxExtent || t.height > kMaxExtent)
        return Status(StatusCode::invalid_argument, what + "size " + std::to_string(t.width) + "x" +
                                                        std::to_string(t.height) + " outside 1..65536");
    if (t.levels.empty() || int(t.levels.size()) > full_chain_levels(t.width, t.height))
        return Status(StatusCode::invalid_argument,
                      what + "expected 1.." + std::to_string(full_chain_levels(t.width, t.height)) + " mip levels, got " +
                          std::to_string(t.levels.size()));
    if (t.srgb && !has_srgb_variant(t.format))
        return Status(StatusCode::invalid_argument, what + "the format has no sRGB variant");
    for (size_t m = 0; m < t.levels.size(); ++m) {
        const size_t expected = level_bytes(t.format, mip_extent(t.width, int(m)), mip_extent(t.height, int(m)));
        if (t.levels[m].size() != expected)
            return Status(StatusCode::invalid_argument, what + "mip " + std::to_string(m) + ": expected " +
                                                            std::to_string(expected) + " bytes, got " +
                                                            std::to_string(t.levels[m].size()));
    }
    return Status::success();
}

Status corrupt(const std::string& container, const std::string& message) {
    return Status(StatusCode::corrupt, container + " file: " + message);
}
std::string expected_got(const std::string& field, uint64_t expected, uint64_t got) {
    return field + ": expected " + std::to_string(expected) + ", got " + std::to_string(got);
}

// Sets t's format and sRGB flag to those whose container code (`code_of`: dxgi_format or vk_format) is `code`;
// false when no format nmc writes has it (a container without a format's code says 0 for it).
bool format_of_code(uint32_t (*code_of)(BlockFormat, bool), uint32_t code, BlockTexture& t) {
    for (BlockFormat f : all_block_formats())
        for (bool srgb : {false, true})
            if ((!srgb || has_srgb_variant(f)) && code != 0 && code_of(f, srgb) == code) {
                t.format = f;
                t.srgb = srgb;
                return true;
            }
    return false;
}

// Reads the levels of `t` (format and size set) from `data`, mip 0 first; the caller checked the sizes.
void split_levels(BlockTexture& t, int levels, const uint8_t* data) {
    for (int m = 0; m < levels; ++m) {
        const size_t n = level_bytes(t.format, mip_extent(t.width, m), mip_extent(t.height, m));
        t.levels.emplace_back(data, data + n);
        data += n;
    }
}

// nmc's readers accept exactly what its writers write: every header byte the parsed texture does not explain (a
// reserved word, a mask, a caps bit, a padding byte) must be the writer's.
Status check_canonical(const std::string& container, const std::vector<uint8_t>& bytes,
                       const std::vector<uint8_t>& rewritten, size_t header_bytes) {
    for (size_t i = 0; i < header_bytes; ++i)
        if (bytes[i] != rewritten[i])
            return corrupt(container, expected_got("header byte " + std::to_string(i), rewritten[i], bytes[i]));
    return Status::success();
}

// ---- DDS ----------------------------------------------------------------------------------------------------

constexpr uint32_t kDdsMagic = 0x20534444;  // "DDS "
constexpr uint32_t kDdsHeaderSize = 124;
constexpr uint32_t kDdsPixelFormatSize = 32;
constexpr uint32_t kDdsFourCcDx10 = 0x30315844;  // "DX10"
constexpr uint32_t kDdpfFourCc = 0x4;
// DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT | DDSD_MIPMAPCOUNT | DDSD_LINEARSIZE
constexpr uint32_t kDdsFlags = 0x1 | 0x2 | 0x4 | 0x1000 | 0x20000 | 0x80000;
constexpr uint32_t kDdsCapsTexture = 0x1000, kDdsCapsComplex = 0x8, kDdsCapsMipmap = 0x400000;
constexpr uint32_t kD3d10ResourceDimensionTexture2d = 3;
constexpr size_t kDdsPrefixBytes = 4 + kDdsHeaderSize + 20;  // magic, DDS_HEADER, DDS_HEADER_DXT10

std::vector<uint8_t> encode_dds(const BlockTexture& t) {
    std::vector<uint8_t> out;
    ByteWriter w(out);
    const uint32_t levels = uint32_t(t.levels.size());
    w.u32(kDdsMagic);
    w.u32(kDdsHeaderSize);
    w.u32(kDdsFlags);
    w.u32(uint32_t(t.height));
    w.u32(uint32_t(t.width));
    w.u32(uint32_t(t.levels[0].size()));  // pitchOrLinearSize: bytes of mip 0
    w.u32(0);                             // depth
    w.u32(levels);
    for (int i = 0; i < 11; ++i) w.u32(0);  // reserved1
    w.u32(kDdsPixelFormatSize);
    w.u32(kDdpfFourCc);
    w.u32(kDdsFourCcDx10);
    for (int i = 0; i < 5; ++i) w.u32(0);  // RGB bit count and masks: unused with a FourCC
    w.u32(kDdsCapsTexture | (levels > 1 ? kDdsCapsComplex | kDdsCapsMipmap : 0));
    for (int i = 0; i < 4; ++i) w.u32(0);  // caps2, caps3, caps4, reserved2
    // DDS_HEADER_DXT10
    w.u32(dxgi_format(t.format, t.srgb));
    w.u32(kD3d10ResourceDimensionTexture2d);
    w.u32(0);  // miscFlag
    w.u32(1);  // arraySize
    w.u32(0);  // miscFlags2: alpha mode unknown
    for (const std::vector<uint8_t>& level : t.levels) w.bytes(level.data(), level.size());
    return out;
}

Result<BlockTexture> decode_dds(const std::vector<uint8_t>& bytes) {
    ByteReader r(bytes.data(), bytes.size());
    if (r.u32() != kDdsMagic || !r.ok()) return Status(StatusCode::not_recognized, "not a DDS file (no \"DDS \" magic)");
    if (bytes.size() < kDdsPrefixBytes)
        return corrupt("DDS", "truncated header: " + expected_got("bytes", kDdsPrefixBytes, bytes.size()));
    const uint32_t header_size = r.u32(), flags = r.u32(), height = r.u32(), width = r.u32();
    r.u32();  // pitchOrLinearSize: checked through the level sizes
    const uint32_t depth = r.u32(), levels = r.u32();
    for (int i = 0; i < 11; ++i) r.u32();
    const uint32_t pf_size = r.u32(), pf_flags = r.u32(), four_cc = r.u32();
    for (int i = 0; i < 5; ++i) r.u32();
    r.u32();  // caps
    for (int i = 0; i < 4; ++i) r.u32();
    const uint32_t dxgi = r.u32(), dimension = r.u32(), misc = r.u32(), array_size = r.u32();
    r.u32();  // miscFlags2
    if (header_size != kDdsHeaderSize) return corrupt("DDS", expected_got("header size", kDdsHeaderSize, header_size));
    if (pf_size != kDdsPixelFormatSize) return corrupt("DDS", expected_got("pixel format size", kDdsPixelFormatSize, pf_size));
    if (!(pf_flags & kDdpfFourCc) || four_cc != kDdsFourCcDx10)
        return Status(StatusCode::not_recognized, "DDS file without a DX10 header: not a format nmc writes");
    if ((flags & kDdsFlags) != kDdsFlags) return corrupt("DDS", expected_got("flags (required bits)", kDdsFlags, flags));
    BlockTexture t;
    if (!format_of_code(dxgi_format, dxgi, t))
        return Status(StatusCode::not_recognized,
                      "DDS file of DXGI format " + std::to_string(dxgi) + ": not BC1, BC4, BC5, BC6H (UF16) or BC7");
    if (dimension != kD3d10ResourceDimensionTexture2d) return corrupt("DDS", expected_got("resource dimension", 3, dimension));
    if (array_size != 1 || misc != 0 || depth != 0)
        return corrupt("DDS", "a texture array, cube map or volume: nmc writes single 2D textures");
    if (width < 1 || height < 1 || width > kMaxExtent || height > kMaxExtent)
        return corrupt("DDS", "size " + std::to_string(width) + "x" + std::to_string(height) + " outside 1..65536");
    t.width = int(width), t.height = int(height);
    if (levels < 1 || levels > uint32_t(full_chain_levels(t.width, t.height)))  // as uint32: int(levels) may be < 0
        return corrupt("DDS", expected_got("mip count at most", uint64_t(full_chain_levels(t.width, t.height)), levels));
    size_t data = 0;
    for (int m = 0; m < int(levels); ++m) data += level_bytes(t.format, mip_extent(t.width, m), mip_extent(t.height, m));
    if (bytes.size() != kDdsPrefixBytes + data)
        return corrupt("DDS", expected_got("file size", kDdsPrefixBytes + data, bytes.size()));
    split_levels(t, int(levels), bytes.data() + kDdsPrefixBytes);
    NMC_RETURN_IF_ERROR(check_canonical("DDS", bytes, encode_dds(t), kDdsPrefixBytes));
    return t;
}

// ---- KTX2 ---------------------------------------------------------------------------------------------------

constexpr uint8_t kKtx2Identifier[12] = {0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A};
constexpr size_t kKtx2HeaderBytes = 80;  // identifier, header, index
constexpr size_t kKtx2LevelIndexEntryBytes = 24;

// KDFS basic descriptor block: the colour model of each format (section 5.6) and its samples (channel id, bit
// offset, bit length) in the block.
struct DfdLayout {
    uint8_t color_model;
    int samples;
};
DfdLayout dfd_layout(BlockFormat f) {
    switch (f) {
        case BlockFormat::bc1: return {128, 1};  // KHR_DF_MODEL_BC1A, channel COLOR
        case BlockFormat::bc4: return {131, 1};  // KHR_DF_MODEL_BC4, channel DATA
        case BlockFormat::bc5: return {132, 2};  // KHR_DF_MODEL_BC5, channels RED and GREEN, 64 bits each
        case BlockFormat::bc6h: return {133, 1};  // KHR_DF_MODEL_BC6H, channel COLOR
        case BlockFormat::bc7: return {134, 1};  // KHR_DF_MODEL_BC7, channel COLOR
        default: return {162, 1};                // KHR_DF_MODEL_ASTC, channel DATA
    }
}
constexpr uint8_t kKhrDfPrimariesBt709 = 1;
constexpr uint8_t kKhrDfTransferLinear = 1, kKhrDfTransferSrgb = 2;

uint32_t dfd_block_size(BlockFormat f) { return 24 + 16 * uint32_t(dfd_layout(f).samples); }

void write_dfd(ByteWriter& w, const BlockTexture& t) {
    const DfdLayout layout = dfd_layout(t.format);
    const uint32_t block_size = dfd_block_size(t.format);
    w.u32(4 + block_size);  // dfdTotalSize
    w.u32(0);               // vendorId KHRONOS (0), descriptorType BASICFORMAT (0)
    w.u16(2);               // versionNumber: KDFS 1.3
    w.u16(uint16_t(block_size));
    w.u8(layout.color_model);
    w.u8(kKhrDfPrimariesBt709);
    w.u8(t.srgb ? kKhrDfTransferSrgb : kKhrDfTransferLinear);
    w.u8(0);  // flags: straight alpha
    // texelBlockDimension: width x height x 1 x 1, each stored less one
    w.u8(uint8_t(block_width(t.format) - 1)), w.u8(uint8_t(block_height(t.format) - 1)), w.u8(0), w.u8(0);
    w.u8(uint8_t(block_bytes(t.format)));  // bytesPlane0
    for (int i = 1; i < 8; ++i) w.u8(0);
    const int bits_per_sample = block_bytes(t.format) * 8 / layout.samples;
    // BC6H's sample is unsigned float (qualifier FLOAT), its range given as floats: 0.0 to 1.0.
    const bool float_sample = t.format == BlockFormat::bc6h;
    constexpr uint8_t kKhrDfSampleDatatypeFloat = 0x80;
    constexpr uint32_t kFloatOne = 0x3F800000u;
    for (int s = 0; s < layout.samples; ++s) {
        w.u16(uint16_t(s * bits_per_sample));  // bitOffset
        w.u8(uint8_t(bits_per_sample - 1));    // bitLength, less one
        // channelType: channel id 0 (and 1 for BC5's green), unsigned, linear; FLOAT for BC6H
        w.u8(uint8_t(s | (float_sample ? kKhrDfSampleDatatypeFloat : 0)));
        w.u32(0);                                       // samplePosition 0..3
        w.u32(0);                                       // sampleLower
        w.u32(float_sample ? kFloatOne : 0xFFFFFFFFu);  // sampleUpper
    }
}

constexpr uint32_t kSupercompressionNone = 0, kSupercompressionZstd = 2;  // KTX 2.0 section 3.10
// zstd's level for supercompression: on BC7 and ASTC blocks level 19 saves a few percent more than the fast levels
// at the cost of encoding time the block encoders dwarf (docs/cli.md gives the measured ratios).
constexpr int kZstdLevel = 19;

uint32_t scheme_code(Supercompression s) { return s == Supercompression::zstd ? kSupercompressionZstd : kSupercompressionNone; }

// The file of `t` whose levels are stored as `stored` (t.levels themselves, or their zstd frames): the writer's
// layout, and the reader's check that a file is exactly that layout.
std::vector<uint8_t> encode_ktx2(const BlockTexture& t, Supercompression s, const std::vector<std::vector<uint8_t>>& stored) {
    const uint32_t levels = uint32_t(t.levels.size());
    const uint32_t dfd_offset = uint32_t(kKtx2HeaderBytes + kKtx2LevelIndexEntryBytes * levels);
    const uint32_t dfd_length = 4 + dfd_block_size(t.format);
    // Level data follows, smallest mip first, each level aligned to lcm(block bytes, 4) = the block size; to 1 byte
    // when supercompressed (section 3.9.7).
    const size_t alignment = s == Supercompression::none ? size_t(block_bytes(t.format)) : 1;
    std::vector<uint64_t> offset(levels);
    size_t end = dfd_offset + dfd_length;
    for (int m = int(levels) - 1; m >= 0; --m) {
        end = (end + alignment - 1) / alignment * alignment;
        offset[size_t(m)] = end;
        end += stored[size_t(m)].size();
    }
    std::vector<uint8_t> out;
    ByteWriter w(out);
    w.bytes(kKtx2Identifier, sizeof kKtx2Identifier);
    w.u32(vk_format(t.format, t.srgb));
    w.u32(1);  // typeSize: 1 for block-compressed formats
    w.u32(uint32_t(t.width));
    w.u32(uint32_t(t.height));
    w.u32(0);  // pixelDepth
    w.u32(0);  // layerCount: not an array
    w.u32(1);  // faceCount
    w.u32(levels);
    w.u32(scheme_code(s));
    w.u32(dfd_offset);
    w.u32(dfd_length);
    w.u32(0), w.u32(0);  // no key/value data
    w.u64(0), w.u64(0);  // no supercompression global data
    for (uint32_t m = 0; m < levels; ++m) {
        w.u64(offset[m]);
        w.u64(stored[m].size());
        w.u64(t.levels[m].size());  // uncompressedByteLength
    }
    write_dfd(w, t);
    for (int m = int(levels) - 1; m >= 0; --m) {
        w.pad_to(alignment);
        w.bytes(stored[size_t(m)].data(), stored[size_t(m)].size());
    }
    return out;
}

// The one checker for zstd calls here: the call, the level and zstd's own words.
Status zstd_check(size_t rc, const char* call, int level) {
    if (!ZSTD_isError(rc)) return Status::success();
    return Status(ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation ? StatusCode::out_of_memory : StatusCode::corrupt,
                  "KTX2 level " + std::to_string(level) + ": " + call + " failed: " + ZSTD_getErrorName(rc));
}

struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

// Each level one zstd frame with its content size and checksum, so a reader finds a damaged frame.
Result<std::vector<std::vector<uint8_t>>> stored_levels(const BlockTexture& t, Supercompression s) {
    if (s == Supercompression::none) return t.levels;
    std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
    if (!cctx) return Status(StatusCode::out_of_memory, "KTX2: ZSTD_createCCtx failed");
    NMC_RETURN_IF_ERROR(zstd_check(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, kZstdLevel),
                                   "ZSTD_CCtx_setParameter", 0));
    NMC_RETURN_IF_ERROR(zstd_check(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1), "ZSTD_CCtx_setParameter", 0));
    std::vector<std::vector<uint8_t>> frames;
    for (size_t m = 0; m < t.levels.size(); ++m) {
        std::vector<uint8_t> frame(ZSTD_compressBound(t.levels[m].size()));
        const size_t n = ZSTD_compress2(cctx.get(), frame.data(), frame.size(), t.levels[m].data(), t.levels[m].size());
        NMC_RETURN_IF_ERROR(zstd_check(n, "ZSTD_compress2", int(m)));
        frame.resize(n);
        frames.push_back(std::move(frame));
    }
    return frames;
}

// One zstd frame holding exactly `expected` bytes, the level's size from the checked header. Before anything is
// allocated the frame must be able to hold that much: each zstd block takes at least 4 bytes (a 3-byte header and
// one RLE byte) and yields at most 128 KiB, so a small hostile frame cannot claim a 4 GiB level.
Status unzstd_level(const uint8_t* frame, size_t length, size_t expected, int level, std::vector<uint8_t>& out) {
    const std::string where = "level " + std::to_string(level) + ": ";
    if (uint64_t(expected) > (uint64_t(length) / 4 + 1) * uint64_t(ZSTD_BLOCKSIZE_MAX))
        return corrupt("KTX2", where + std::to_string(length) + " bytes of zstd cannot hold the level's " +
                                   std::to_string(expected) + " bytes");
    const size_t frame_size = ZSTD_findFrameCompressedSize(frame, length);
    NMC_RETURN_IF_ERROR(zstd_check(frame_size, "ZSTD_findFrameCompressedSize", level));
    if (frame_size != length) return corrupt("KTX2", where + expected_got("bytes of one zstd frame", length, frame_size));
    const unsigned long long content = ZSTD_getFrameContentSize(frame, length);
    if (content != expected)
        return corrupt("KTX2", where + "zstd frame content size " +
                                   (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR
                                        ? std::string("not recorded")
                                        : std::to_string(content)) +
                                   ", expected " + std::to_string(expected));
    out.resize(expected);
    const size_t n = ZSTD_decompress(out.data(), out.size(), frame, length);
    NMC_RETURN_IF_ERROR(zstd_check(n, "ZSTD_decompress", level));
    if (n != expected) return corrupt("KTX2", where + expected_got("decompressed bytes", expected, n));
    return Status::success();
}

Result<BlockTexture> decode_ktx2(const std::vector<uint8_t>& bytes) {
    if (bytes.size() < sizeof kKtx2Identifier || !std::equal(kKtx2Identifier, kKtx2Identifier + 12, bytes.begin()))
        return Status(StatusCode::not_recognized, "not a KTX2 file (no KTX 20 identifier)");
    if (bytes.size() < kKtx2HeaderBytes)
        return corrupt("KTX2", "truncated header: " + expected_got("bytes", kKtx2HeaderBytes, bytes.size()));
    ByteReader r(bytes.data() + 12, bytes.size() - 12);
    const uint32_t vk = r.u32(), type_size = r.u32(), width = r.u32(), height = r.u32(), depth = r.u32(),
                   layers = r.u32(), faces = r.u32(), levels = r.u32(), scheme = r.u32();
    const uint32_t dfd_offset = r.u32(), dfd_length = r.u32();
    r.u32();  // kvdByteOffset: 0, as the canonical header check below makes sure
    const uint32_t kvd_length = r.u32();
    const uint64_t sgd_offset = r.u64(), sgd_length = r.u64();
    BlockTexture t;
    if (!format_of_code(vk_format, vk, t))
        return Status(StatusCode::not_recognized, "KTX2 file of vkFormat " + std::to_string(vk) +
                                                      ": not BC1, BC4, BC5, BC6H (UFLOAT), BC7 or ASTC LDR 2D");
    if (type_size != 1) return corrupt("KTX2", expected_got("typeSize", 1, type_size));
    if (depth != 0 || layers != 0 || faces != 1)
        return corrupt("KTX2", "a volume, array or cube map: nmc writes single 2D textures");
    if (scheme != kSupercompressionNone && scheme != kSupercompressionZstd)
        return corrupt("KTX2", "supercompressionScheme " + std::to_string(scheme) + ": nmc writes 0 (none) or 2 (zstd)");
    const Supercompression supercompression = scheme == kSupercompressionZstd ? Supercompression::zstd : Supercompression::none;
    if (sgd_offset != 0 || sgd_length != 0) return corrupt("KTX2", "supercompression global data without supercompression");
    if (kvd_length != 0) return corrupt("KTX2", expected_got("kvdByteLength", 0, kvd_length));
    if (width < 1 || height < 1 || width > kMaxExtent || height > kMaxExtent)
        return corrupt("KTX2", "size " + std::to_string(width) + "x" + std::to_string(height) + " outside 1..65536");
    t.width = int(width), t.height = int(height);
    if (levels < 1 || levels > uint32_t(full_chain_levels(t.width, t.height)))  // as uint32: int(levels) may be < 0
        return corrupt("KTX2", expected_got("levelCount at most", uint64_t(full_chain_levels(t.width, t.height)), levels));
    const size_t index_end = kKtx2HeaderBytes + kKtx2LevelIndexEntryBytes * levels;
    if (bytes.size() < index_end) return corrupt("KTX2", "truncated level index");

    // The data format descriptor must be the one encode_ktx2() writes for this vkFormat.
    if (dfd_offset != index_end) return corrupt("KTX2", expected_got("dfdByteOffset", index_end, dfd_offset));
    if (dfd_length != 4 + dfd_block_size(t.format))
        return corrupt("KTX2", expected_got("dfdByteLength", 4 + dfd_block_size(t.format), dfd_length));
    if (bytes.size() < uint64_t(dfd_offset) + dfd_length) return corrupt("KTX2", "truncated data format descriptor");
    std::vector<uint8_t> expected_dfd;
    ByteWriter dfd(expected_dfd);
    write_dfd(dfd, t);
    for (size_t i = 0; i < expected_dfd.size(); ++i)
        if (bytes[dfd_offset + i] != expected_dfd[i])
            return corrupt("KTX2", "data format descriptor byte " + std::to_string(i) + ": " +
                                       expected_got("value for vkFormat " + std::to_string(vk), expected_dfd[i],
                                                    bytes[dfd_offset + i]));

    ByteReader index(bytes.data() + kKtx2HeaderBytes, kKtx2LevelIndexEntryBytes * levels);
    const uint64_t alignment = supercompression == Supercompression::none ? uint64_t(block_bytes(t.format)) : 1;
    uint64_t data_end = uint64_t(dfd_offset) + dfd_length;
    std::vector<std::vector<uint8_t>> stored;
    for (int m = 0; m < int(levels); ++m) {
        const uint64_t offset = index.u64(), length = index.u64(), uncompressed = index.u64();
        const size_t expected = level_bytes(t.format, mip_extent(t.width, m), mip_extent(t.height, m));
        const std::string level = "level " + std::to_string(m) + " ";
        if (uncompressed != expected) return corrupt("KTX2", expected_got(level + "uncompressedByteLength", expected, uncompressed));
        if (supercompression == Supercompression::none && length != expected)
            return corrupt("KTX2", expected_got(level + "byteLength", expected, length));
        if (offset % alignment != 0 || offset < uint64_t(dfd_offset) + dfd_length)
            return corrupt("KTX2", level + "byteOffset " + std::to_string(offset) + " misaligned or inside the header");
        // Offsets and lengths are checked against the file before any is used (a hostile file may hold anything).
        if (offset > bytes.size() || length > bytes.size() - offset)
            return corrupt("KTX2", level + "data past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
        stored.emplace_back(bytes.begin() + std::ptrdiff_t(offset), bytes.begin() + std::ptrdiff_t(offset + length));
        if (supercompression == Supercompression::zstd) {
            t.levels.emplace_back();
            NMC_RETURN_IF_ERROR(unzstd_level(stored.back().data(), stored.back().size(), expected, m, t.levels.back()));
        } else {
            t.levels.push_back(stored.back());
        }
        data_end = std::max(data_end, offset + length);
    }
    if (data_end != bytes.size()) return corrupt("KTX2", expected_got("file size", data_end, bytes.size()));
    // Key/value data, padding and the level layout (each level where the writer puts it): nmc's own.
    const std::vector<uint8_t> rewritten = encode_ktx2(t, supercompression, stored);
    if (rewritten.size() != bytes.size()) return corrupt("KTX2", expected_got("file size for its levels", rewritten.size(), bytes.size()));
    NMC_RETURN_IF_ERROR(check_canonical("KTX2", bytes, rewritten, size_t(dfd_offset) + dfd_length));
    for (int m = 0; m < int(levels); ++m)
        if (load_u64_le(bytes.data() + kKtx2HeaderBytes + kKtx2LevelIndexEntryBytes * size_t(m)) !=
            load_u64_le(rewritten.data() + kKtx2HeaderBytes + kKtx2LevelIndexEntryBytes * size_t(m)))
            return corrupt("KTX2", "level " + std::to_string(m) + " byteOffset: levels overlap or are out of order");
    return t;
}

}  // namespace

int mip_extent(int extent, int m) { return std::max(1, extent >> m); }

const char* to_string(ContainerFormat c) { return c == ContainerFormat::dds ? "dds" : "ktx2"; }

std::optional<ContainerFormat> container_format_from_string(const std::string& s) {
    if (s == "dds") return ContainerFormat::dds;
    if (s == "ktx2") return ContainerFormat::ktx2;
    return std::nullopt;
}

uint32_t dxgi_format(BlockFormat f, bool srgb) {
    switch (f) {
        case BlockFormat::bc1: return srgb ? 72 : 71;  // DXGI_FORMAT_BC1_UNORM(_SRGB)
        case BlockFormat::bc4: return 80;              // DXGI_FORMAT_BC4_UNORM
        case BlockFormat::bc5: return 83;              // DXGI_FORMAT_BC5_UNORM
        case BlockFormat::bc6h: return 95;             // DXGI_FORMAT_BC6H_UF16
        case BlockFormat::bc7: return srgb ? 99 : 98;  // DXGI_FORMAT_BC7_UNORM(_SRGB)
        default: return 0;                             // ASTC: DXGI has no ASTC formats
    }
}

uint32_t vk_format(BlockFormat f, bool srgb) {
    switch (f) {
        case BlockFormat::bc1: return srgb ? 132 : 131;  // VK_FORMAT_BC1_RGB_SRGB_BLOCK / _UNORM_BLOCK
        case BlockFormat::bc4: return 139;               // VK_FORMAT_BC4_UNORM_BLOCK
        case BlockFormat::bc5: return 141;               // VK_FORMAT_BC5_UNORM_BLOCK
        case BlockFormat::bc6h: return 143;              // VK_FORMAT_BC6H_UFLOAT_BLOCK
        case BlockFormat::bc7: return srgb ? 146 : 145;  // VK_FORMAT_BC7_SRGB_BLOCK / _UNORM_BLOCK
        default:
            // VK_FORMAT_ASTC_4x4_UNORM_BLOCK (157) and _SRGB_BLOCK (158), then each block size in BlockFormat's order
            return 157 + 2 * uint32_t(int(f) - int(BlockFormat::astc_4x4)) + (srgb ? 1 : 0);
    }
}

Status check_container(ContainerFormat c, BlockFormat f, Supercompression s) {
    if (c == ContainerFormat::dds && is_astc(f))
        return Status(StatusCode::invalid_argument,
                      std::string(to_string(f)) + ": DDS has no ASTC formats (DXGI defines none); --format ktx2 holds it");
    if (c == ContainerFormat::dds && s != Supercompression::none)
        return Status(StatusCode::invalid_argument, "DDS has no supercompression; --format ktx2 has zstd");
    return Status::success();
}

Result<std::vector<uint8_t>> encode_texture_file(ContainerFormat c, const BlockTexture& texture, Supercompression s) {
    NMC_RETURN_IF_ERROR(check_container(c, texture.format, s));
    NMC_RETURN_IF_ERROR(check_texture(texture));
    if (c == ContainerFormat::dds) return encode_dds(texture);
    auto stored = stored_levels(texture, s);
    if (!stored.ok()) return stored.status();
    return encode_ktx2(texture, s, *stored);
}

Result<BlockTexture> decode_texture_file(ContainerFormat c, const std::vector<uint8_t>& bytes) {
    return c == ContainerFormat::dds ? decode_dds(bytes) : decode_ktx2(bytes);
}

const char* to_string(Supercompression s) { return s == Supercompression::zstd ? "zstd" : "none"; }

std::optional<Supercompression> supercompression_from_string(const std::string& s) {
    if (s == "none") return Supercompression::none;
    if (s == "zstd") return Supercompression::zstd;
    return std::nullopt;
}

Status write_texture_file(const std::string& path, ContainerFormat c, const BlockTexture& texture, Supercompression s,
                          bool overwrite) {
    auto bytes = encode_texture_file(c, texture, s);
    if (!bytes.ok()) return bytes.status().with_context(path);
    return write_file_atomically(path, bytes->data(), bytes->size(), overwrite ? Overwrite::allow : Overwrite::refuse);
}

}  // namespace nmc::texture
