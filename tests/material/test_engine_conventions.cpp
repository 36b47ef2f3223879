// The folder layouts engines and texturing tools write (Unreal, Unity Standard and HDRP, Substance Painter, Quixel
// Megascans), loaded as materials: every channel of every file lands in the pack channel its convention says, with
// the file's own values (checked texel by texel), and the rule for a map held twice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace nmc {
namespace {

constexpr int kSize = 4;

// Texel (x, y) of channel `c` of the file numbered `file`: different for every (file, channel) pair at every texel
// (the offsets differ mod 256 and 23 is odd), so a pack plane equal to one pattern has exactly one source.
float pattern(int file, int c, int x, int y) {
    return static_cast<float>((x * 37 + y * 11 + (file * 4 + c) * 23) % 256) / 255.0f;
}

struct MapFile {
    const char* name;
    int channels;
    std::vector<int> copies = {};  // per file channel, the channel whose pattern it repeats (grey saved as RGB)
};

// Writes the files, numbered in the order given.
void write_layout(const test::TempDir& dir, const std::vector<MapFile>& files) {
    for (size_t f = 0; f < files.size(); ++f) {
        const MapFile& m = files[f];
        test::write_png(dir.file(m.name), test::make_image(kSize, kSize, m.channels, [&](int x, int y, int c) {
                            const int source = m.copies.empty() ? c : m.copies[static_cast<size_t>(c)];
                            return pattern(static_cast<int>(f), source, x, y);
                        }));
    }
}

// Where one file channel must land: its semantic and pack channel (nullptr: a normal map's Z, rebuilt on decode),
// stored inverted (a DirectX normal's Y, gloss stored as roughness) or as is.
struct Landing {
    const char* file;
    int channel;
    Semantic semantic;
    const char* pack_channel;
    bool inverted = false;
};

void expect_landings(const Material& m, const std::vector<MapFile>& files, const std::vector<Landing>& landings) {
    EXPECT_EQ(m.textures.size(), files.size());
    EXPECT_TRUE(m.ignored_files.empty());
    size_t file_channels = 0;
    for (const TextureLayout& t : m.textures) file_channels += t.channels.size();
    EXPECT_EQ(landings.size(), file_channels) << "every file channel is listed once";
    for (const Landing& l : landings) {
        SCOPED_TRACE(std::string(l.file) + " channel " + std::to_string(l.channel));
        int file = -1;
        for (size_t f = 0; f < files.size(); ++f)
            if (files[f].name == std::string(l.file)) file = static_cast<int>(f);
        const TextureLayout* texture = nullptr;
        for (const TextureLayout& t : m.textures)
            if (t.file_name == l.file) texture = &t;
        ASSERT_TRUE(file >= 0 && texture) << "not loaded";
        const ChannelSource& source = texture->channels[static_cast<size_t>(l.channel)];
        EXPECT_EQ(source.semantic, l.semantic);
        if (!l.pack_channel) {
            EXPECT_EQ(source.kind, ChannelSource::Kind::normal_z);
            continue;
        }
        ASSERT_EQ(source.kind, ChannelSource::Kind::pack);
        EXPECT_EQ(m.channels[static_cast<size_t>(source.pack_channel)].name, l.pack_channel);
        EXPECT_EQ(source.invert, l.inverted);
        const MapFile& written = files[static_cast<size_t>(file)];
        const int copied = written.copies.empty() ? l.channel : written.copies[static_cast<size_t>(l.channel)];
        const std::vector<float>& plane = m.mips[0][static_cast<size_t>(source.pack_channel)];
        for (int y = 0; y < kSize; ++y)
            for (int x = 0; x < kSize; ++x) {
                const float value = pattern(file, copied, x, y);
                EXPECT_NEAR(plane[static_cast<size_t>(y * kSize + x)], l.inverted ? 1.0f - value : value, 1e-6f)
                    << "texel " << x << "," << y;
            }
    }
}

// xy: normal maps hold X and Y in the pack whatever their pixels, so the DirectX convention shows as an inverted Y.
MaterialLoadOptions xy_normals() {
    MaterialLoadOptions options;
    options.normal_mode = NormalModeChoice::xy;
    return options;
}

using S = Semantic;

// Unreal's usual set: _D base colour, _N normal (DirectX, as Unreal's are), _ORM occlusion/roughness/metalness.
TEST(EngineConventions, UnrealBaseColorNormalOrm) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"T_Crate_D.png", 3}, {"T_Crate_N.png", 3}, {"T_Crate_ORM.png", 3}};
    write_layout(dir, files);
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"T_Crate_D.png", 0, S::albedo, "albedo.r"},
                     {"T_Crate_D.png", 1, S::albedo, "albedo.g"},
                     {"T_Crate_D.png", 2, S::albedo, "albedo.b"},
                     {"T_Crate_N.png", 0, S::normal, "normal.x"},
                     {"T_Crate_N.png", 1, S::normal, "normal.y", true},
                     {"T_Crate_N.png", 2, S::normal, nullptr},
                     {"T_Crate_ORM.png", 0, S::ambient_occlusion, "ambient_occlusion"},
                     {"T_Crate_ORM.png", 1, S::roughness, "roughness"},
                     {"T_Crate_ORM.png", 2, S::metalness, "metalness"}});
    EXPECT_EQ(test::texture_of(*m, "T_Crate_N.png").normal_convention, NormalConvention::directx);
    EXPECT_TRUE(m->warnings.empty());
}

