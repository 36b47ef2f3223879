// nmc: the neural material compressor's command line. Parses the subcommand and hands over to it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "format/pack.h"
#ifdef NMC_HAS_TRAINER
#include "compressor/openblas_core.h"
#endif

#ifndef NMC_VERSION_STRING
#define NMC_VERSION_STRING "unknown"
#endif

#ifdef NMC_HAS_TRAINER
namespace {

// Whether the subcommand trains (compress, batch): the first argument that is not a global flag (-q, -v and their
// long forms take no value).
bool runs_the_trainer(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (!arg.empty() && arg[0] == '-') continue;
        return arg == "compress" || arg == "batch";
    }
    return false;
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifdef NMC_HAS_TRAINER
    // The trainer's BLAS kernels on VMs that hide the CPU model. Only for commands that train: re-executing loads
    // LibTorch twice, about a second on a slow machine.
    if (runs_the_trainer(argc, argv)) nmc::reexec_with_openblas_core_if_generic(argv);
#endif
    CLI::App app{"nmc: the neural material compressor. Compresses PBR material texture sets into .nmc packs "
                 "(latent grids + a small FP8 network) and decodes, inspects and validates them."};
    app.set_version_flag("--version", std::string("nmc ") + NMC_VERSION_STRING + " (format " +
                                          std::to_string(nmc::kFormatVersionMajorArithmetic) +
                                          ".0; reads 1.x and 2.x)");
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
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return nmc::cli::kExitUsage;
    }
    return exit_code;
}
