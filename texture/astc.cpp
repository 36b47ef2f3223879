// ASTC through astcenc's C API: one checker for its calls, RAII for its context.
#include "texture/astc.h"

#include <algorithm>
#include <memory>
#include <thread>

#if NMC_HAS_ASTCENC
#include <astcenc.h>
#endif

namespace nmc::texture {
namespace {

const std::vector<std::string> kEffortNames = {"fastest", "fast", "medium", "thorough", "exhaustive"};

Status check_level(const BlockChoice& choice, int width, int height) {
    if (!is_astc(choice.format))
        return Status(StatusCode::invalid_argument, std::string(to_string(choice.format)) + " is not an ASTC format");
    if (width < 1 || height < 1)
        return Status(StatusCode::invalid_argument,
                      "ASTC level of " + std::to_string(width) + "x" + std::to_string(height) + " texels");
    return Status::success();
}

#if NMC_HAS_ASTCENC

// The one checker for astcenc calls: the call, the format and astcenc's own words.
Status astcenc_check(astcenc_error e, const char* call, BlockFormat f) {
    if (e == ASTCENC_SUCCESS) return Status::success();
    return Status(e == ASTCENC_ERR_OUT_OF_MEM ? StatusCode::out_of_memory : StatusCode::internal,
                  std::string(to_string(f)) + ": " + call + " failed: " + astcenc_get_error_string(e));
}

struct ContextDeleter {
    void operator()(astcenc_context* c) const { astcenc_context_free(c); }
};
using Context = std::unique_ptr<astcenc_context, ContextDeleter>;

float preset(AstcEffort e) {
    switch (e) {
        case AstcEffort::fastest: return ASTCENC_PRE_FASTEST;
        case AstcEffort::fast: return ASTCENC_PRE_FAST;
        case AstcEffort::medium: return ASTCENC_PRE_MEDIUM;
        case AstcEffort::thorough: return ASTCENC_PRE_THOROUGH;
        case AstcEffort::exhaustive: return ASTCENC_PRE_EXHAUSTIVE;
    }
    return ASTCENC_PRE_MEDIUM;
}

Result<Context> make_context(const BlockChoice& choice, float quality, unsigned flags, int threads) {
    astcenc_config config{};
    const astcenc_profile profile = choice.srgb ? ASTCENC_PRF_LDR_SRGB : ASTCENC_PRF_LDR;
    if (choice.normal_xy) flags |= ASTCENC_FLG_MAP_NORMAL;
    NMC_RETURN_IF_ERROR(astcenc_check(astcenc_config_init(profile, unsigned(block_width(choice.format)),
                                                          unsigned(block_height(choice.format)), 1, quality, flags,
                                                          &config),
                                      "astcenc_config_init", choice.format));
    astcenc_context* context = nullptr;
    NMC_RETURN_IF_ERROR(astcenc_check(astcenc_context_alloc(&config, unsigned(threads), &context),
                                      "astcenc_context_alloc", choice.format));
    return Context(context);
}

astcenc_image image_view(const Rgba8Image& image, void** slice) {
    *slice = const_cast<uint8_t*>(image.texels.data());  // astcenc reads the texels; its API is not const
    return astcenc_image{unsigned(image.width), unsigned(image.height), 1, ASTCENC_TYPE_U8, slice};
}

#endif

}  // namespace

const char* to_string(AstcEffort e) { return kEffortNames[size_t(e)].c_str(); }

std::optional<AstcEffort> astc_effort_from_string(const std::string& s) {
    for (size_t i = 0; i < kEffortNames.size(); ++i)
        if (s == kEffortNames[i]) return AstcEffort(i);
    return std::nullopt;
}

const std::vector<std::string>& astc_effort_names() { return kEffortNames; }

#if NMC_HAS_ASTCENC

bool astc_in_build() { return true; }

Status astc_availability() { return Status::success(); }

Result<std::vector<std::vector<uint8_t>>> encode_astc(const BlockChoice& choice, AstcEffort effort,
                                                      const std::vector<Rgba8Image>& levels, int threads) {
    for (const Rgba8Image& level : levels) NMC_RETURN_IF_ERROR(check_level(choice, level.width, level.height));
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    // As the astcenc tool compresses: the context never decodes foreign blocks, so astcenc may leave out the
    // decimation tables of modes its search skips.
    auto context = make_context(choice, preset(effort), ASTCENC_FLG_SELF_DECOMPRESS_ONLY, threads);
    if (!context.ok()) return context.status();
    // astcenc's normal-map convention: X in R, G and B, Y in alpha.
    const astcenc_swizzle swizzle = choice.normal_xy
                                        ? astcenc_swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_R, ASTCENC_SWZ_R, ASTCENC_SWZ_G}
                                        : astcenc_swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
    std::vector<std::vector<uint8_t>> out;
    for (const Rgba8Image& level : levels) {
        std::vector<uint8_t> blocks(level_bytes(choice.format, level.width, level.height));
        void* slice = nullptr;
        astcenc_image image = image_view(level, &slice);
        // Every worker joins the one compression; astcenc hands out the blocks.
        std::vector<astcenc_error> results(size_t(threads), ASTCENC_SUCCESS);
        const auto work = [&](int index) {
            results[size_t(index)] = astcenc_compress_image(context->get(), &image, &swizzle, blocks.data(),
                                                            blocks.size(), unsigned(index));
        };
        std::vector<std::thread> workers;
        for (int i = 1; i < threads; ++i) workers.emplace_back(work, i);
        work(0);
        for (std::thread& w : workers) w.join();
        for (astcenc_error e : results) NMC_RETURN_IF_ERROR(astcenc_check(e, "astcenc_compress_image", choice.format));
        NMC_RETURN_IF_ERROR(astcenc_check(astcenc_compress_reset(context->get()), "astcenc_compress_reset", choice.format));
        out.push_back(std::move(blocks));
    }
    return out;
}