// Unreal's single-map suffixes, and _BC with an _MRA map (metalness, roughness, occlusion).
TEST(EngineConventions, UnrealSingleMapsAndMra) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"T_Wall_D.png", 3}, {"T_Wall_N.png", 3},  {"T_Wall_R.png", 1},
                                        {"T_Wall_M.png", 1}, {"T_Wall_AO.png", 1}, {"T_Wall_H.png", 1},
                                        {"T_Wall_E.png", 3}};
    write_layout(dir, files);
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"T_Wall_D.png", 0, S::albedo, "albedo.r"},
                     {"T_Wall_D.png", 1, S::albedo, "albedo.g"},
                     {"T_Wall_D.png", 2, S::albedo, "albedo.b"},
                     {"T_Wall_N.png", 0, S::normal, "normal.x"},
                     {"T_Wall_N.png", 1, S::normal, "normal.y", true},
                     {"T_Wall_N.png", 2, S::normal, nullptr},
                     {"T_Wall_R.png", 0, S::roughness, "roughness"},
                     {"T_Wall_M.png", 0, S::metalness, "metalness"},
                     {"T_Wall_AO.png", 0, S::ambient_occlusion, "ambient_occlusion"},
                     {"T_Wall_H.png", 0, S::height, "height"},
                     {"T_Wall_E.png", 0, S::emissive, "emissive.r"},
                     {"T_Wall_E.png", 1, S::emissive, "emissive.g"},
                     {"T_Wall_E.png", 2, S::emissive, "emissive.b"}});

    test::TempDir mra;
    const std::vector<MapFile> mra_files = {{"T_Rock_BC.png", 3}, {"T_Rock_MRA.png", 3}};
    write_layout(mra, mra_files);
    m = load_material(mra.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, mra_files,
                    {{"T_Rock_BC.png", 0, S::albedo, "albedo.r"},
                     {"T_Rock_BC.png", 1, S::albedo, "albedo.g"},
                     {"T_Rock_BC.png", 2, S::albedo, "albedo.b"},
                     {"T_Rock_MRA.png", 0, S::metalness, "metalness"},
                     {"T_Rock_MRA.png", 1, S::roughness, "roughness"},
                     {"T_Rock_MRA.png", 2, S::ambient_occlusion, "ambient_occlusion"}});
}

