// The options compress, batch and scan share (commands.h): one registration, one help text each.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace nmc::cli {

void add_image_reading_options(CLI::App& command, bool& gloss_to_roughness, bool& resample) {
    command.add_flag("--gloss-to-roughness", gloss_to_roughness,
                     "Store glossiness (gloss maps, Unity's smoothness channels) as roughness = 1 - gloss");
    command.add_flag("--resample", resample, "Resample maps of other sizes to the largest (warns)");
}

void add_address_mode_option(CLI::App& command, std::string& address_mode) {
    command
        .add_option("--address-mode", address_mode,
                    "Latent addressing at the edges: wrap (tiling materials) or clamp (UV atlases)")
        ->check(CLI::IsMember(kAddressModeNames))
        ->capture_default_str();
}

}  // namespace nmc::cli
