// The command line's own conventions (docs/cli.md, "Conventions"), on the built executable: `nmc help [COMMAND]`, an
// unknown command answered with the nearest one and the list, usage lines naming `nmc`, and argument errors with the
// `nmc: error:` prefix and exit 2.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/nmc_process.h"
#include "tests/material/test_support.h"

namespace {

using nmc::test::CommandResult;
using nmc::test::run_nmc;
using nmc::test::TempDir;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Bug: `nmc compres` and `nmc help` printed only "A subcommand is required".
TEST(CommandLine, AnUnknownCommandSuggestsTheNearestAndListsThem) {
    TempDir dir;
    CommandResult r = run_nmc("compres rock -o rock.nmc", dir.path());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "nmc: error: 'compres' is not an nmc command; did you mean 'compress'? Commands:"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "\n  decompress  ")) << r.err;
    r = run_nmc("frobnicate", dir.path());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "nmc: error: 'frobnicate' is not an nmc command. Commands:")) << r.err;
    r = run_nmc("", dir.path());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "nmc: error: A subcommand is required\nCommands (nmc COMMAND --help for each):"))
        << r.err;
}

TEST(CommandLine, HelpListsTheCommandsAndShowsEachOnesUsage) {
    TempDir dir;
    CommandResult r = run_nmc("help", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* command : {"inspect", "scan", "decompress", "validate", "compress"})
        EXPECT_TRUE(contains(r.out, std::string("\n  ") + command + " ")) << command << "\n" << r.out;
    r = run_nmc("help validate", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "Usage: nmc validate [OPTIONS] PACK")) << r.out;
    r = run_nmc("help nope", dir.path());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "nmc: error: 'nope' is not an nmc command.")) << r.err;
    // --help shows the same usage line, naming nmc rather than the binary's path.
    r = run_nmc("inspect --help", dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "Usage: nmc inspect [OPTIONS] PACK")) << r.out;
}

TEST(CommandLine, ArgumentErrorsHaveThePrefixAndExit2) {
    TempDir dir;
    const CommandResult r = run_nmc("inspect", dir.path());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "nmc: error: PACK is required\nRun 'nmc inspect --help' for its options.")) << r.err;
}

}  // namespace
