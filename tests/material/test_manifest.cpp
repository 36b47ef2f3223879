// Manifest parsing: a complete manifest, every kind of mistake (each an invalid_argument naming the manifest
// and the key), the write-parse round trip, and a manifest replacing or overriding recognition.
#include <gtest/gtest.h>

#include "test_support.h"

namespace nmc {
namespace {

TEST(Manifest, ParsesEveryKey) {
    auto m = parse_manifest(R"({
        "name": "brick", "folder": "maps", "guess_unlisted": true,
        "textures": [
          {"file": "a.png", "name": "base", "semantic": "albedo", "color_space": "linear", "loss_weight": 2},
          {"file": "b.png", "channels": ["ambient_occlusion", "roughness", "metalness"], "loss_weight": [1, 2, 0.5]},
          {"file": "n.png", "semantic": "normal", "normal_convention": "directx"}]})",
                            "m.json");
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->name, "brick");
    EXPECT_EQ(m->folder, "maps");
    EXPECT_TRUE(m->guess_unlisted);
    ASSERT_EQ(m->textures.size(), 3u);
    EXPECT_EQ(m->textures[0].name, "base");
    EXPECT_EQ(m->textures[0].semantic, Semantic::albedo);
    EXPECT_EQ(m->textures[0].color_space, ColorSpace::linear);
    EXPECT_EQ(m->textures[0].loss_weights, std::vector<float>{2.0f});
    EXPECT_EQ(m->textures[1].channels,
              (std::vector<Semantic>{Semantic::ambient_occlusion, Semantic::roughness, Semantic::metalness}));
    EXPECT_EQ(m->textures[1].loss_weights, (std::vector<float>{1.0f, 2.0f, 0.5f}));
    EXPECT_EQ(m->textures[2].normal_convention, NormalConvention::directx);

    auto again = parse_manifest(manifest_to_json(*m), "again.json");
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(manifest_to_json(*again), manifest_to_json(*m));
}

TEST(Manifest, EachMistakeNamesTheManifestAndTheKey) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"textures": [], "nmae": "x"})", "nmae: unknown key"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "colour_space": "srgb"}]})",
         "textures[0].colour_space: unknown key"},
        {R"({"name": 3, "textures": []})", "name: expected a string, got number"},
        {R"({"textures": {}})", "textures: expected an array, got object"},
        {R"({"name": "x"})", "textures: missing"},
        {R"({"guess_unlisted": "yes", "textures": []})", "guess_unlisted: expected a boolean, got string"},
        {R"({"textures": [{"semantic": "albedo"}]})", "textures[0].file: missing"},
        {R"({"textures": [{"file": "../a.png", "semantic": "albedo"}]})", "textures[0].file: '../a.png'"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedoo"}]})", "textures[0].semantic: unknown semantic 'albedoo'"},
        {R"({"textures": [{"file": "a.png"}]})", "textures[0]: give exactly one of"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "channels": ["albedo"]}]})",
         "textures[0]: give exactly one of"},
        {R"({"textures": [{"file": "a.png", "channels": "albedo"}]})", "textures[0].channels: expected an array"},
        {R"({"textures": [{"file": "a.png", "channels": ["roughness", 4]}]})",
         "textures[0].channels[1]: expected a semantic string, got number"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "color_space": "rec709"}]})",
         "textures[0].color_space: expected srgb or linear"},
        {R"({"textures": [{"file": "a.png", "semantic": "normal", "normal_convention": "up"}]})",
         "textures[0].normal_convention: expected opengl or directx"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "loss_weight": "2"}]})",
         "textures[0].loss_weight: expected a number or an array"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "loss_weight": [1, -1]}]})",
         "textures[0].loss_weight: weights must be finite and > 0"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo"}, {"file": "a.png", "semantic": "height"}]})",
         "textures[1].file: 'a.png' is listed twice"},
        {R"([1, 2])", "(top level): expected an object"},
        {R"({"textures": [)", "not valid JSON"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "loss_weight": 1e400}]})",
         "not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'"},
        // Finite as a double, not as the trainer's float (manifest_fuzzer found the first: it did not write back).
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "loss_weight": 1e40}]})",
         "textures[0].loss_weight: weights must be finite and > 0 as 32-bit floats"},
        {R"({"textures": [{"file": "a.png", "semantic": "albedo", "loss_weight": 1e-50}]})",
         "textures[0].loss_weight: weights must be finite and > 0 as 32-bit floats"},
    };
    for (const auto& [text, want] : cases) {
        auto m = parse_manifest(text, "bad.json");
        ASSERT_FALSE(m.ok()) << text;
        EXPECT_EQ(m.status().code(), StatusCode::invalid_argument) << text;
        EXPECT_EQ(m.status().message().rfind("bad.json: ", 0), 0u) << m.status().message();
        EXPECT_NE(m.status().message().find(want), std::string::npos) << m.status().message();
    }
}

