// nmc: the neural material compressor's command line. Parses the subcommand and hands over to it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/current_step.h"
#include "cli/exit_codes.h"
#include "format/pack.h"
#ifdef NMC_HAS_TRAINER
#include "cli/openblas_reexec.h"
#endif

#ifndef NMC_VERSION_STRING
#define NMC_VERSION_STRING "unknown"
#endif

namespace {

// The number of single-character edits between a and b (Levenshtein).
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The first argument that is not a global flag (-q, -v and their long forms take no value), or "".
std::string first_word(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (!arg.empty() && arg[0] == '-') continue;
        return arg;
    }
    return "";
}

// The command list, one a line, as `nmc help` and an unknown command print it.
std::string command_list(const CLI::App& app) {
    std::string list;
    for (const CLI::App* command : app.get_subcommands({}))
        list += "  " + command->get_name() + std::string(12 - std::min<size_t>(11, command->get_name().size()), ' ') +
                command->get_description() + "\n";
    return list;
}

}  // namespace

#ifdef NMC_HAS_TRAINER
namespace {

// Whether the subcommand trains (compress, batch): the first argument that is not a global flag (-q, -v and their
// long forms take no value).
bool runs_the_trainer(int argc, char** argv) {
    const std::string word = first_word(argc, argv);
    return word == "compress" || word == "batch";
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifdef NMC_HAS_TRAINER
    // The trainer's BLAS kernels on VMs that hide the CPU model. Only for commands that train: re-executing loads
    // LibTorch twice, about a second on a slow machine.
    if (runs_the_trainer(argc, argv)) nmc::cli::reexec_with_openblas_core_if_generic(argv);
#endif
    CLI::App app{"nmc: the neural material compressor. Compresses PBR material texture sets into .nmc packs "
                 "(latent grids + a small FP8 network) and decodes, inspects and validates them.",
                 "nmc"};
    app.set_version_flag("--version", std::string("nmc ") + NMC_VERSION_STRING + " (format " +
                                          std::to_string(nmc::kFormatVersionMajorValueEncoding) +
                                          ".0; reads 1.x to 3.x)");
    app.require_subcommand(1);
    app.fallthrough();

    nmc::cli::GlobalOptions globals;
    bool quiet = false;
    bool verbose = false;
    app.add_flag("-q,--quiet", quiet, "Print only results and errors");
    app.add_flag("-v,--verbose", verbose, "Print more detail");

    int exit_code = nmc::cli::kExitOk;
    nmc::cli::add_inspect_command(app, globals, exit_code);
    nmc::cli::add_scan_command(app, globals, exit_code);
    nmc::cli::add_decompress_command(app, globals, exit_code);
    nmc::cli::add_validate_command(app, globals, exit_code);
#ifdef NMC_HAS_TRAINER
    nmc::cli::add_compress_command(app, globals, exit_code);
    nmc::cli::add_batch_command(app, globals, exit_code);
#else
    app.add_subcommand("compress", "Not in this build: it was configured without LibTorch")
        ->allow_extras()
        ->callback([&exit_code] {
            std::fprintf(stderr, "nmc: error: this build has no trainer, so it cannot compress. Install LibTorch "
                                 "(libtorch-dev on Debian, or point CMAKE_PREFIX_PATH at a LibTorch) and configure "
                                 "with -DNMC_WITH_TRAINER=ON.\n");
            exit_code = nmc::cli::kExitUnavailable;
        });
#endif

    app.parse_complete_callback([&] { globals.verbosity = quiet ? 0 : (verbose ? 2 : 1); });
    // `nmc help [COMMAND]` as `nmc [COMMAND] --help`; a word that names no command gets the nearest one suggested.
    const std::string word = first_word(argc, argv);
    if (word == "help") {
        std::string topic;
        for (int i = 1; i < argc; ++i)
            if (std::string(argv[i]) == "help" && i + 1 < argc) topic = argv[i + 1];
        if (topic.empty()) {
            std::printf("%s\nCommands (nmc COMMAND --help for each):\n%s", app.help().c_str(), command_list(app).c_str());
            return nmc::cli::kExitOk;
        }
        try {
            std::printf("%s", app.get_subcommand(topic)->help("nmc").c_str());
            return nmc::cli::kExitOk;
        } catch (const CLI::OptionNotFound&) {
            std::fprintf(stderr, "nmc: error: '%s' is not an nmc command. Commands:\n%s", topic.c_str(),
                         command_list(app).c_str());
            return nmc::cli::kExitUsage;
        }
    }
    if (!word.empty()) {
        bool known = false;
        std::string nearest;
        size_t nearest_distance = 3;  // suggest only within two edits
        for (const CLI::App* command : app.get_subcommands({})) {
            known = known || command->get_name() == word;
            const size_t d = edit_distance(word, command->get_name());
            if (d < nearest_distance) {
                nearest_distance = d;
                nearest = command->get_name();
            }
        }
        if (!known) {
            std::fprintf(stderr, "nmc: error: '%s' is not an nmc command%s Commands:\n%s", word.c_str(),
                         nearest.empty() ? "." : ("; did you mean '" + nearest + "'?").c_str(),
                         command_list(app).c_str());
            return nmc::cli::kExitUsage;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const std::bad_alloc& e) {
        // From any command: the allocation that failed is named by the step the command was on.
        std::fprintf(stderr, "nmc: error: %s\n", nmc::cli::out_of_memory_message(e.what()).c_str());
        return nmc::cli::kExitOutOfMemory;
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "nmc: error: %s\n", e.what());
        if (word.empty())
            std::fprintf(stderr, "Commands (nmc COMMAND --help for each):\n%s", command_list(app).c_str());
        else
            std::fprintf(stderr, "Run 'nmc %s --help' for its options.\n", word.c_str());
        return nmc::cli::kExitUsage;
    }
    return exit_code;
}
