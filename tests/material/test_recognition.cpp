// File-name recognition: every file of the 11 shared material sets (expected table written by hand from
// shared/materials/SOURCES.md), the naming variants the conventions promise (engine suffixes and Unity, Substance
// and Megascans names included), metal009's DirectX normal declared by a manifest, and the images left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "material/file_naming.h"
#include "test_support.h"

namespace nmc {
namespace {

// "albedo", "normal:opengl", "orm" (R AO, G roughness, B metalness), ...
std::string describe(const std::optional<NameMatch>& m) {
    if (!m) return "none";
    if (m->packed()) {
        std::string s = "packed";
        for (Semantic c : m->packed_channels) s += std::string(":") + to_string(c);
        return s;
    }
    std::string s = to_string(m->semantic);
    if (m->semantic == Semantic::normal) s += std::string(":") + to_string(m->convention.value_or(NormalConvention::opengl));
    return s;
}

const char* kOrm = "packed:ambient_occlusion:roughness:metalness";

TEST(Recognition, EveryFileOfTheSharedSets) {
    // set -> file -> expected. Normal maps default to OpenGL; metal009's DirectX normal needs a manifest
    // (see MetalNormalIsDirectXThroughAManifest): its name carries no hint.
    const std::map<std::string, std::map<std::string, std::string>> expected = {
        {"ambientcg_metal009_2k",
         {{"Metal009_2K_Color.jpg", "albedo"}, {"Metal009_2K_Displacement.jpg", "height"},
          {"Metal009_2K_Metalness.jpg", "metalness"}, {"Metal009_2K_Normal.jpg", "normal:opengl"},
          {"Metal009_2K_Roughness.jpg", "roughness"}}},
        {"chess_chessboard_2k",
         {{"chessboard_base_color.jpg", "albedo"}, {"chessboard_metallic.jpg", "metalness"},
          {"chessboard_normal.jpg", "normal:opengl"}, {"chessboard_roughness.jpg", "roughness"}}},
        {"chess_king_black_2k",
         {{"king_black_base_color.jpg", "albedo"}, {"king_black_normal.jpg", "normal:opengl"},
          {"king_black_roughness.jpg", "roughness"}, {"king_shared_metallic.jpg", "metalness"}}},
        {"gltf_flighthelmet_leather_512",
         {{"FlightHelmet_Materials_LeatherPartsMat_BaseColor.png", "albedo"},
          {"FlightHelmet_Materials_LeatherPartsMat_Normal.png", "normal:opengl"},
          {"FlightHelmet_Materials_LeatherPartsMat_OcclusionRoughMetal.png", kOrm}}},
        {"gltf_waterbottle_2k",
         {{"WaterBottle_baseColor.png", "albedo"}, {"WaterBottle_emissive.png", "emissive"},
          {"WaterBottle_normal.png", "normal:opengl"}, {"WaterBottle_occlusionRoughnessMetallic.png", kOrm}}},
        {"polyhaven_beige_wall_001_2k",
         {{"beige_wall_001_arm_2k.jpg", kOrm}, {"beige_wall_001_diff_2k.jpg", "albedo"},
          {"beige_wall_001_disp_2k.jpg", "height"}, {"beige_wall_001_nor_gl_2k.jpg", "normal:opengl"},
          {"beige_wall_001_rough_2k.jpg", "roughness"}}},
        {"polyhaven_concrete_brick_wall_001_2k",
         {{"concrete_brick_wall_001_arm_2k.jpg", kOrm}, {"concrete_brick_wall_001_diffuse_2k.jpg", "albedo"},
          {"concrete_brick_wall_001_disp_2k.jpg", "height"}, {"concrete_brick_wall_001_nor_gl_2k.jpg", "normal:opengl"},
          {"concrete_brick_wall_001_rough_2k.jpg", "roughness"}}},
        {"polyhaven_factory_wall_1k",
         {{"factory_wall_diff_1k.jpg", "albedo"}, {"factory_wall_nor_gl_1k.jpg", "normal:opengl"},
          {"factory_wall_rough_1k.jpg", "roughness"}}},
        {"polyhaven_metal_plate_02_1k",
         {{"metal_plate_02_diff_1k.jpg", "albedo"}, {"metal_plate_02_nor_gl_1k.jpg", "normal:opengl"},
          {"metal_plate_02_rough_1k.jpg", "roughness"}}},
        {"polyhaven_painted_wooden_cabinet_1k",
         {{"painted_wooden_cabinet_arm_1k.jpg", kOrm}, {"painted_wooden_cabinet_diff_1k.jpg", "albedo"},
          {"painted_wooden_cabinet_nor_gl_1k.jpg", "normal:opengl"}}},
        {"polyhaven_rusty_metal_05_1k",
         {{"rusty_metal_05_diff_1k.jpg", "albedo"}, {"rusty_metal_05_nor_gl_1k.jpg", "normal:opengl"},
          {"rusty_metal_05_rough_1k.jpg", "roughness"}}},
    };
    const std::filesystem::path root = std::filesystem::path(NMC_SHARED_DIR) / "materials";
    ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
    int sets = 0, files = 0;
    for (const auto& dir : std::filesystem::directory_iterator(root)) {
        if (!dir.is_directory()) continue;
        const std::string set = dir.path().filename().string();
        ASSERT_TRUE(expected.count(set)) << "no expected table for " << set;
        ++sets;
        size_t seen = 0;
        for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
            const std::string name = f.path().filename().string();
            const auto& table = expected.at(set);
            ASSERT_TRUE(table.count(name)) << set << "/" << name << " is not in the expected table";
            EXPECT_EQ(describe(match_file_name(name)), table.at(name)) << set << "/" << name;
            ++seen;
            ++files;
        }
        EXPECT_EQ(seen, expected.at(set).size()) << set;
    }
    EXPECT_EQ(sets, 11);
    EXPECT_EQ(files, 42);
}

TEST(Recognition, NamingVariants) {
    const std::map<std::string, std::string> cases = {
        {"wood_BaseColor.png", "albedo"},        {"wood base colour.png", "albedo"},
        {"WOOD-ALBEDO.TGA", "albedo"},           {"wood.col.jpg", "albedo"},
        {"wood_Diffuse.png", "albedo"},          {"wood_NormalGL.png", "normal:opengl"},
        {"wood_NormalDX.png", "normal:directx"}, {"wood_nor_dx_2k.exr", "normal:directx"},
        {"wood_nrm.png", "normal:opengl"},       {"wood_Normal-DX.png", "normal:directx"},
        {"wood_rough.png", "roughness"},         {"wood_Metallic.png", "metalness"},
        {"wood_metal.png", "metalness"},         {"wood_AmbientOcclusion.png", "ambient_occlusion"},
        {"wood_ambient_occlusion.png", "ambient_occlusion"}, {"wood_AO.png", "ambient_occlusion"},
        {"wood_occlusion.png", "ambient_occlusion"}, {"wood_Height.png", "height"},
        {"wood_Displacement.exr", "height"},     {"wood_disp.png", "height"},
        {"leaf_Opacity.png", "opacity"},         {"leaf_alpha.png", "opacity"},
        {"leaf_mask.png", "opacity"},            {"lamp_Emission.png", "emissive"},
        {"lamp_emissive.png", "emissive"},       {"wood_Specular.png", "specular"},
        {"wood_Glossiness.png", "glossiness"},   {"wood_gloss.png", "glossiness"},
        {"wood_ORM.png", kOrm},                  {"wood_occlusionRoughnessMetallic.png", kOrm},
        {"wood_RMA.png", "packed:roughness:metalness:ambient_occlusion"},
        {"wood_MRAO.png", "packed:metalness:roughness:ambient_occlusion"},
        {"rusty_metal_diff_1k.png", "albedo"},   // the rightmost word wins over the material's name
        {"readme.png", "none"},                  {"Metal009_2K.jpg", "none"},
    };
    for (const auto& [name, want] : cases) EXPECT_EQ(describe(match_file_name(name)), want) << name;
}

// Unreal's short suffixes count only as the whole last part of a name of several parts: the suffix beats a map word
// in the material's name (T_Metal_Plate_D is albedo), and full words keep their meaning.
TEST(Recognition, EngineSuffixesOnlyAsTheLastPart) {
    const std::map<std::string, std::string> cases = {
        {"T_Crate_D.png", "albedo"},            {"T_Crate_BC.png", "albedo"},
        {"T_Crate_N.png", "normal:directx"},    {"T_Crate_R.png", "roughness"},
        {"T_Crate_M.png", "metalness"},         {"T_Crate_AO.png", "ambient_occlusion"},
        {"T_Crate_H.png", "height"},            {"T_Crate_E.png", "emissive"},
        {"t_crate_d.tga", "albedo"},            {"T_Metal_Plate_D.png", "albedo"},
        {"T_Crate_ORM.png", kOrm},              {"T_Crate_MRA.png", "packed:metalness:roughness:ambient_occlusion"},
        {"T_Crate_Diffuse.png", "albedo"},      {"T_Crate_Normal.png", "normal:opengl"},
        {"T_Crate_Roughness.png", "roughness"}, {"T_Crate_Metallic.png", "metalness"},
        {"T_Crate_Height.png", "height"},       {"T_Crate_Emissive.png", "emissive"},
        {"D.png", "none"},                      {"T_Crate_D_2K.png", "none"},
        {"T_CrateD.png", "none"},               {"N_Crate.png", "none"},
        {"Rock_R2.png", "none"},                {"T_Crate_Dirt.png", "none"},
    };
    for (const auto& [name, want] : cases) EXPECT_EQ(describe(match_file_name(name)), want) << name;
}

// Unity, Substance Painter and Megascans names.
TEST(Recognition, UnitySubstanceAndMegascansNames) {
    const std::map<std::string, std::string> cases = {
        {"Crate_MetallicSmoothness.png", "packed:metalness:metalness:metalness:glossiness"},
        {"Crate_MaskMap.png", "packed:metalness:ambient_occlusion:other:glossiness"},
        {"Crate_SpecularSmoothness.png", "packed:specular:specular:specular:glossiness"},
        {"Crate_Smoothness.png", "glossiness"},
        {"Crate_AlbedoTransparency.png", "albedo"},
        {"Mat_BaseColor.png", "albedo"},
        {"Mat_Normal_OpenGL.png", "normal:opengl"},
        {"Mat_Normal_DirectX.png", "normal:directx"},
        {"Mat_OcclusionRoughnessMetallic.png", kOrm},
        {"Mat_Mixed_AO.png", "ambient_occlusion"},
        {"Mat_Height.png", "height"},
        {"Mat_Emissive.png", "emissive"},
        {"rock_4K_Albedo.jpg", "albedo"},
        {"rock_4K_Normal_LOD0.jpg", "normal:opengl"},
        {"rock_4K_NormalBump.jpg", "normal:opengl"},
        {"rock_4K_Displacement.exr", "height"},
        {"rock_4K_Cavity.jpg", "other"},
        {"rock_4K_Gloss.jpg", "glossiness"},
        {"rock_4K_Specular.jpg", "specular"},
        {"rock_4K_Translucency.jpg", "other"},
        {"rock_4K_Bump.jpg", "other"},
    };
    for (const auto& [name, want] : cases) EXPECT_EQ(describe(match_file_name(name)), want) << name;
}

// metal009's Normal.jpg is DirectX (SOURCES.md) but its name says nothing: a manifest declares it. The files
// here are small stand-ins under metal009's names, so only naming and the manifest are exercised.
TEST(Recognition, MetalNormalIsDirectXThroughAManifest) {
    test::TempDir dir;
    const auto grey = [](int x, int y, int) { return test::code(x, y, 0); };
    for (const char* name : {"Metal009_2K_Color.jpg", "Metal009_2K_Roughness.jpg"})
        ASSERT_TRUE(write_image(dir.file(name), test::make_image(4, 4, 3, test::code), "jpeg", false).ok());
    ASSERT_TRUE(write_image(dir.file("Metal009_2K_Normal.jpg"),
                            test::make_image(4, 4, 3, [](int x, int, int c) { return c == 2 ? 1.0f : x / 4.0f; }),
                            "jpeg", false)
                    .ok());
    test::write_png(dir.file("Metal009_2K_Displacement.png"), test::make_image(4, 4, 1, grey));
    test::write_text(dir.file("metal009.json"), R"({"guess_unlisted": true, "textures": [
        {"file": "Metal009_2K_Normal.jpg", "semantic": "normal", "normal_convention": "directx"}]})");
    MaterialLoadOptions xy;  // the convention matters where the pack holds the vector: xy (and xyz)
    xy.normal_mode = NormalModeChoice::xy;
    auto scan = scan_material(dir.file("metal009.json"), xy);
    ASSERT_TRUE(scan.ok()) << scan.status().to_string();
    bool found = false;
    for (const auto& t : scan->textures) {
        if (t.file_name != "Metal009_2K_Normal.jpg") continue;
        found = true;
        EXPECT_EQ(t.normal_convention, NormalConvention::directx);
        EXPECT_EQ(t.normal_mode, NormalMode::xy);
        EXPECT_FALSE(t.channels[0].invert);
        EXPECT_TRUE(t.channels[1].invert);
        EXPECT_EQ(t.channels[2].kind, ChannelSource::Kind::normal_z);
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(scan->textures.size(), 4u);
    ASSERT_EQ(scan->ignored_files.size(), 1u);
    EXPECT_EQ(scan->ignored_files[0].reason, "the manifest");
}