TEST(Manifest, ReplacesGuessingUnlessAskedToGuessTheRest) {
    test::TempDir dir;
    test::write_png(dir.file("tex_a.png"), test::make_image(4, 4, 1, test::code));
    test::write_png(dir.file("brick_rough.png"), test::make_image(4, 4, 1, test::code));
    test::write_text(dir.file("only.json"), R"({"name": "brick", "textures": [{"file": "tex_a.png", "semantic": "height"}]})");
    auto only = scan_material(dir.file("only.json"));
    ASSERT_TRUE(only.ok()) << only.status().to_string();
    EXPECT_EQ(only->name, "brick");
    ASSERT_EQ(only->textures.size(), 1u);
    EXPECT_EQ(only->textures[0].channels[0].semantic, Semantic::height);
    EXPECT_EQ(only->files[0].reason, "manifest");
    ASSERT_EQ(only->ignored_files.size(), 2u);
    EXPECT_EQ(only->ignored_files[0].file, "brick_rough.png");
    EXPECT_EQ(only->ignored_files[0].reason, "not listed in the manifest");
    EXPECT_TRUE(only->ignored_files[0].image);  // an image left out: a warning
    EXPECT_EQ(only->ignored_files[1].reason, "the manifest");
    EXPECT_FALSE(only->ignored_files[1].image);
    EXPECT_EQ(only->warnings, std::vector<std::string>{"brick_rough.png is not packed: not listed in the manifest"});

    test::write_text(dir.file("more.json"),
                     R"({"guess_unlisted": true, "textures": [{"file": "tex_a.png", "semantic": "height"}]})");
    auto more = scan_material(dir.file("more.json"));
    ASSERT_TRUE(more.ok()) << more.status().to_string();
    EXPECT_EQ(more->textures.size(), 2u);
}

TEST(Manifest, ChannelCountMustMatchTheFile) {
    test::TempDir dir;
    test::write_png(dir.file("x.png"), test::make_image(4, 4, 3, test::code));
    test::write_text(dir.file("m.json"), R"({"textures": [{"file": "x.png", "channels": ["roughness", "metalness"]}]})");
    auto scan = scan_material(dir.file("m.json"));
    ASSERT_FALSE(scan.ok());
    EXPECT_EQ(scan.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(scan.status().message().find("x.png: \"channels\" lists 2 semantics, the file has 3"), std::string::npos)
        << scan.status().message();
}

TEST(Manifest, InferredManifestReproducesTheScan) {
    test::TempDir dir;
    test::write_png(dir.file("w_diff.png"), test::make_image(4, 4, 3, test::code));
    test::write_png(dir.file("w_arm.png"), test::make_image(4, 4, 3, test::code));
    test::write_png(dir.file("w_nor_dx.png"),
                    test::make_image(4, 4, 3, [](int x, int y, int c) { return c == 2 ? 1.0f : (x + y + c) / 8.0f; }));
    auto first = scan_material(dir.path());
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    test::write_text(dir.file("inferred.json"), manifest_to_json(first->manifest));
    auto second = scan_material(dir.file("inferred.json"));
    ASSERT_TRUE(second.ok()) << second.status().to_string();
    ASSERT_EQ(second->textures.size(), first->textures.size());
    for (size_t i = 0; i < first->textures.size(); ++i) {
        EXPECT_EQ(second->textures[i].file_name, first->textures[i].file_name);
        EXPECT_EQ(second->textures[i].semantic_label(), first->textures[i].semantic_label());
        EXPECT_EQ(second->textures[i].color_space, first->textures[i].color_space);
        EXPECT_EQ(second->textures[i].normal_convention, first->textures[i].normal_convention);
    }
    EXPECT_EQ(second->channels.size(), first->channels.size());
}

}  // namespace
}  // namespace nmc
