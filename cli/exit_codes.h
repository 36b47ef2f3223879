// Process exit codes of the nmc command line (documented in docs/cli.md; all below 100, CLI11 uses 100+).
#pragma once

#include <string>

#include "core/status.h"

namespace nmc::cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitInternal = 1,         // a bug in nmc
    kExitUsage = 2,            // bad flags or arguments
    kExitIo = 3,               // a file could not be read or written
    kExitNotAPack = 4,         // not an nmc pack, or a format version this build cannot read
    kExitCorrupt = 5,          // structurally invalid pack (checksum, bounds, limits)
    kExitQuality = 6,          // validate: below a threshold, drift, a collapsed texture; compress: target not reached
    kExitUnavailable = 7,      // a requested backend (CUDA, trainer) is not built or has no device
    kExitBadInput = 8,         // a material that cannot be compressed (bad images, manifest, channels)
    kExitPartialFailure = 9,   // batch: some materials failed, the rest succeeded
    kExitCancelled = 10,       // interrupted (Ctrl-C); nothing partial was written
    kExitSourceMismatch = 11,  // validate: the source images differ from those the pack was made from
    kExitNotChecked = 12,      // validate: a threshold was asked for but quality could not be measured
    kExitOutOfMemory = 13,     // an allocation failed; the message names the file and what was being allocated
};

// The exit code for a failed Status. `input_is_material` maps invalid_argument/not_recognized/corrupt of
// source images to kExitBadInput instead of the pack codes.
int exit_code_for(const Status& status, bool input_is_material = false);

// Prints "nmc: error: <message>" to stderr.
void print_error(const Status& status);

// The message of the last print_error() ("" before any): what `nmc compress --result` records of a failure.
const std::string& last_error_message();

}  // namespace nmc::cli