Result<Rgba8Image> decode_astc(const BlockChoice& choice, int width, int height, const std::vector<uint8_t>& blocks) {
    NMC_RETURN_IF_ERROR(check_level(choice, width, height));
    if (blocks.size() != level_bytes(choice.format, width, height))
        return Status(StatusCode::invalid_argument,
                      std::string(to_string(choice.format)) + " level of " + std::to_string(width) + "x" +
                          std::to_string(height) + ": expected " +
                          std::to_string(level_bytes(choice.format, width, height)) + " bytes, got " +
                          std::to_string(blocks.size()));
    auto context = make_context(choice, ASTCENC_PRE_FASTEST, ASTCENC_FLG_DECOMPRESS_ONLY, 1);
    if (!context.ok()) return context.status();
    Rgba8Image out;
    out.width = width;
    out.height = height;
    out.texels.resize(size_t(width) * size_t(height) * 4);
    void* slice = nullptr;
    astcenc_image image = image_view(out, &slice);
    const astcenc_swizzle swizzle = choice.normal_xy
                                        ? astcenc_swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_A, ASTCENC_SWZ_0, ASTCENC_SWZ_1}
                                        : astcenc_swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
    NMC_RETURN_IF_ERROR(astcenc_check(astcenc_decompress_image(context->get(), blocks.data(), blocks.size(), &image,
                                                               &swizzle, 0),
                                      "astcenc_decompress_image", choice.format));
    return out;
}

#else

bool astc_in_build() { return false; }

Status astc_availability() {
    return Status(StatusCode::backend_unavailable,
                  "ASTC is not in this build of nmc (built without libastcenc: install libastcenc-dev and "
                  "reconfigure); the BCn codecs work without it");
}

Result<std::vector<std::vector<uint8_t>>> encode_astc(const BlockChoice& choice, AstcEffort,
                                                      const std::vector<Rgba8Image>& levels, int) {
    for (const Rgba8Image& level : levels) NMC_RETURN_IF_ERROR(check_level(choice, level.width, level.height));
    return astc_availability();
}

Result<Rgba8Image> decode_astc(const BlockChoice& choice, int width, int height, const std::vector<uint8_t>&) {
    NMC_RETURN_IF_ERROR(check_level(choice, width, height));
    return astc_availability();
}

#endif

}  // namespace nmc::texture