// Unity's Standard shader: _AlbedoTransparency (A opacity), _MetallicSmoothness (metallic grey in RGB, smoothness in
// A), an OpenGL normal map. Smoothness is glossiness; --gloss-to-roughness stores it as roughness = 1 - smoothness.
TEST(EngineConventions, UnityMetallicSmoothness) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"Crate_AlbedoTransparency.png", 4},
                                        {"Crate_MetallicSmoothness.png", 4, {0, 0, 0, 3}},
                                        {"Crate_Normal.png", 3}};
    write_layout(dir, files);
    const std::vector<Landing> common = {{"Crate_AlbedoTransparency.png", 0, S::albedo, "albedo.r"},
                                         {"Crate_AlbedoTransparency.png", 1, S::albedo, "albedo.g"},
                                         {"Crate_AlbedoTransparency.png", 2, S::albedo, "albedo.b"},
                                         {"Crate_AlbedoTransparency.png", 3, S::opacity, "opacity"},
                                         {"Crate_MetallicSmoothness.png", 0, S::metalness, "metalness"},
                                         {"Crate_MetallicSmoothness.png", 1, S::metalness, "metalness"},
                                         {"Crate_MetallicSmoothness.png", 2, S::metalness, "metalness"},
                                         {"Crate_Normal.png", 0, S::normal, "normal.x"},
                                         {"Crate_Normal.png", 1, S::normal, "normal.y"},
                                         {"Crate_Normal.png", 2, S::normal, nullptr}};
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    std::vector<Landing> gloss = common;
    gloss.push_back({"Crate_MetallicSmoothness.png", 3, S::glossiness, "glossiness"});
    expect_landings(*m, files, gloss);
    EXPECT_EQ(test::texture_of(*m, "Crate_Normal.png").normal_convention, NormalConvention::opengl);

    MaterialLoadOptions to_roughness = xy_normals();
    to_roughness.gloss_to_roughness = true;
    m = load_material(dir.path(), to_roughness);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    std::vector<Landing> rough = common;
    rough.push_back({"Crate_MetallicSmoothness.png", 3, S::glossiness, "roughness", true});
    expect_landings(*m, files, rough);
}

// Unity HDRP's mask map: R metallic, G occlusion, B detail mask, A smoothness.
TEST(EngineConventions, UnityHdrpMaskMap) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"Rock_BaseColor.png", 3}, {"Rock_MaskMap.png", 4}, {"Rock_Normal.png", 3}};
    write_layout(dir, files);
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"Rock_BaseColor.png", 0, S::albedo, "albedo.r"},
                     {"Rock_BaseColor.png", 1, S::albedo, "albedo.g"},
                     {"Rock_BaseColor.png", 2, S::albedo, "albedo.b"},
                     {"Rock_MaskMap.png", 0, S::metalness, "metalness"},
                     {"Rock_MaskMap.png", 1, S::ambient_occlusion, "ambient_occlusion"},
                     {"Rock_MaskMap.png", 2, S::other, "other"},
                     {"Rock_MaskMap.png", 3, S::glossiness, "glossiness"},
                     {"Rock_Normal.png", 0, S::normal, "normal.x"},
                     {"Rock_Normal.png", 1, S::normal, "normal.y"},
                     {"Rock_Normal.png", 2, S::normal, nullptr}});
}

// Substance Painter's export presets: BaseColor, Normal_OpenGL, OcclusionRoughnessMetallic, Height, Emissive.
TEST(EngineConventions, SubstancePainterExport) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"Mat_BaseColor.png", 3},
                                        {"Mat_Emissive.png", 3},
                                        {"Mat_Height.png", 1},
                                        {"Mat_Normal_OpenGL.png", 3},
                                        {"Mat_OcclusionRoughnessMetallic.png", 3}};
    write_layout(dir, files);
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"Mat_BaseColor.png", 0, S::albedo, "albedo.r"},
                     {"Mat_BaseColor.png", 1, S::albedo, "albedo.g"},
                     {"Mat_BaseColor.png", 2, S::albedo, "albedo.b"},
                     {"Mat_Emissive.png", 0, S::emissive, "emissive.r"},
                     {"Mat_Emissive.png", 1, S::emissive, "emissive.g"},
                     {"Mat_Emissive.png", 2, S::emissive, "emissive.b"},
                     {"Mat_Height.png", 0, S::height, "height"},
                     {"Mat_Normal_OpenGL.png", 0, S::normal, "normal.x"},
                     {"Mat_Normal_OpenGL.png", 1, S::normal, "normal.y"},
                     {"Mat_Normal_OpenGL.png", 2, S::normal, nullptr},
                     {"Mat_OcclusionRoughnessMetallic.png", 0, S::ambient_occlusion, "ambient_occlusion"},
                     {"Mat_OcclusionRoughnessMetallic.png", 1, S::roughness, "roughness"},
                     {"Mat_OcclusionRoughnessMetallic.png", 2, S::metalness, "metalness"}});
    EXPECT_TRUE(m->warnings.empty());
}

