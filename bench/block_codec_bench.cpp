// Quality and speed of nmc's block encoders (texture/) on the shared materials, map by map, against the strong
// encoders of ../shared/baselines/classic-codecs-maps.csv: rgbcx for BC1/BC4/BC5, bc7e (slowest level, all
// modes) for BC7, the astcenc 4.2 tool (-thorough, -normal for normal maps) for ASTC. For every baseline row of
// those encoders it loads the map, encodes it with our encoder of the same format (ASTC: libastcenc at the
// baseline's settings), decodes it, and reports psnr8 over the format's channels as the baselines measure them (a
// normal map's X and Y for BC5 and ASTC, a grey map's one channel for ASTC, else the file's channels up to the
// format's) and encode speed (Mtexel/s, wall clock).
// With ASTCENC_TOOL, each ASTC map is also encoded by that astcenc tool here, from a PNG of the very texels the
// library got, so the two encoders' blocks (identical or not), psnr8 and speed compare on one machine and input.
// libastcenc keeps state from a process's first context (texture/astc.h), so give one ASTC block size per run.
// Usage: nmc_block_codec_bench BASELINES_CSV MATERIALS_DIR [threads (0: all cores)] [JSON_OUT or -]
//                              [CODEC (a baseline codec: bc7-bc7e, astc-6x6, ...; all if absent or "all")]
//                              [MATERIAL,MATERIAL,... (all if absent)] [ASTCENC_TOOL or -]
//                              [BC7 effort: fast (default, what nmc decompress uses) | thorough]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_exit_on_error.h"
#include "core/file_io.h"
#include "material/image_io.h"
#include "quality/quality_measurement.h"
#include "texture/astc.h"
#include "texture/block_image.h"

namespace {

using Clock = std::chrono::steady_clock;

// The baseline encoder of each of our formats.
const std::map<std::string, nmc::texture::BlockFormat> kBaselineCodecs = {
    {"bc1-rgbcx", nmc::texture::BlockFormat::bc1},
    {"bc4-rgbcx", nmc::texture::BlockFormat::bc4},
    {"bc5-rgbcx", nmc::texture::BlockFormat::bc5},
    {"bc7-bc7e", nmc::texture::BlockFormat::bc7},
    {"astc-4x4", nmc::texture::BlockFormat::astc_4x4},
    {"astc-6x6", nmc::texture::BlockFormat::astc_6x6},
    {"astc-8x8", nmc::texture::BlockFormat::astc_8x8},
    {"astc-12x12", nmc::texture::BlockFormat::astc_12x12},
};

// The astcenc tool's run on `texels` (written as an 8-bit RGBA PNG, so both encoders read the same texels):
// its blocks and wall-clock seconds.
struct ToolRun {
    std::vector<uint8_t> blocks;
    double seconds = 0;
};
ToolRun run_astcenc_tool(const std::string& tool, const nmc::texture::BlockChoice& choice,
                         const nmc::texture::Rgba8Image& texels, int threads) {
    nmc::Image image(texels.width, texels.height, 4);
    for (size_t i = 0; i < texels.texels.size(); ++i) image.pixels[i] = float(texels.texels[i]) / 255.0f;
    const std::string dir = "/tmp/nmc_block_codec_bench_" + std::to_string(::getpid());
    nmc::bench::exit_on_error(nmc::make_directories(dir), "creating the tool's folder");
    const std::string png = dir + "/in.png", astc = dir + "/out.astc";
    nmc::bench::exit_on_error(nmc::write_image(png, image, "png", true), "writing the tool's input");
    const std::string size = std::string(nmc::texture::to_string(choice.format)).substr(5);  // "6x6"
    const std::string command = "'" + tool + "' " + (choice.srgb ? "-cs" : "-cl") + " '" + png + "' '" + astc + "' " +
                                size + " -thorough" + (choice.normal_xy ? " -normal" : "") +
                                (threads > 0 ? " -j " + std::to_string(threads) : "") + " -silent";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    ToolRun run;
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s failed\n", command.c_str());
        std::exit(1);
    }
    auto file = nmc::read_file(astc, uint64_t(1) << 32);
    nmc::bench::exit_on_error(file.status(), "reading the tool's output");
    constexpr size_t kAstcFileHeader = 16;
    run.blocks.assign(file->begin() + kAstcFileHeader, file->end());
    std::remove(png.c_str());
    std::remove(astc.c_str());
    ::rmdir(dir.c_str());
    return run;
}