TEST(Recognition, UnmatchedFilesAreListedWithAReason) {
    test::TempDir dir;
    test::write_png(dir.file("brick_diff.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("preview.png"), test::make_image(2, 2, 3, test::code));
    test::write_text(dir.file("notes.txt"), "hello");
    auto scan = scan_material(dir.path());
    ASSERT_TRUE(scan.ok()) << scan.status().to_string();
    ASSERT_EQ(scan->ignored_files.size(), 2u);
    EXPECT_EQ(scan->ignored_files[0].file, "notes.txt");
    EXPECT_EQ(scan->ignored_files[0].reason, "not an image file");
    EXPECT_EQ(scan->ignored_files[1].file, "preview.png");
    EXPECT_NE(scan->ignored_files[1].reason.find("matches no map convention"), std::string::npos);
}

// Every image file of the folder that is not packed is a warning naming it and why, and under strict an error naming
// them all; hidden files and files that are no images are only listed.
TEST(Recognition, ImagesLeftOutAreWarningsAndUnderStrictAnError) {
    test::TempDir dir;
    test::write_png(dir.file("T_Rock_D.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("T_Rock_N.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file("T_Rock_Preview.png"), test::make_image(2, 2, 3, test::code));
    test::write_png(dir.file(".T_Rock_D.png"), test::make_image(2, 2, 3, test::code));
    test::write_text(dir.file("readme.txt"), "hello");
    auto scan = scan_material(dir.path());
    ASSERT_TRUE(scan.ok()) << scan.status().to_string();
    EXPECT_EQ(scan->textures.size(), 2u);
    ASSERT_EQ(scan->ignored_files.size(), 3u);
    EXPECT_EQ(scan->ignored_files[0].file, ".T_Rock_D.png");
    EXPECT_FALSE(scan->ignored_files[0].image);
    EXPECT_EQ(scan->ignored_files[1].file, "T_Rock_Preview.png");
    EXPECT_TRUE(scan->ignored_files[1].image);
    EXPECT_EQ(scan->ignored_files[2].file, "readme.txt");
    EXPECT_FALSE(scan->ignored_files[2].image);
    ASSERT_EQ(scan->warnings.size(), 1u);
    EXPECT_EQ(scan->warnings[0], "T_Rock_Preview.png is not packed: file name matches no map convention (list it in "
                                 "a manifest to use it)");

    MaterialLoadOptions strict;
    strict.strict = true;
    auto refused = load_material(dir.path(), strict);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(refused.status().message(), dir.path() + ": images left out of the pack: T_Rock_Preview.png (file name "
                                                       "matches no map convention (list it in a manifest to use it))");

    // A DirectX copy of an OpenGL normal map is an image left out too.
    test::TempDir copies;
    const Image n = test::make_image(2, 2, 3, [](int, int, int c) { return c == 2 ? 1.0f : 0.5f; });
    test::write_png(copies.file("wall_nor_gl.png"), n);
    test::write_png(copies.file("wall_nor_dx.png"), n);
    refused = load_material(copies.path(), strict);
    ASSERT_FALSE(refused.ok());
    const std::string copy = "wall_nor_dx.png (DirectX copy of the OpenGL normal map wall_nor_gl.png)";
    EXPECT_NE(refused.status().message().find(copy), std::string::npos) << refused.status().message();
}

TEST(Recognition, OpenGlNormalPreferredOverItsDirectXCopy) {
    test::TempDir dir;
    const Image n = test::make_image(2, 2, 3, [](int, int, int c) { return c == 2 ? 1.0f : 0.5f; });
    test::write_png(dir.file("wall_nor_gl.png"), n);
    test::write_png(dir.file("wall_nor_dx.png"), n);
    auto scan = scan_material(dir.path());
    ASSERT_TRUE(scan.ok()) << scan.status().to_string();
    ASSERT_EQ(scan->textures.size(), 1u);
    EXPECT_EQ(scan->textures[0].file_name, "wall_nor_gl.png");
    ASSERT_EQ(scan->ignored_files.size(), 1u);
    EXPECT_EQ(scan->ignored_files[0].file, "wall_nor_dx.png");
}

}  // namespace
}  // namespace nmc
