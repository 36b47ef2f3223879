// Channel allocation and colour spaces on small synthetic materials, and one real load (the demo material).
#include <gtest/gtest.h>

#include <cmath>

#include "core/hlg.h"
#include "test_support.h"

namespace nmc {
namespace {

std::vector<std::string> names_of(const std::vector<PackChannel>& channels) {
    std::vector<std::string> out;
    for (const auto& c : channels) out.push_back(c.name);
    return out;
}

TEST(Channels, GreyAsRgbConstantAndOrm) {
    test::TempDir dir;
    test::write_png(dir.file("s_diff.png"), test::make_image(4, 4, 3, test::code));
    test::write_png(dir.file("s_rough.png"), test::make_image(4, 4, 3, [](int x, int y, int) { return test::code(x, y, 0); }));
    test::write_png(dir.file("s_metal.png"), test::make_image(4, 4, 1, [](int, int, int) { return 1.0f; }));
    // ORM whose metalness (B) is constant 0: AO and roughness cost a channel each, metalness none.
    test::write_png(dir.file("s_orm.png"), test::make_image(4, 4, 3, [](int x, int y, int c) {
                        return c == 2 ? 0.0f : test::code(x, y, c + 1);
                    }));
    auto m = load_material(dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(names_of(m->channels), (std::vector<std::string>{"albedo.r", "albedo.g", "albedo.b", "roughness",
                                                               "ambient_occlusion", "s_orm.roughness"}));
    const TextureLayout& rough = test::texture_of(*m, "s_rough.png");
    for (const auto& c : rough.channels) {
        EXPECT_EQ(c.kind, ChannelSource::Kind::pack);
        EXPECT_EQ(c.pack_channel, 3);
    }
    // Grey saved as RGB: one pack channel that counts three times in the loss, as its three source channels
    // count in the comparison metric; the ORM's roughness counts once.
    EXPECT_EQ(m->channels[3].loss_weight, 3.0f);
    EXPECT_EQ(m->channels[5].loss_weight, 1.0f);
    const TextureLayout& metal = test::texture_of(*m, "s_metal.png");
    EXPECT_EQ(metal.channels[0].kind, ChannelSource::Kind::constant);
    EXPECT_EQ(metal.channels[0].constant_value, 1.0f);
    const TextureLayout& orm = test::texture_of(*m, "s_orm.png");
    EXPECT_EQ(orm.semantic_label(), "packed");
    EXPECT_EQ(orm.channels[0].semantic, Semantic::ambient_occlusion);
    EXPECT_EQ(orm.channels[0].pack_channel, 4);
    EXPECT_EQ(orm.channels[1].semantic, Semantic::roughness);
    EXPECT_EQ(orm.channels[1].pack_channel, 5);
    EXPECT_EQ(orm.channels[2].kind, ChannelSource::Kind::constant);
    EXPECT_EQ(orm.channels[2].constant_value, 0.0f);
    // Two files hold roughness: kept, with a warning.
    ASSERT_EQ(m->warnings.size(), 1u);
    EXPECT_NE(m->warnings[0].find("roughness is in"), std::string::npos) << m->warnings[0];
    // Planes hold the file's values.
    EXPECT_FLOAT_EQ(m->mips[0][3][1 * 4 + 2], test::code(2, 1, 0));
    EXPECT_FLOAT_EQ(m->mips[0][4][1 * 4 + 2], test::code(2, 1, 1));
    EXPECT_EQ(m->mip_count, 3);
    EXPECT_EQ(m->textures[0].source_sha256.size(), 64u);
}

TEST(Channels, DirectXNormalStoredAsOpenGlXy) {
    test::TempDir dir;
    const auto normal = [](int x, int y, int c) { return c == 2 ? 1.0f : test::code(x, y, c); };
    test::write_png(dir.file("w_normaldx.png"), test::make_image(4, 4, 3, normal));
    MaterialLoadOptions xy;
    xy.normal_mode = NormalModeChoice::xy;
    auto m = load_material(dir.path(), xy);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(names_of(m->channels), (std::vector<std::string>{"normal.x", "normal.y"}));
    const TextureLayout& t = m->textures[0];
    EXPECT_EQ(t.normal_mode, NormalMode::xy);
    EXPECT_EQ(t.normal_convention, NormalConvention::directx);
    EXPECT_TRUE(t.channels[1].invert);
    EXPECT_EQ(t.channels[2].kind, ChannelSource::Kind::normal_z);
    EXPECT_FLOAT_EQ(m->mips[0][0][5], test::code(1, 1, 0));
    EXPECT_FLOAT_EQ(m->mips[0][1][5], 1.0f - test::code(1, 1, 1));

    MaterialLoadOptions xyz;
    xyz.normal_mode = NormalModeChoice::xyz;
    auto m3 = load_material(dir.path(), xyz);
    ASSERT_TRUE(m3.ok()) << m3.status().to_string();
    EXPECT_EQ(names_of(m3->channels), (std::vector<std::string>{"normal.x", "normal.y", "normal.z"}));
    EXPECT_EQ(m3->textures[0].channels[2].kind, ChannelSource::Kind::pack);
}

// The automatic choice: a map of unit normals keeps xy (rebuilding Z loses nothing); a map whose stored Z is
// not the rebuilt one (Z = 1 everywhere while X and Y vary) is stored as three plain channels that decode to
// the file's values, still a normal map for the angle measurement and the BCn comparison.
TEST(Channels, AutomaticNormalModeFollowsThePixels) {
    test::TempDir unit_dir, flat_dir;
    const auto unit = [](int x, int y, int c) {
        const double nx = 0.3 * std::sin(x * 0.9 + y), ny = 0.3 * std::cos(y * 1.3 - x);
        const double v[3] = {nx, ny, std::sqrt(1 - nx * nx - ny * ny)};
        return static_cast<float>(std::floor((v[c] * 0.5 + 0.5) * 255 + 0.5) / 255);
    };
    test::write_png(unit_dir.file("u_normal.png"), test::make_image(16, 16, 3, unit));
    auto m = load_material(unit_dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->textures[0].normal_mode, NormalMode::xy);

    const auto flat = [](int x, int y, int c) { return c == 2 ? 1.0f : test::code(x, y, c); };
    test::write_png(flat_dir.file("f_normal.png"), test::make_image(16, 16, 3, flat));
    m = load_material(flat_dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    const TextureLayout& t = m->textures[0];
    EXPECT_EQ(t.normal_mode, NormalMode::none);
    EXPECT_TRUE(t.holds_normals());
    EXPECT_EQ(names_of(m->channels), (std::vector<std::string>{"normal.x", "normal.y"}));  // Z constant: no channel
    EXPECT_EQ(t.channels[2].kind, ChannelSource::Kind::constant);
}

TEST(Channels, XyNormalCapMeasuresTheRebuiltZ) {
    // Unit normals: the rebuilt Z equals the stored one up to 8-bit rounding of X and Y.
    std::vector<float> unit = {0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.5f};
    EXPECT_GE(xy_normal_cap_db(unit, 2, 3), 90.0);
    // Stored Z off by 51 codes on one texel of two: MSE = 51^2 / 2 / 3 in 8-bit units.
    std::vector<float> off = {0.5f, 0.5f, 0.8f, 0.5f, 0.5f, 1.0f};
    EXPECT_NEAR(xy_normal_cap_db(off, 2, 3), -10 * std::log10(51.0 * 51.0 / (255.0 * 255.0) / 6.0), 1e-9);
}

TEST(Channels, RgbaAlbedoAlphaIsOpacityAndGlossCanBecomeRoughness) {
    test::TempDir dir;
    test::write_png(dir.file("leaf_albedo.png"), test::make_image(4, 4, 4, test::code));
    test::write_png(dir.file("leaf_gloss.png"), test::make_image(4, 4, 1, test::code));
    auto kept = load_material(dir.path());
    ASSERT_TRUE(kept.ok()) << kept.status().to_string();
    EXPECT_EQ(names_of(kept->channels),
              (std::vector<std::string>{"albedo.r", "albedo.g", "albedo.b", "opacity", "glossiness"}));
    EXPECT_EQ(kept->channels[3].color_space, ColorSpace::linear);  // alpha is not colour
    EXPECT_EQ(kept->channels[0].color_space, ColorSpace::srgb);

    MaterialLoadOptions options;
    options.gloss_to_roughness = true;
    auto rough = load_material(dir.path(), options);
    ASSERT_TRUE(rough.ok()) << rough.status().to_string();
    EXPECT_EQ(rough->channels[4].name, "roughness");
    const TextureLayout& gloss = test::texture_of(*rough, "leaf_gloss.png");
    EXPECT_EQ(gloss.channels[0].semantic, Semantic::glossiness);
    EXPECT_TRUE(gloss.channels[0].invert);
    EXPECT_FLOAT_EQ(rough->mips[0][4][6], 1.0f - test::code(2, 1, 0));
}

TEST(Channels, MoreThanSixteenSaysWhatToDrop) {
    test::TempDir dir;
    // 3 + 3 (a normal map that is not unit length: stored as 3 channels) + 4 x 3 channels (RGB data maps whose
    // channels differ) = 18.
    test::write_png(dir.file("m_diff.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("m_nor.png"), test::make_image(2, 2, 3, test::code));
    for (const char* name : {"m_rough.png", "m_metal.png", "m_ao.png", "m_height.png"})
        test::write_png(dir.file(name), test::make_image(2, 2, 3, test::code));
    auto m = scan_material(dir.path());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::limit_exceeded);
    const std::string& msg = m.status().message();
    EXPECT_NE(msg.find("needs 18 pack channels, the limit is 16"), std::string::npos) << msg;
    EXPECT_NE(msg.find("m_height.png 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("drop m_height.png"), std::string::npos) << msg;
}

TEST(Channels, ColorSpacesFollowSemanticsMetadataAndManifest) {
    test::TempDir dir;
    test::write_png(dir.file("c_basecolor.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("c_emissive.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("c_roughness.png"), test::make_image(2, 2, 1, test::code));
    // A colour map that declares itself linear (PNG gAMA 1.0) stays linear.
    ASSERT_TRUE(write_image_tagged(dir.file("c_specular.png"), test::make_image(2, 2, 3, test::code), "png", false,
                                   ColorSpace::linear)
                    .ok());
    auto m = scan_material(dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    for (const auto& t : m->textures) {
        const ColorSpace want = t.file_name == "c_basecolor.png" || t.file_name == "c_emissive.png" ? ColorSpace::srgb
                                                                                                   : ColorSpace::linear;
        EXPECT_EQ(t.color_space, want) << t.file_name;
    }
    test::write_text(dir.file("m.json"), R"({"guess_unlisted": true, "textures": [
        {"file": "c_basecolor.png", "semantic": "albedo", "color_space": "linear", "loss_weight": 3}]})");
    auto over = scan_material(dir.file("m.json"));
    ASSERT_TRUE(over.ok()) << over.status().to_string();
    EXPECT_EQ(over->textures[0].file_name, "c_basecolor.png");
    EXPECT_EQ(over->textures[0].color_space, ColorSpace::linear);
    EXPECT_EQ(over->channels[0].loss_weight, 3.0f);
    EXPECT_EQ(over->channels[3].loss_weight, 1.0f);
}

TEST(Channels, FloatSourcesKeepTheirRange) {
    if (!image_format_supported("exr")) {
        test::TempDir dir;
        EXPECT_EQ(write_image(dir.file("h_height.exr"), Image(2, 2, 1, SampleType::float32), "exr", false).code(),
                  StatusCode::backend_unavailable);
        return;
    }
    test::TempDir dir;
    ASSERT_TRUE(write_image(dir.file("h_height.exr"),
                            test::make_image(2, 2, 1, [](int x, int y, int) { return -2.0f + 3.0f * (x + 2 * y); },
                                             SampleType::float32),
                            "exr", false)
                    .ok());
    auto m = load_material(dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->textures[0].sample_type, SampleType::float32);
    EXPECT_EQ(m->channels[0].lo, -2.0f);
    EXPECT_EQ(m->channels[0].hi, 7.0f);
    EXPECT_FLOAT_EQ(m->mips[0][0][3], 1.0f);  // 7 -> (7 - -2) / 9
    EXPECT_FLOAT_EQ(m->mips[0][0][0], 0.0f);
}

// An HDR map (float, values beyond 1, none negative) is stored HLG-encoded relative to its peak: the pack channels hold
// [0, 1] and the planes the curve's values; mips average linear light. Before, it kept its linear range [0, 16].
TEST(Channels, HdrMapsAreStoredOnTheHlgCurve) {
    if (!image_format_supported("exr")) GTEST_SKIP() << "no EXR backend in this build";
    test::TempDir dir;
    const float values[4] = {0.0f, 0.25f, 4.0f, 16.0f};
    ASSERT_TRUE(write_image(dir.file("lamp_emissive.exr"),
                            test::make_image(2, 2, 1, [&](int x, int y, int) { return values[x + 2 * y]; },
                                             SampleType::float32),
                            "exr", false)
                    .ok());
    auto m = load_material(dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    const TextureLayout& layout = m->textures[0];
    EXPECT_EQ(layout.value_encoding, ValueEncoding::hlg);
    EXPECT_EQ(layout.peak, 16.0f);
    EXPECT_EQ(m->channels[0].lo, 0.0f);
    EXPECT_EQ(m->channels[0].hi, 1.0f);
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(m->mips[0][0][static_cast<size_t>(i)], hlg_encode(values[i] / 16.0f));
    ASSERT_EQ(m->mips.size(), 2u);
    EXPECT_NEAR(m->mips[1][0][0], hlg_encode((0.0f + 0.25f + 4.0f + 16.0f) / 4.0f / 16.0f), 1e-6f);
}

// The one real load: the bundled 512x512 demo material.
TEST(Channels, DemoMaterialLoads) {
    auto m = load_material(std::string(NMC_SOURCE_DIR) + "/data/demo/gltf_flighthelmet_leather_512");
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->name, "gltf_flighthelmet_leather_512");
    EXPECT_EQ(m->width, 512);
    EXPECT_EQ(m->height, 512);
    EXPECT_EQ(m->mip_count, 10);
    ASSERT_EQ(m->textures.size(), 3u);
    EXPECT_EQ(m->textures[0].semantic_label(), "albedo");
    EXPECT_EQ(m->textures[1].semantic_label(), "normal");
    EXPECT_EQ(m->textures[2].semantic_label(), "packed");
    EXPECT_EQ(m->textures[2].file_format, "png");
    // Its normal map is not unit length (rebuilding Z caps it at 43.2 dB): stored as 3 channels.
    EXPECT_TRUE(m->textures[1].holds_normals());
    EXPECT_EQ(m->textures[1].normal_mode, NormalMode::none);
    EXPECT_GE(m->channels.size(), 8u);
    EXPECT_LE(m->channels.size(), 9u);
    ASSERT_EQ(m->mips.size(), 10u);
    EXPECT_EQ(m->mips[9][0].size(), 1u);
    EXPECT_TRUE(m->ignored_files.empty());
}

}  // namespace
}  // namespace nmc