// The fields of one CSV line (the baselines have no quoted fields; a CRLF line end is dropped).
std::vector<std::string> split(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> fields;
    std::stringstream s(line);
    std::string f;
    while (std::getline(s, f, ',')) fields.push_back(f);
    return fields;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: %s BASELINES_CSV MATERIALS_DIR [threads] [JSON_OUT|-] [fast|thorough] [MATERIAL|FORMAT]\n",
                     argv[0]);
        return 2;
    }
    const std::string csv_path = argv[1], materials = argv[2];
    const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
    const std::string json_path = argc > 4 && std::string(argv[4]) != "-" ? argv[4] : "";
    const std::string only_codec = argc > 5 && std::string(argv[5]) != "all" ? argv[5] : "";
    const std::string only_materials = argc > 6 ? "," + std::string(argv[6]) + "," : "";
    const std::string astcenc_tool = argc > 7 && std::string(argv[7]) != "-" ? argv[7] : "";
    const std::string effort_name = argc > 8 ? argv[8] : "fast";
    if (effort_name != "fast" && effort_name != "thorough") {
        std::fprintf(stderr, "bc7 effort '%s': fast or thorough\n", effort_name.c_str());
        return 2;
    }
    const nmc::texture::Bc7Effort effort =
        effort_name == "fast" ? nmc::texture::Bc7Effort::fast : nmc::texture::Bc7Effort::thorough;
    std::ifstream csv(csv_path);
    if (!csv) {
        std::fprintf(stderr, "cannot read %s\n", csv_path.c_str());
        return 1;
    }
    std::string line;
    std::getline(csv, line);
    const std::vector<std::string> header = split(line);
    std::map<std::string, size_t> column;
    for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
    for (const char* name : {"material", "file", "kind", "codec", "psnr8_format_channels", "encode_s"})
        if (!column.count(name)) {
            std::fprintf(stderr, "%s: no column %s\n", csv_path.c_str(), name);
            return 1;
        }

    nlohmann::json rows = nlohmann::json::array();
    struct Sum {
        double delta = 0, texels = 0, seconds = 0;
        int count = 0;
    };
    std::map<std::string, Sum> sums;
    std::printf("%-36s %-44s %-10s %9s %9s %7s %8s %9s%s\n", "material", "file", "format", "psnr8", "baseline",
                "delta", "encode_s", "Mtexel/s", astcenc_tool.empty() ? "" : "   tool_psnr8  tool_s  identical");
    while (std::getline(csv, line)) {
        const std::vector<std::string> f = split(line);
        if (f.size() < header.size()) continue;
        const auto codec = kBaselineCodecs.find(f[column["codec"]]);
        if (codec == kBaselineCodecs.end()) continue;
        if (!only_codec.empty() && codec->first != only_codec) continue;
        if (!only_materials.empty() && only_materials.find("," + f[column["material"]] + ",") == std::string::npos)
            continue;
        const std::string baseline_text = f[column["psnr8_format_channels"]];
        const nmc::texture::BlockFormat format = codec->second;
        const std::string path = materials + "/" + f[column["material"]] + "/" + f[column["file"]];
        auto image = nmc::read_image(path);
        nmc::bench::exit_on_error(image.status(), ("reading " + path).c_str());
        const nmc::texture::Rgba8Image source = nmc::texture::to_rgba8(*image);
        const bool normal = f[column["kind"]] == "normal";
        const bool astc = nmc::texture::is_astc(format);
        const int channels = (format == nmc::texture::BlockFormat::bc5 || astc) && normal ? 2
                             : astc && f[column["kind"]] == "gray"                       ? 1
                                         : std::min(image->channels, nmc::texture::channels_held(format));
        // The baselines' ASTC: astcenc -cl (linear) -thorough, -normal for normal maps.
        nmc::texture::BlockChoice choice;
        choice.format = format, choice.normal_xy = astc && normal;
        const Clock::time_point start = Clock::now();
        std::vector<uint8_t> blocks;
        if (astc) {
            auto levels = nmc::texture::encode_astc(choice, nmc::texture::AstcEffort::thorough, {source}, threads);
            nmc::bench::exit_on_error(levels.status(), "encoding ASTC");
            blocks = std::move((*levels)[0]);
        } else {
            blocks = nmc::texture::encode_blocks(format, source, threads, effort);
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        auto decoded = astc ? nmc::texture::decode_astc(choice, source.width, source.height, blocks)
                            : nmc::texture::decode_blocks(format, source.width, source.height, blocks);
        nmc::bench::exit_on_error(decoded.status(), "decoding");
        const double mse = nmc::texture::mean_squared_error8(source, *decoded, channels);
        const double psnr = mse > 0 ? nmc::psnr_from_mse(mse) : 99.0;  // validate's convention: 99 is lossless
        const double baseline = baseline_text == "inf" ? 99.0 : std::stod(baseline_text);
        const double texels = double(source.width) * source.height;
        std::printf("%-36s %-44s %-10s %9.3f %9.3f %+7.3f %8.2f %9.2f", f[column["material"]].c_str(),
                    f[column["file"]].c_str(), nmc::texture::to_string(format), psnr, baseline, psnr - baseline, seconds,
                    texels / seconds * 1e-6);
        nlohmann::json row = {{"material", f[column["material"]]}, {"file", f[column["file"]]}, {"kind", f[column["kind"]]},
                              {"format", nmc::texture::to_string(format)}, {"baseline_codec", codec->first},
                              {"compared_channels", channels}, {"psnr8", psnr}, {"baseline_psnr8", baseline},
                              {"baseline_encode_s", std::stod(f[column["encode_s"]])}, {"encode_s", seconds},
                              {"mtexel_per_s", texels / seconds * 1e-6}, {"width", source.width}, {"height", source.height}};
        if (astc && !astcenc_tool.empty()) {
            const ToolRun tool = run_astcenc_tool(astcenc_tool, choice, source, threads);
            auto tool_decoded = nmc::texture::decode_astc(choice, source.width, source.height, tool.blocks);
            nmc::bench::exit_on_error(tool_decoded.status(), "decoding the tool's blocks");
            const double tool_psnr = nmc::psnr_from_mse(nmc::texture::mean_squared_error8(source, *tool_decoded, channels));
            std::printf("   %11.3f %7.2f  %s", tool_psnr, tool.seconds, tool.blocks == blocks ? "yes" : "no");
            row["tool_psnr8"] = tool_psnr, row["tool_encode_s"] = tool.seconds, row["tool_blocks_identical"] = tool.blocks == blocks;
        }
        std::printf("\n");
        std::fflush(stdout);
        rows.push_back(row);
        Sum& s = sums[nmc::texture::to_string(format)];
        if (psnr < 99.0 && baseline < 99.0) s.delta += psnr - baseline, ++s.count;  // lossless maps say nothing
        s.texels += texels, s.seconds += seconds;
    }
    nlohmann::json summary = nlohmann::json::object();
    std::printf("\n%-10s %6s %16s %9s\n", "format", "maps", "mean delta (dB)", "Mtexel/s");
    for (const auto& [name, s] : sums) {
        std::printf("%-10s %6d %+16.3f %9.2f\n", name.c_str(), s.count, s.count ? s.delta / s.count : 0.0,
                    s.texels / s.seconds * 1e-6);
        summary[name] = {{"lossy_maps", s.count}, {"mean_delta_db", s.count ? s.delta / s.count : 0.0},
                         {"mtexel_per_s", s.texels / s.seconds * 1e-6}};
    }
    if (!json_path.empty()) {
        std::string command;
        for (int i = 0; i < argc; ++i) command += std::string(i ? " " : "") + argv[i];
        const nlohmann::json out = {{"command", command},
                                    {"threads", threads},
                                    {"bc7_effort", effort_name},
                                    {"summary", summary},
                                    {"rows", rows}};
        const std::string text = out.dump(1) + "\n";
        nmc::bench::exit_on_error(nmc::write_file_atomically(json_path, text.data(), text.size()), "writing the JSON");
    }
    return 0;
}