// A Megascans download: cavity, bump and translucency are kept as channels of semantic other (named after their file
// where "other" is taken); a gloss map next to the roughness map is the same quantity twice, kept with a warning.
TEST(EngineConventions, QuixelMegascans) {
    test::TempDir dir;
    const std::vector<MapFile> files = {
        {"rock_4K_Albedo.png", 3},      {"rock_4K_AO.png", 1},           {"rock_4K_Bump.png", 1},
        {"rock_4K_Cavity.png", 1},      {"rock_4K_Displacement.png", 1}, {"rock_4K_Gloss.png", 1},
        {"rock_4K_Normal_LOD0.png", 3}, {"rock_4K_Roughness.png", 1},    {"rock_4K_Specular.png", 3, {0, 0, 0}},
        {"rock_4K_Translucency.png", 1}};
    write_layout(dir, files);
    auto m = load_material(dir.path(), xy_normals());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"rock_4K_Albedo.png", 0, S::albedo, "albedo.r"},
                     {"rock_4K_Albedo.png", 1, S::albedo, "albedo.g"},
                     {"rock_4K_Albedo.png", 2, S::albedo, "albedo.b"},
                     {"rock_4K_AO.png", 0, S::ambient_occlusion, "ambient_occlusion"},
                     {"rock_4K_Bump.png", 0, S::other, "other"},
                     {"rock_4K_Cavity.png", 0, S::other, "rock_4K_Cavity.other"},
                     {"rock_4K_Displacement.png", 0, S::height, "height"},
                     {"rock_4K_Gloss.png", 0, S::glossiness, "glossiness"},
                     {"rock_4K_Normal_LOD0.png", 0, S::normal, "normal.x"},
                     {"rock_4K_Normal_LOD0.png", 1, S::normal, "normal.y"},
                     {"rock_4K_Normal_LOD0.png", 2, S::normal, nullptr},
                     {"rock_4K_Roughness.png", 0, S::roughness, "roughness"},
                     {"rock_4K_Specular.png", 0, S::specular, "specular"},
                     {"rock_4K_Specular.png", 1, S::specular, "specular"},
                     {"rock_4K_Specular.png", 2, S::specular, "specular"},
                     {"rock_4K_Translucency.png", 0, S::other, "rock_4K_Translucency.other"}});
    ASSERT_EQ(m->warnings.size(), 1u);
    EXPECT_EQ(m->warnings[0],
              "roughness is in rock_4K_Gloss.png (as glossiness, 1 - roughness) and "
              "rock_4K_Roughness.png; each is kept and costs its own pack channels");
}

// A separate map next to a packed map holding the same semantic (_AO next to _ORM): nothing is dropped and nothing
// is packed twice silently: both are kept, each in its own pack channel, with a warning naming both files.
TEST(EngineConventions, SemanticInTwoFilesIsKeptTwiceWithAWarning) {
    test::TempDir dir;
    const std::vector<MapFile> files = {{"T_Crate_AO.png", 1}, {"T_Crate_ORM.png", 3}};
    write_layout(dir, files);
    auto m = load_material(dir.path());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    expect_landings(*m, files,
                    {{"T_Crate_AO.png", 0, S::ambient_occlusion, "ambient_occlusion"},
                     {"T_Crate_ORM.png", 0, S::ambient_occlusion, "T_Crate_ORM.ambient_occlusion"},
                     {"T_Crate_ORM.png", 1, S::roughness, "roughness"},
                     {"T_Crate_ORM.png", 2, S::metalness, "metalness"}});
    ASSERT_EQ(m->warnings.size(), 1u);
    EXPECT_EQ(m->warnings[0],
              "ambient_occlusion is in T_Crate_AO.png and T_Crate_ORM.png; each is kept and costs "
              "its own pack channels");
}

}  // namespace
}  // namespace nmc
