// The subcommands of the nmc command line. Each add_*_command registers one CLI11 subcommand whose callback
// does the work and stores its exit code in `exit_code`. Libraries do the work; these files only parse
// flags, call them and print.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace nmc::cli {

struct GlobalOptions {
    int verbosity = 1;  // 0 with -q, 2 with -v
};

// The --quality presets (compress, batch), as CLI11 lists them in --help and in the error for another value.
inline const std::vector<std::string> kQualityPresetNames = {"fast", "normal", "best"};
// --normal-mode and --address-mode (compress, batch, scan): material/material.h and spec 5.3 define them.
inline const std::vector<std::string> kNormalModeNames = {"auto", "xy", "xyz", "stored"};
inline const std::vector<std::string> kAddressModeNames = {"wrap", "clamp"};

// The check of --bpp (compress, batch): "" for a budget above 0 bpp, else what is wrong.
inline std::string check_bits_per_texel(const std::string& text) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return "'" + text + "' is not a number";
    return value > 0.0 ? std::string() : std::string("must be above 0 bpp");
}

// The options of how a material's images are read, which compress, batch and scan share: --gloss-to-roughness and
// --resample (material_options.cpp).
void add_image_reading_options(CLI::App& command, bool& gloss_to_roughness, bool& resample);
// --address-mode (compress, batch): wrap or clamp, kAddressModeNames.
void add_address_mode_option(CLI::App& command, std::string& address_mode);

void add_inspect_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);
void add_scan_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);
void add_compress_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);
void add_decompress_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);
void add_validate_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);
void add_batch_command(CLI::App& app, const GlobalOptions& globals, int& exit_code);

}  // namespace nmc::cli
