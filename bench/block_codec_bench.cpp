// Quality and speed of nmc's block encoders (texture/) on the shared materials, map by map, against the strong
// encoders of ../shared/baselines/classic-codecs-maps.csv: rgbcx for BC1/BC4/BC5, bc7e (slowest level, all
// modes) for BC7. For every baseline row of those encoders it loads the map, encodes it with our encoder of the
// same format, decodes it, and reports psnr8 over the format's channels as the baselines measure them (a normal
// map's X and Y for BC5, else the file's channels up to the format's) and encode speed (Mtexel/s, wall clock).
// Usage: nmc_block_codec_bench BASELINES_CSV MATERIALS_DIR [threads (0: all cores)] [JSON_OUT]
#include <chrono>
#include <cstdio>
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
#include "texture/block_image.h"

namespace {

using Clock = std::chrono::steady_clock;

// The baseline encoder of each of our formats.
const std::map<std::string, nmc::texture::BlockFormat> kBaselineCodecs = {
    {"bc1-rgbcx", nmc::texture::BlockFormat::bc1},
    {"bc4-rgbcx", nmc::texture::BlockFormat::bc4},
    {"bc5-rgbcx", nmc::texture::BlockFormat::bc5},
    {"bc7-bc7e", nmc::texture::BlockFormat::bc7},
};

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
        std::fprintf(stderr, "usage: %s BASELINES_CSV MATERIALS_DIR [threads] [JSON_OUT]\n", argv[0]);
        return 2;
    }
    const std::string csv_path = argv[1], materials = argv[2];
    const int threads = argc > 3 ? std::atoi(argv[3]) : 0;
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
    std::printf("%-36s %-44s %-4s %9s %9s %7s %8s %9s\n", "material", "file", "bc", "psnr8", "baseline", "delta",
                "encode_s", "Mtexel/s");
    while (std::getline(csv, line)) {
        const std::vector<std::string> f = split(line);
        if (f.size() < header.size()) continue;
        const auto codec = kBaselineCodecs.find(f[column["codec"]]);
        if (codec == kBaselineCodecs.end()) continue;
        const std::string baseline_text = f[column["psnr8_format_channels"]];
        const nmc::texture::BlockFormat format = codec->second;
        const std::string path = materials + "/" + f[column["material"]] + "/" + f[column["file"]];
        auto image = nmc::read_image(path);
        nmc::bench::exit_on_error(image.status(), ("reading " + path).c_str());
        const nmc::texture::Rgba8Image source = nmc::texture::to_rgba8(*image);
        const bool normal = f[column["kind"]] == "normal";
        const int channels = format == nmc::texture::BlockFormat::bc5 && normal
                                 ? 2
                                 : std::min(image->channels, nmc::texture::channels_held(format));
        const Clock::time_point start = Clock::now();
        const std::vector<uint8_t> blocks = nmc::texture::encode_blocks(format, source, threads);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        auto decoded = nmc::texture::decode_blocks(format, source.width, source.height, blocks);
        nmc::bench::exit_on_error(decoded.status(), "decoding");
        const double mse = nmc::texture::mean_squared_error8(source, *decoded, channels);
        const double psnr = mse > 0 ? nmc::psnr_from_mse(mse) : 99.0;  // validate's convention: 99 is lossless
        const double baseline = baseline_text == "inf" ? 99.0 : std::stod(baseline_text);
        const double texels = double(source.width) * source.height;
        std::printf("%-36s %-44s %-4s %9.3f %9.3f %+7.3f %8.2f %9.2f\n", f[column["material"]].c_str(),
                    f[column["file"]].c_str(), nmc::texture::to_string(format), psnr, baseline, psnr - baseline, seconds,
                    texels / seconds * 1e-6);
        std::fflush(stdout);
        rows.push_back({{"material", f[column["material"]]}, {"file", f[column["file"]]}, {"kind", f[column["kind"]]},
                        {"format", nmc::texture::to_string(format)}, {"baseline_codec", codec->first},
                        {"compared_channels", channels}, {"psnr8", psnr}, {"baseline_psnr8", baseline},
                        {"baseline_encode_s", std::stod(f[column["encode_s"]])}, {"encode_s", seconds},
                        {"mtexel_per_s", texels / seconds * 1e-6}, {"width", source.width}, {"height", source.height}});
        Sum& s = sums[nmc::texture::to_string(format)];
        if (psnr < 99.0 && baseline < 99.0) s.delta += psnr - baseline, ++s.count;  // lossless maps say nothing
        s.texels += texels, s.seconds += seconds;
    }
    nlohmann::json summary = nlohmann::json::object();
    std::printf("\n%-4s %6s %16s %9s\n", "bc", "maps", "mean delta (dB)", "Mtexel/s");
    for (const auto& [name, s] : sums) {
        std::printf("%-4s %6d %+16.3f %9.2f\n", name.c_str(), s.count, s.count ? s.delta / s.count : 0.0,
                    s.texels / s.seconds * 1e-6);
        summary[name] = {{"lossy_maps", s.count}, {"mean_delta_db", s.count ? s.delta / s.count : 0.0},
                         {"mtexel_per_s", s.texels / s.seconds * 1e-6}};
    }
    if (argc > 4) {
        std::string command;
        for (int i = 0; i < argc; ++i) command += std::string(i ? " " : "") + argv[i];
        const nlohmann::json out = {{"command", command}, {"threads", threads}, {"summary", summary}, {"rows", rows}};
        const std::string text = out.dump(1) + "\n";
        nmc::bench::exit_on_error(nmc::write_file_atomically(argv[4], text.data(), text.size()), "writing the JSON");
    }
    return 0;
}
