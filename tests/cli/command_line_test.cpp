// The command line's own conventions (docs/cli.md, "Conventions"), on the built executable: `nmc help [COMMAND]`, an
// unknown command answered with the nearest one and the list, usage lines naming `nmc`, argument errors with the
// `nmc: error:` prefix and exit 2, and every command's --help against docs/cli.md (options, -f, --json, -q/-v,
// choices, the rate unit).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/nmc_process.h"
#include "tests/material/test_support.h"

namespace {

#if NMC_HAS_TRAINER
constexpr bool kHasTrainer = true;
#else
constexpr bool kHasTrainer = false;
#endif

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

std::string read_docs() {
    std::ifstream in(NMC_CLI_DOCS);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The text of docs/cli.md from the heading `heading` to the next heading of its level or above.
std::string docs_section(const std::string& docs, const std::string& heading) {
    const size_t start = docs.find("\n" + heading + "\n");
    if (start == std::string::npos) return "";
    const size_t end = docs.find("\n## ", start + heading.size() + 2);
    return docs.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The commands named in backquotes in the Conventions bullet that starts with `bullet_start`.
std::set<std::string> commands_in_bullet(const std::string& conventions, const std::string& bullet_start,
                                         const std::set<std::string>& commands) {
    const size_t start = conventions.find("- " + bullet_start);
    const size_t end = conventions.find("\n- ", start + 1);
    const std::string bullet = start == std::string::npos ? "" : conventions.substr(start, end - start);
    std::set<std::string> named;
    const std::regex quoted("`([a-z]+)[ `]");
    for (std::sregex_iterator it(bullet.begin(), bullet.end(), quoted), last; it != last; ++it)
        if (commands.count((*it)[1])) named.insert((*it)[1]);
    return named;
}

// The options of a --help text ("-o,--output", "--json", ...) with the rest of their line.
std::vector<std::pair<std::string, std::string>> help_options(const std::string& help) {
    std::vector<std::pair<std::string, std::string>> options;
    std::istringstream lines(help.substr(help.find("\nOptions:\n")));
    std::string line;
    const std::regex option_line("^  (-[-,a-zA-Z0-9]+)(.*)$");
    std::smatch m;
    while (std::getline(lines, line))
        if (std::regex_match(line, m, option_line)) options.emplace_back(m[1], m[2]);
    return options;
}

// docs/cli.md's conventions hold for every command: the test walks `nmc help`'s list and each command's --help.
TEST(CommandLine, EveryCommandFollowsTheConventions) {
    TempDir dir;
    const std::string docs = read_docs();
    ASSERT_FALSE(docs.empty()) << NMC_CLI_DOCS;
    const std::string conventions = docs_section(docs, "## Conventions");
    ASSERT_FALSE(conventions.empty());

    const CommandResult list = run_nmc("help", dir.path());
    ASSERT_EQ(list.exit_code, 0) << list.err;
    std::set<std::string> commands;
    const std::string listed = list.out.substr(list.out.find("Commands (nmc COMMAND --help for each):"));
    const std::regex command_line("\n  ([a-z]+) ");
    for (std::sregex_iterator it(listed.begin(), listed.end(), command_line), last; it != last; ++it)
        commands.insert((*it)[1]);
    // inspect, scan, decompress, validate, compress, batch; a build without the trainer lists compress as "Not in this
    // build" and has no batch.
    const std::set<std::string> expected_commands =
        kHasTrainer ? std::set<std::string>{"inspect", "scan", "decompress", "validate", "compress", "batch"}
                    : std::set<std::string>{"inspect", "scan", "decompress", "validate", "compress"};
    EXPECT_EQ(commands, expected_commands) << list.out;
    // Verbosity is global: -q and -v are in nmc's own help, and every command takes them.
    EXPECT_TRUE(contains(list.out, "-q,--quiet")) << list.out;
    EXPECT_TRUE(contains(list.out, "-v,--verbose")) << list.out;

    const std::set<std::string> with_json = commands_in_bullet(conventions, "**`--json`**", commands);
    const std::set<std::string> with_force = commands_in_bullet(conventions, "**`-f`, `--force`**", commands);
    EXPECT_EQ(with_json, (std::set<std::string>{"inspect", "scan", "compress", "validate", "decompress"}));
    std::set<std::string> writing = {"compress", "decompress", "scan", "validate"};
    if (kHasTrainer) writing.insert("batch");
    EXPECT_EQ(with_force, writing);

    for (const std::string& command : commands) {
        const CommandResult help = run_nmc(command + " --help", dir.path());
        ASSERT_EQ(help.exit_code, 0) << command << ": " << help.err;
        if (!kHasTrainer && command == "compress") continue;  // "Not in this build": no options to check
        EXPECT_TRUE(contains(help.out, "\nUsage: nmc " + command + " [OPTIONS]")) << help.out;
        // Positional arguments are named in capitals.
        const std::regex positional("\n  ([A-Za-z_]+) TEXT REQUIRED");
        for (std::sregex_iterator it(help.out.begin(), help.out.end(), positional), last; it != last; ++it) {
            const std::string name = (*it)[1];
            EXPECT_EQ(name, std::regex_replace(name, std::regex("[a-z]"), "")) << command << ": positional " << name;
        }
        // The rate's one name is bpp.
        EXPECT_FALSE(contains(help.out, "bits per texel")) << command;
        EXPECT_FALSE(contains(help.out, "bpt")) << command;

        const std::string section = docs_section(docs, "## nmc " + command);
        ASSERT_FALSE(section.empty()) << "docs/cli.md has no section '## nmc " << command << "'";
        const size_t usage_start = section.find("```\nnmc " + command);
        ASSERT_NE(usage_start, std::string::npos) << "the section of " << command << " has no usage block";
        const std::string usage = section.substr(usage_start, section.find("```", usage_start + 3) - usage_start);

        const auto options = help_options(help.out);
        std::string option_names;
        for (const auto& [names, rest] : options) option_names += " " + names + ",";
        // Every option in the docs' usage block is in --help ...
        const std::regex documented_option("(^|[\\[ |])(--?[a-z][a-z0-9-]*)");
        for (std::sregex_iterator it(usage.begin(), usage.end(), documented_option), last; it != last; ++it) {
            const std::string name = (*it)[2];
            EXPECT_TRUE(contains(option_names, "," + name + ",") || contains(option_names, " " + name + ","))
                << "docs/cli.md documents " << name << " for " << command << "; --help has:" << option_names;
        }
        // ... and every option of --help is documented in the command's section.
        for (const auto& [names, rest] : options) {
            if (names == "-h,--help") continue;
            const std::string long_name =
                names.substr(names.rfind(',') == std::string::npos ? 0 : names.rfind(',') + 1);
            EXPECT_TRUE(contains(section, "`" + long_name) || contains(usage, long_name))
                << command << " " << long_name << " is not in docs/cli.md";
            // Choices the docs write as a|b|c are listed in --help as {a,b,c} (as a set: the order may differ).
            const std::regex choices(long_name + " ([a-z0-9-]+(\\|[a-z0-9-]+)+)[\\] ]");
            std::smatch m;
            if (std::regex_search(usage, m, choices)) {
                std::set<std::string> documented, shown;
                std::string text = m[1];
                for (size_t at = 0; at <= text.size();) {
                    const size_t bar = std::min(text.find('|', at), text.size());
                    documented.insert(text.substr(at, bar - at));
                    at = bar + 1;
                }
                std::smatch listed_choices;
                const std::string rest_line = rest;
                if (std::regex_search(rest_line, listed_choices, std::regex("\\{([^}]*)\\}"))) {
                    std::string list_text = listed_choices[1];
                    for (size_t at = 0; at <= list_text.size();) {
                        const size_t comma = std::min(list_text.find(',', at), list_text.size());
                        shown.insert(list_text.substr(at, comma - at));
                        at = comma + 1;
                    }
                }
                EXPECT_EQ(shown, documented) << command << " " << long_name << ": --help line '" << rest << "'";
            }
        }
        // -f/--force on the commands that write files (and only as -f,--force); --json a flag where facts are reported.
        const bool has_force = contains(option_names, " -f,--force,");
        EXPECT_EQ(has_force, with_force.count(command) == 1) << command << ":" << option_names;
        EXPECT_FALSE(contains(option_names, " --force,")) << command << ": --force without -f";
        bool has_json = false;
        for (const auto& [names, rest] : options) {
            if (names != "--json") continue;
            has_json = true;
            EXPECT_FALSE(contains(rest, "TEXT")) << command << ": --json takes a value: " << rest;
        }
        EXPECT_EQ(has_json, with_json.count(command) == 1) << command;
        // -q and -v are taken after the command too: the error is the missing argument, not an unexpected -v.
        for (const char* flag : {" -v", " -q"}) {
            const CommandResult r = run_nmc(command + flag, dir.path());
            EXPECT_EQ(r.exit_code, 2) << command << flag;
            EXPECT_TRUE(contains(r.err, "is required")) << command << flag << ": " << r.err;
        }
    }
}

}  // namespace
