// The file-name conventions of PBR texture sets (Poly Haven, ambientCG, glTF exports, Substance, Quixel
// Megascans, Unreal and Unity projects), as a keyword table matched against the words of a file name.
#include "material/file_naming.h"

#include <cctype>

namespace nmc {
namespace {

struct Keyword {
    const char* word;  // lower case, no separators
    Semantic semantic;
    std::vector<Semantic> packed;  // R, G, B (and A where the convention names it) for packed maps
    std::optional<NormalConvention> convention;
    // A short engine suffix ("d", "n", "r"): a map word only as the last part of the name, after at least one other
    // part ("T_Crate_D.png"), so that words such as "Diffuse", "Normal" or a material called "R2" stay untouched.
    bool last_part_only = false;
};

const std::vector<Keyword>& keywords() {
    using S = Semantic;
    const std::vector<S> orm = {S::ambient_occlusion, S::roughness, S::metalness};
    const std::vector<S> mra = {S::metalness, S::roughness, S::ambient_occlusion};
    const auto suffix = [](const char* word, Semantic s, std::optional<NormalConvention> convention = {}) {
        return Keyword{word, s, {}, convention, true};
    };
    static const std::vector<Keyword> table = {
        {"basecolor", S::albedo, {}, {}},   {"basecolour", S::albedo, {}, {}}, {"albedo", S::albedo, {}, {}},
        {"diffuse", S::albedo, {}, {}},     {"diff", S::albedo, {}, {}},       {"color", S::albedo, {}, {}},
        {"colour", S::albedo, {}, {}},      {"col", S::albedo, {}, {}},
        {"normal", S::normal, {}, {}},      {"normals", S::normal, {}, {}},    {"nor", S::normal, {}, {}},
        {"nrm", S::normal, {}, {}},         {"norm", S::normal, {}, {}},
        {"normalgl", S::normal, {}, NormalConvention::opengl},
        {"normaldx", S::normal, {}, NormalConvention::directx},
        // Megascans: a normal map with the bump map's detail in it (not "bump", whose word comes last).
        {"normalbump", S::normal, {}, {}},
        {"roughness", S::roughness, {}, {}}, {"rough", S::roughness, {}, {}},
        {"metalness", S::metalness, {}, {}}, {"metallic", S::metalness, {}, {}}, {"metal", S::metalness, {}, {}},
        {"ambientocclusion", S::ambient_occlusion, {}, {}}, {"occlusion", S::ambient_occlusion, {}, {}},
        {"ao", S::ambient_occlusion, {}, {}},
        {"height", S::height, {}, {}},      {"displacement", S::height, {}, {}}, {"disp", S::height, {}, {}},
        {"opacity", S::opacity, {}, {}},    {"alpha", S::opacity, {}, {}},     {"mask", S::opacity, {}, {}},
        {"emissive", S::emissive, {}, {}},  {"emission", S::emissive, {}, {}},
        {"specular", S::specular, {}, {}},
        {"glossiness", S::glossiness, {}, {}}, {"gloss", S::glossiness, {}, {}}, {"smoothness", S::glossiness, {}, {}},
        // Maps without a semantic of their own (Megascans): kept as channels of semantic other.
        {"cavity", S::other, {}, {}},       {"bump", S::other, {}, {}},        {"translucency", S::other, {}, {}},
        // Unreal Engine suffixes (T_Crate_D.png); Unreal's normal maps are DirectX (-Y).
        suffix("d", S::albedo),             suffix("bc", S::albedo),
        suffix("n", S::normal, NormalConvention::directx),
        suffix("r", S::roughness),          suffix("m", S::metalness),          suffix("h", S::height),
        suffix("e", S::emissive),
        // Packed maps, R G B in the order of their names.
        {"orm", S::ambient_occlusion, orm, {}},
        {"arm", S::ambient_occlusion, orm, {}},
        {"occlusionroughnessmetallic", S::ambient_occlusion, orm, {}},
        {"occlusionroughmetal", S::ambient_occlusion, orm, {}},
        {"occlusionroughnessmetalness", S::ambient_occlusion, orm, {}},
        {"rma", S::roughness, {S::roughness, S::metalness, S::ambient_occlusion}, {}},
        {"mrao", S::metalness, mra, {}},
        {"mra", S::metalness, mra, {}},
        // glTF metallicRoughness: R unused, G roughness, B metalness.
        {"metallicroughness", S::other, {S::other, S::roughness, S::metalness}, {}},
        // Unity: the Standard shader's metallic map (R metallic, A smoothness; Unity ignores G and B, which exporters
        // fill with the metallic grey or zero, so they cost no pack channel), HDRP's mask map (R metallic, G
        // occlusion, B detail mask, A smoothness) and the specular setup's map (RGB specular, A smoothness).
        // Smoothness is glossiness: stored as roughness = 1 - smoothness with --gloss-to-roughness.
        {"metallicsmoothness", S::metalness, {S::metalness, S::metalness, S::metalness, S::glossiness}, {}},
        {"maskmap", S::metalness, {S::metalness, S::ambient_occlusion, S::other, S::glossiness}, {}},
        {"specularsmoothness", S::specular, {S::specular, S::specular, S::specular, S::glossiness}, {}},
    };
    return table;
}

std::optional<NormalConvention> convention_hint(const std::string& word) {
    if (word == "gl" || word == "opengl" || word == "ogl") return NormalConvention::opengl;
    if (word == "dx" || word == "directx") return NormalConvention::directx;
    return std::nullopt;
}

std::string lower(const std::string& s) {
    std::string out;
    for (unsigned char c : s) out += static_cast<char>(std::tolower(c));
    return out;
}

// Splits at separators; each part is followed by its lower-to-upper case pieces ("BaseColor" gives
// "basecolor", then "base", "color") so whole compound words are tried before their pieces.
struct Word {
    std::string text;
    int part;       // index of the separator-delimited part it came from
    bool compound;  // the whole part (not a camel-case piece)
};

std::vector<Word> split_words(const std::string& stem) {
    std::vector<std::string> parts;
    std::string current;
    for (char c : stem) {
        if (c == '_' || c == '-' || c == '.' || c == ' ') {
            if (!current.empty()) parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty()) parts.push_back(current);
    std::vector<Word> words;
    for (size_t p = 0; p < parts.size(); ++p) {
        const std::string& part = parts[p];
        words.push_back({lower(part), static_cast<int>(p), true});
        std::string piece;
        for (size_t i = 0; i < part.size(); ++i) {
            const bool boundary = i > 0 && std::isupper(static_cast<unsigned char>(part[i])) &&
                                  std::islower(static_cast<unsigned char>(part[i - 1]));
            if (boundary) {
                words.push_back({lower(piece), static_cast<int>(p), false});
                piece.clear();
            }
            piece += part[i];
        }
        if (piece.size() != part.size()) words.push_back({lower(piece), static_cast<int>(p), false});
    }
    return words;
}

// `suffix_position`: the word is the whole last part of a name of several parts, where engine suffixes count.
const Keyword* find_keyword(const std::string& word, bool suffix_position) {
    for (const auto& k : keywords())
        if (word == k.word && (!k.last_part_only || suffix_position)) return &k;
    return nullptr;
}

}  // namespace

std::optional<NameMatch> match_file_name(const std::string& file_name) {
    const size_t dot = file_name.rfind('.');
    const std::string stem = dot == std::string::npos ? file_name : file_name.substr(0, dot);
    const std::vector<Word> words = split_words(stem);

    // Rightmost part that holds a keyword; within a part, the whole word before its camel-case pieces, and
    // among pieces the rightmost ("LeatherPartsMat" has none, "OcclusionRoughMetal" matches whole).
    const int last = words.empty() ? -1 : words.back().part;
    for (int p = last; p >= 0; --p) {
        const Keyword* found = nullptr;
        std::string matched;
        for (const Word& w : words) {
            if (w.part != p) continue;
            const Keyword* k = find_keyword(w.text, p == last && p > 0 && w.compound);
            if (!k) continue;
            if (w.compound) {
                found = k;
                matched = w.text;
                break;
            }
            found = k;  // keep the rightmost piece
            matched = w.text;
        }
        if (!found) continue;
        NameMatch match;
        match.semantic = found->semantic;
        match.packed_channels = found->packed;
        match.convention = found->convention;
        match.keyword = matched;
        // "nor_gl", "normal-dx", "Normal DirectX": a convention word right after a normal keyword.
        if (match.semantic == Semantic::normal && !match.convention) {
            for (const Word& w : words) {
                if (w.part == p + 1 && w.compound) {
                    match.convention = convention_hint(w.text);
                    if (match.convention) match.keyword += "_" + w.text;
                }
            }
        }
        return match;
    }
    return std::nullopt;
}

}  // namespace nmc
