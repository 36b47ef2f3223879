// Runs `nmc batch` (NMC_BINARY) end to end on trees of 16x16 materials written by the test: nested folders,
// a broken material (exit 9, the rest done), up-to-date packs skipped, --force, --dry-run, a kill -9 in the
// middle and a restart, stale working folders and claims of dead batches, two batches sharing one tree, sharding
// N = 1..5, the report's numbers against `nmc inspect --json`, Unreal-named maps and images left out of packs
// (--strict), reports on a full disk, Ctrl-C and SIGTERM (finished packs reported done), and the reports' settings,
// quality columns, warnings, totals and --min-psnr gate.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch.h"
#include "core/checksum.h"
#include "format/pack.h"
#include "tests/batch/material_tree.h"
#include "tests/cli/nmc_process.h"
#include "tests/format/pack_equality.h"
#include "tests/material/test_support.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using nmc::test::TempDir;

// `nmc -q batch ARGS` with 20 training steps: on 16x16 texels each compress is mostly LibTorch's start-up.
// 600 bpp: the smallest latent shape and network need about 482 bpp on a material this small.
std::string fast_batch(const std::string& args) {
    return "-q batch " + args + " --quality fast --steps 20 --bpp 600";
}

using nmc::test::CommandResult;
using nmc::test::nmc_binary;
using nmc::test::run_nmc;
using nmc::test::slurp;
using nmc::test::write_material;

// A material whose only map is not an image at all.
void write_broken_material(const std::string& folder) {
    fs::create_directories(folder);
    std::ofstream(folder + "/broken_albedo.png") << "this is not a PNG file";
}

Json read_json(const std::string& path) {
    return Json::parse(slurp(path), nullptr, false);
}

std::map<std::string, Json> report_rows(const std::string& out) {
    std::map<std::string, Json> rows;
    const Json report = read_json(out + "/report.json");
    if (!report.is_object()) return rows;
    for (const Json& m : report["materials"]) rows[m["material"].get<std::string>()] = m;
    return rows;
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::set<std::string> files_under(const std::string& dir) {
    std::set<std::string> files;
    std::error_code ec;
    if (!fs::exists(dir, ec)) return files;
    for (const auto& e : fs::recursive_directory_iterator(dir)) files.insert(e.path().string());
    return files;
}

TEST(BatchCli, TreeWithBrokenAndUpToDateMaterials) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/rocks/granite", "granite", 1);
    write_material(root + "/rocks/basalt", "basalt", 2);
    write_material(root + "/props/wood/oak", "oak", 3);
    write_broken_material(root + "/broken");

    // --dry-run lists all four and writes nothing.
    CommandResult r = run_nmc("batch " + root + " -o " + out + " --dry-run", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(out));
    for (const char* m : {"rocks/granite", "rocks/basalt", "props/wood/oak", "broken"})
        EXPECT_NE(r.out.find("compress " + std::string(m) + " ->"), std::string::npos) << r.out;

    // First run: the broken material fails (exit 9), the three others are compressed.
    r = run_nmc(fast_batch(root + " -o " + out + " -j 2"), dir.path());
    ASSERT_EQ(r.exit_code, 9) << r.out << r.err;
    EXPECT_NE(r.out.find("failed broken:"), std::string::npos) << r.out;
    std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows["broken"]["status"], "failed");
    EXPECT_EQ(rows["broken"]["exit_code"], 8) << rows["broken"].dump();
    for (const char* m : {"rocks/granite", "rocks/basalt", "props/wood/oak"}) {
        EXPECT_EQ(rows[m]["status"], "ok") << rows[m].dump();
        EXPECT_TRUE(nmc::read_pack_file(out + "/" + m + ".nmc").ok()) << m;
    }
    EXPECT_FALSE(fs::exists(out + "/broken.nmc"));
    EXPECT_TRUE(fs::exists(out + "/report.md"));

    // The report's numbers are those of `nmc inspect --json` of each pack.
    for (const char* m : {"rocks/granite", "rocks/basalt", "props/wood/oak"}) {
        const CommandResult inspect = run_nmc("inspect --json " + out + "/" + m + ".nmc", dir.path());
        ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
        const Json j = Json::parse(inspect.out);
        const Json& row = rows[m];
        EXPECT_EQ(row["pack_bytes"], j["file_size"]) << m;
        EXPECT_EQ(row["bits_per_texel"].get<double>(), j["bits_per_texel"].get<double>()) << m;
        EXPECT_EQ(row["width"], j["material"]["width"]);
        EXPECT_EQ(row["height"], j["material"]["height"]);
        EXPECT_EQ(row["maps"], j["textures"].size());
        EXPECT_EQ(row["psnr_db"].get<double>(), j["quality"]["psnr_db"].get<double>()) << m;
        ASSERT_EQ(row["textures"].size(), j["quality"]["textures"].size());
        for (size_t t = 0; t < row["textures"].size(); ++t) {
            EXPECT_EQ(row["textures"][t]["texture"], j["quality"]["textures"][t]["texture"]);
            EXPECT_EQ(row["textures"][t]["psnr_db"].get<double>(),
                      j["quality"]["textures"][t]["psnr_db"].get<double>());
        }
        const double ratio = row["bcn_bytes"].get<double>() / j["file_size"].get<double>();
        EXPECT_DOUBLE_EQ(row["ratio_vs_bcn"].get<double>(), ratio);
        EXPECT_GT(row["source_bytes"].get<uint64_t>(), 0u);
    }

    // Second run after changing basalt's sources: basalt is rebuilt, the others are up to date and untouched.
    const ino_t granite = inode_of(out + "/rocks/granite.nmc");
    const ino_t oak = inode_of(out + "/props/wood/oak.nmc");
    const ino_t basalt = inode_of(out + "/rocks/basalt.nmc");
    write_material(root + "/rocks/basalt", "basalt", 7);
    const std::set<std::string> before = files_under(out);
    r = run_nmc("batch " + root + " -o " + out + " --dry-run --quality fast --steps 20 --bpp 600", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("skip     rocks/granite"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("compress rocks/basalt"), std::string::npos) << r.out;
    EXPECT_EQ(files_under(out), before);  // the dry run wrote nothing

    r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 9) << r.out << r.err;
    rows = report_rows(out);
    EXPECT_EQ(rows["rocks/granite"]["status"], "skipped");
    EXPECT_EQ(rows["props/wood/oak"]["status"], "skipped");
    EXPECT_EQ(rows["rocks/basalt"]["status"], "ok");
    EXPECT_EQ(rows["broken"]["status"], "failed");
    EXPECT_EQ(inode_of(out + "/rocks/granite.nmc"), granite);
    EXPECT_EQ(inode_of(out + "/props/wood/oak.nmc"), oak);
    EXPECT_NE(inode_of(out + "/rocks/basalt.nmc"), basalt);

    // Other settings make every pack stale; --force rebuilds up-to-date ones.
    r = run_nmc("batch " + root + " -o " + out + " --dry-run --quality fast --steps 21 --bpp 600", dir.path());
    EXPECT_NE(r.out.find("compress rocks/granite"), std::string::npos) << r.out;
    fs::remove_all(root + "/broken");
    r = run_nmc(fast_batch(root + " -o " + out + " --force"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    rows = report_rows(out);
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& [name, row] : rows) EXPECT_EQ(row["status"], "ok") << name;
    EXPECT_NE(inode_of(out + "/rocks/granite.nmc"), granite);
}

TEST(BatchCli, ResumesAfterKill) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    const std::vector<std::string> names = {"m1", "m2", "m3", "m4", "m5"};
    for (size_t i = 0; i < names.size(); ++i)
        write_material(root + "/" + names[i], names[i], static_cast<int>(i));

    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::string bin = nmc_binary();
        const std::string null_path = "/dev/null";
        std::freopen(null_path.c_str(), "w", stdout);
        std::freopen(null_path.c_str(), "w", stderr);
        ::execl(bin.c_str(), bin.c_str(), "-q", "batch", root.c_str(), "-o", out.c_str(), "--quality", "fast",
                "--steps", "20", "--bpp", "600", "-j", "1", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Kill -9 as soon as the first pack appears.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool appeared = false;
    while (!appeared && std::chrono::steady_clock::now() < deadline) {
        for (const std::string& n : names) appeared = appeared || fs::exists(out + "/" + n + ".nmc");
        if (!appeared) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(appeared) << "no pack within 60 s";
    ASSERT_TRUE(WIFSIGNALED(status));

    // Packs finished before the kill (those whose record says ok) must not be rebuilt.
    std::map<std::string, ino_t> finished;
    for (const std::string& n : names) {
        const Json rec = read_json(out + "/" + n + ".nmc.state.json");
        if (rec.is_object() && rec["status"] == "ok") finished[n] = inode_of(out + "/" + n + ".nmc");
    }
    EXPECT_LT(finished.size(), names.size()) << "the batch finished before it was killed: the test proves nothing";
    // Every pack on disk is whole, even mid-batch.
    for (const std::string& n : names) {
        if (fs::exists(out + "/" + n + ".nmc")) {
            EXPECT_TRUE(nmc::read_pack_file(out + "/" + n + ".nmc").ok()) << n;
        }
    }

    const CommandResult r = run_nmc(fast_batch(root + " -o " + out + " -j 2"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.size(), names.size());
    for (const std::string& n : names) {
        EXPECT_TRUE(nmc::read_pack_file(out + "/" + n + ".nmc").ok()) << n;
        if (finished.count(n)) {
            EXPECT_EQ(rows.at(n)["status"], "skipped") << n;
            EXPECT_EQ(inode_of(out + "/" + n + ".nmc"), finished[n]) << n << " was rebuilt";
        } else {
            EXPECT_EQ(rows.at(n)["status"], "ok") << n;
        }
    }
    // Nothing of the killed batch is left: its temporary files, its claim on the material it was compressing (taken
    // over, or this run would have waited for it) and its working folder (the bug: one folder per kill stayed).
    for (const std::string& f : files_under(out)) {
        EXPECT_EQ(f.find(".tmp-"), std::string::npos) << "temporary file left behind: " << f;
        EXPECT_EQ(f.find(".claim"), std::string::npos) << "claim left behind: " << f;
        EXPECT_EQ(f.find(".nmc-batch/"), std::string::npos) << "working folder left behind: " << f;
    }
}

std::string host_name() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

// The pid of a process that has exited.
pid_t dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
}

// What a batch killed with kill -9, or a host that went down, leaves in OUT: a working folder .nmc-batch/<host>-<pid>
// with its children's job-N.out and .err, and the claims of the materials it was compressing. The next run removes
// the folders of batches that are gone (a pid that no longer runs on this host; on another host, a folder not
// refreshed for 10 minutes), keeps those of live batches and what it cannot read as <host>-<pid>, and takes over the
// claims of batches that are gone.
TEST(BatchCli, StaleBatchFoldersAndClaimsAreCleanedUp) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out"), work = out + "/.nmc-batch/";
    write_material(root + "/m", "m", 1);
    const std::string dead = std::to_string(dead_pid());
    const std::map<std::string, bool> kept = {
        {host_name() + "-" + dead, false},
        {host_name() + "-" + std::to_string(::getpid()), true},  // this test: alive
        {"render-node-7", true},                                 // another host, refreshed now
        {"render-node-8", false},                                // another host, an hour ago
        {"notes", true},
    };
    for (const auto& [name, keep] : kept) {
        fs::create_directories(work + name);
        std::ofstream(work + name + "/job-0.out") << "{}";
    }
    fs::last_write_time(work + "render-node-8", fs::file_time_type::clock::now() - std::chrono::hours(1));
    std::ofstream(out + "/m.nmc.claim") << R"({"host":")" << host_name() << R"(","pid":)" << dead << "}\n";

    const CommandResult r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(report_rows(out)["m"]["status"], "ok");
    EXPECT_FALSE(fs::exists(out + "/m.nmc.claim"));
    for (const auto& [name, keep] : kept) EXPECT_EQ(fs::exists(work + name), keep) << name;
}

// What a batch does with a material it claimed after another batch held it: it takes the other batch's result when
// the record changed since the plan and has the plan's fingerprint (a failure is not tried again; a pack is
// "skipped" when the skip rule holds), and compresses otherwise.
TEST(BatchClaims, RecordedElsewhereIsTakenAsTheOtherBatchLeftIt) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/m", "m", 1);
    nmc::BatchSettings settings;  // those of fast_batch, as `nmc batch` fingerprints them
    settings.quality = "fast";
    settings.steps = 20;
    settings.bpp = 600;
    const std::string version = run_nmc("--version", dir.path()).out;  // "nmc 0.1.0 (format ...)"
    settings.tool = version.substr(0, version.find(' ', 4));
    auto materials = nmc::discover_materials(root, out);
    ASSERT_TRUE(materials.ok() && materials->size() == 1u);
    const nmc::BatchJob job = nmc::plan_batch(*materials, settings, false, false).front();
    ASSERT_EQ(job.action, nmc::BatchAction::compress);
    EXPECT_FALSE(nmc::recorded_elsewhere(job, settings, false).has_value());  // nothing happened since the plan

    nmc::MaterialRecord failed;
    failed.relative = "m";
    failed.status = "failed";
    failed.error = "the other batch's error";
    failed.fingerprint = "another fingerprint";
    const std::string record = nmc::record_path(job.material);
    ASSERT_TRUE(nmc::write_record(record, failed).ok());
    EXPECT_FALSE(nmc::recorded_elsewhere(job, settings, false).has_value());  // made with other settings
    failed.fingerprint = job.fingerprint;
    ASSERT_TRUE(nmc::write_record(record, failed).ok());
    std::optional<nmc::MaterialRecord> taken = nmc::recorded_elsewhere(job, settings, false);
    ASSERT_TRUE(taken.has_value());
    EXPECT_EQ(taken->status, "failed");
    EXPECT_EQ(taken->error, "the other batch's error");

    // The other batch made the pack: up to date, so "skipped".
    const CommandResult r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    taken = nmc::recorded_elsewhere(job, settings, false);
    ASSERT_TRUE(taken.has_value());
    EXPECT_EQ(taken->status, "skipped");
    EXPECT_GT(taken->pack_bytes, 0u);
}

// Two batches on one tree at once. The bug: both compressed everything, with no lock or warning. Each claims a
// material before compressing it, so together they compress every material exactly once, and each reports the ones
// the other made as "skipped". (Without -q each prints "batch 3/6 ok NAME ..." per material.)
TEST(BatchCli, ConcurrentBatchesShareTheWork) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    std::set<std::string> all;
    for (int i = 0; i < 6; ++i) {
        write_material(root + "/c" + std::to_string(i), "c" + std::to_string(i), i);
        all.insert("c" + std::to_string(i));
    }
    const std::string args = "batch " + root + " -o " + out + " --quality fast --steps 20 --bpp 600";
    fs::create_directories(dir.file("first"));
    fs::create_directories(dir.file("second"));
    std::future<CommandResult> first = std::async(std::launch::async, [&] { return run_nmc(args, dir.file("first")); });
    const CommandResult second = run_nmc(args, dir.file("second"));
    const CommandResult first_result = first.get();
    ASSERT_EQ(first_result.exit_code, 0) << first_result.out << first_result.err;
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;

    const auto compressed = [](const std::string& err) {
        std::set<std::string> names;
        std::istringstream lines(err);
        std::string word, counts, status, name;
        for (std::string line; std::getline(lines, line);) {
            std::istringstream words(line);
            if (words >> word >> counts >> status >> name && word == "batch" && status == "ok") names.insert(name);
        }
        return names;
    };
    const std::set<std::string> by_first = compressed(first_result.err), by_second = compressed(second.err);
    EXPECT_FALSE(by_first.empty() || by_second.empty())
        << "one batch did everything before the other started: the test proves nothing\n"
        << first_result.err << second.err;
    std::set<std::string> together = by_first;
    for (const std::string& name : by_second) EXPECT_TRUE(together.insert(name).second) << name << " compressed twice";
    EXPECT_EQ(together, all);
    const std::map<std::string, Json> rows = report_rows(out);  // the report of the batch that finished last
    ASSERT_EQ(rows.size(), all.size());
    for (const auto& [name, row] : rows) EXPECT_TRUE(row["status"] == "ok" || row["status"] == "skipped") << row.dump();
    for (const std::string& f : files_under(out)) EXPECT_EQ(f.find(".claim"), std::string::npos) << f;
}

// Issue 34: `batch -j 2` gives each child half the cores as OpenMP threads, and OpenBLAS divided the trainer's matrix
// products by that count, so a batch pack differed from the `compress` pack of the same material and seed. Both run
// their products on one BLAS thread now (compressor/openblas_core.h).
TEST(BatchCli, ParallelJobsTrainWhatCompressTrains) {
    TempDir dir;
    const std::string root = dir.file("assets");
    write_material(root + "/rock", "rock", 1);
    const CommandResult batch = run_nmc(fast_batch(root + " -o " + dir.file("batch") + " -j 2 --seed 7"), dir.path());
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    // Beside the batch's OUT, so that the source folder the pack records (relative to the pack) is the same.
    const CommandResult compress = run_nmc("-q compress " + root + "/rock -o " + dir.file("compress") +
                                               "/rock.nmc --quality fast --steps 20 --bpp 600 --seed 7",
                                           dir.path());
    ASSERT_EQ(compress.exit_code, 0) << compress.err;
    const std::vector<uint8_t> from_batch = nmc::testing::pack_bytes_without_training_time(dir.file("batch/rock.nmc"));
    ASSERT_FALSE(from_batch.empty());
    EXPECT_TRUE(from_batch == nmc::testing::pack_bytes_without_training_time(dir.file("compress/rock.nmc")))
        << "batch -j 2 and compress trained different packs";
}

TEST(BatchCli, ShardsCoverEveryMaterialOnce) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    std::set<std::string> all;
    for (int i = 0; i < 9; ++i) {
        const std::string rel = (i % 3 == 0 ? "a/" : i % 3 == 1 ? "b/c/" : "") + std::string("mat") + std::to_string(i);
        write_material(root + "/" + rel, "mat" + std::to_string(i), i);
        all.insert(rel);
    }
    // N = 1..5 through the library (process start-up of a LibTorch binary costs about a second a run on a
    // loaded machine), then N = 3 through the command line, which must agree.
    auto materials = nmc::discover_materials(root, out);
    ASSERT_TRUE(materials.ok()) << materials.status().to_string();
    ASSERT_EQ(materials->size(), all.size());
    std::map<std::string, int> shard_of_3;
    for (int n = 1; n <= 5; ++n) {
        std::map<std::string, int> seen;
        for (int i = 0; i < n; ++i)
            for (const nmc::BatchMaterial& m : *materials)
                if (nmc::shard_of(m.relative, n) == i) {
                    ++seen[m.relative];
                    if (n == 3) shard_of_3[m.relative] = i;
                }
        ASSERT_EQ(seen.size(), all.size()) << "N = " << n;
        for (const auto& [rel, count] : seen) {
            EXPECT_TRUE(all.count(rel)) << rel;
            EXPECT_EQ(count, 1) << rel << " in " << count << " shards of " << n;
        }
    }
    std::map<std::string, int> seen;
    for (int i = 0; i < 3; ++i) {
        const CommandResult r =
            run_nmc("batch " + root + " -o " + out + " --dry-run --shard " + std::to_string(i) + "/3", dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::istringstream lines(r.out);
        std::string action, rel;
        for (std::string line; std::getline(lines, line);) {
            std::istringstream words(line);
            if (words >> action >> rel && action == "compress") {
                EXPECT_EQ(seen.count(rel), 0u) << rel << " in two shards";
                seen[rel] = i;
            }
        }
    }
    EXPECT_EQ(seen, shard_of_3);
    EXPECT_EQ(run_nmc("batch " + root + " -o " + out + " --shard 3/3 --dry-run", dir.path()).exit_code, 2);
}

TEST(BatchCli, ShardRunsMergeIntoOneReport) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    for (int i = 0; i < 3; ++i) write_material(root + "/s" + std::to_string(i), "s" + std::to_string(i), i);
    // Before any shard ran, every material is pending and the merged report says so (exit 9).
    CommandResult r = run_nmc(fast_batch(root + " -o " + out + " --report-only"), dir.path());
    EXPECT_EQ(r.exit_code, 9) << r.err;
    for (int i = 0; i < 2; ++i) {
        r = run_nmc(fast_batch(root + " -o " + out + " --shard " + std::to_string(i) + "/2"), dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(fs::exists(out + "/report.shard-" + std::to_string(i) + "-of-2.json"));
    }
    r = run_nmc(fast_batch(root + " -o " + out + " --report-only"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& [name, row] : rows) {
        EXPECT_EQ(row["status"], "ok") << name;
        EXPECT_GT(row["pack_bytes"].get<uint64_t>(), 0u) << name;
    }
}

// The reports on a full disk (a file size limit of 1 byte, tests/cli/nmc_process.h): exit 3 naming the report and
// the reason, and no report or temporary file left under OUT.
TEST(BatchCli, ReportsOnAFullDiskExit3AndLeaveNothing) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/m", "m", 0);
    const CommandResult r =
        nmc::test::run_nmc_with_file_size_limit(fast_batch(root + " -o " + out + " --report-only"), 1);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("nmc: error: " + out + "/report.json: write failed: "), std::string::npos) << r.err;
    EXPECT_EQ(files_under(out), std::set<std::string>{});
}

// --target-psnr reaches every child: a low target is met (and the settings change rebuilds the packs made
// without it); an unreachable one fails its material with `nmc compress`'s quality exit code, not the batch.
TEST(BatchCli, TargetPsnrIsPassedToEveryMaterial) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/a", "a", 1);
    write_material(root + "/b", "b", 2);
    CommandResult r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_nmc(fast_batch(root + " -o " + out + " --target-psnr 8"), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& [name, row] : rows) {
        EXPECT_EQ(row["status"], "ok") << name;  // rebuilt, not skipped: the target is part of the fingerprint
        EXPECT_GE(row["psnr_db"].get<double>(), 8.0) << name;
    }
    r = run_nmc(fast_batch(root + " -o " + out + " --target-psnr 97"), dir.path());
    EXPECT_EQ(r.exit_code, 9) << r.out << r.err;
    rows = report_rows(out);
    for (const auto& [name, row] : rows) {
        EXPECT_EQ(row["status"], "failed") << name;
        EXPECT_EQ(row["exit_code"], 6) << name;
        EXPECT_NE(row["error"].get<std::string>().find("not reached"), std::string::npos) << row["error"];
    }
}

// --arithmetic reaches every child: the default writes binary16 packs (format 2.0); asking for float32 rebuilds
// them (the arithmetic is part of the fingerprint) as format 1.0 packs.
TEST(BatchCli, ArithmeticIsPassedToEveryMaterial) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/a", "a", 1);
    write_material(root + "/b", "b", 2);
    for (const std::string arithmetic : {"binary16", "float32"}) {
        const std::string flag = arithmetic == "binary16" ? "" : " --arithmetic " + arithmetic;
        const CommandResult r = run_nmc(fast_batch(root + " -o " + out + flag), dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const std::map<std::string, Json> rows = report_rows(out);
        ASSERT_EQ(rows.size(), 2u);
        for (const auto& [name, row] : rows) EXPECT_EQ(row["status"], "ok") << name << " " << arithmetic;
        for (const std::string name : {"a", "b"}) {
            const nmc::Result<nmc::Pack> pack = nmc::read_pack_file(out + "/" + name + ".nmc");
            ASSERT_TRUE(pack.ok()) << pack.status().to_string();
            EXPECT_EQ(nmc::to_string(pack->network.arithmetic), arithmetic) << name;
            EXPECT_EQ(pack->format_version_major(), arithmetic == "binary16" ? 2 : 1) << name;
        }
    }
}

// The fingerprint of a float32 batch is the one from before --arithmetic existed (the SHA-256 of the same text), so
// packs recorded then are not rebuilt; binary16 (the default now) is another fingerprint.
TEST(BatchFingerprint, Float32KeepsTheFingerprintFromBeforeTheArithmetic) {
    const std::vector<nmc::SourceFile> sources = {{"a_albedo.png", std::string(64, 'c'), 10}};
    nmc::BatchSettings settings;
    settings.tool = "nmc 0.1.0";
    settings.arithmetic = "float32";
    const std::string before = "nmc batch fingerprint 1\ntool=nmc 0.1.0\nquality=normal\nbpp=5\nsteps=0\nbatch=0\n"
                               "seed=1\na_albedo.png\t" + std::string(64, 'c') + "\n";
    EXPECT_EQ(nmc::batch_fingerprint(sources, settings), nmc::Sha256::hex_digest(before.data(), before.size()));
    settings.arithmetic = "binary16";
    EXPECT_NE(nmc::batch_fingerprint(sources, settings), nmc::Sha256::hex_digest(before.data(), before.size()));
}

// A manifest is a material of its own: `props/crate.json` becomes `OUT/props/crate.nmc`, made from the files
// the manifest lists (here under other names than recognition would accept), and the folder holding the
// manifest is not compressed as a folder material too. Editing the manifest makes the pack out of date.
TEST(BatchCli, ManifestMaterialsAreCompressed) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/props/textures", "crate", 5);
    fs::rename(root + "/props/textures/crate_albedo.png", root + "/props/textures/crate_paint.png");
    const std::string manifest = root + "/props/crate.json";
    std::ofstream(manifest) << R"({"name": "crate", "folder": "textures", "guess_unlisted": true,
        "textures": [{"file": "crate_paint.png", "semantic": "albedo"}]})";
    CommandResult r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(fs::exists(out + "/props/crate.nmc"));
    std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.count("props/crate.json"), 1u) << r.out;
    EXPECT_EQ(rows["props/crate.json"]["status"], "ok");
    EXPECT_EQ(rows["props/crate.json"]["maps"], 2);  // the listed albedo and the recognised roughness
    // props/textures is a folder material of its own (its roughness map is recognised by name).
    EXPECT_EQ(rows.size(), 2u);

    r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(report_rows(out)["props/crate.json"]["status"], "skipped");
    std::ofstream(manifest) << R"({"name": "crate", "folder": "textures", "guess_unlisted": false,
        "textures": [{"file": "crate_paint.png", "semantic": "albedo"}]})";
    r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rows = report_rows(out);
    EXPECT_EQ(rows["props/crate.json"]["status"], "ok");
    EXPECT_EQ(rows["props/crate.json"]["maps"], 1);
}

// A folder of Unreal-named maps (T_Rock_D, T_Rock_N) is a material; an image it holds that names no map is left out
// of the pack with a warning, and the report (JSON, Markdown, CSV) lists it. Under --strict that material fails
// (exit 9) and its pack from the run before is kept.
TEST(BatchCli, FindsUnrealFoldersAndReportsImagesLeftOut) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    const std::string folder = root + "/rocks/basalt";
    fs::create_directories(folder);
    for (const char* name : {"T_Rock_D.png", "T_Rock_N.png", "T_Rock_Preview.png"})
        nmc::test::write_png(folder + "/" + name, nmc::test::make_image(16, 16, 3, nmc::test::code));
    const std::string settings = " --quality fast --steps 20 --bpp 600";
    CommandResult r = run_nmc("batch " + root + " -o " + out + settings, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("nmc: warning: rocks/basalt: T_Rock_Preview.png is not packed: file name matches no map "
                         "convention"),
              std::string::npos)
        << r.err;
    std::map<std::string, Json> rows = report_rows(out);
    ASSERT_EQ(rows.size(), 1u);
    const Json& row = rows["rocks/basalt"];
    EXPECT_EQ(row["status"], "ok") << row.dump();
    EXPECT_EQ(row["maps"], 2);
    ASSERT_EQ(row["ignored_images"].size(), 1u) << row.dump();
    EXPECT_EQ(row["ignored_images"][0]["file"], "T_Rock_Preview.png");
    EXPECT_NE(slurp(out + "/report.md").find("- rocks/basalt: T_Rock_Preview.png: file name matches no map convention"),
              std::string::npos);
    EXPECT_NE(slurp(out + "/report.csv").find(",T_Rock_Preview.png (file name matches no map convention"),
              std::string::npos);

    r = run_nmc("batch " + root + " -o " + out + settings + " --dry-run --strict", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("compress rocks/basalt -> " + out + "/rocks/basalt.nmc (--strict, and the pack leaves out 1 "
                         "image(s))"),
              std::string::npos)
        << r.out;
    const ino_t pack = inode_of(out + "/rocks/basalt.nmc");
    r = run_nmc("-q batch " + root + " -o " + out + settings + " --strict", dir.path());
    ASSERT_EQ(r.exit_code, 9) << r.out << r.err;
    rows = report_rows(out);
    EXPECT_EQ(rows["rocks/basalt"]["status"], "failed");
    EXPECT_EQ(rows["rocks/basalt"]["exit_code"], 8);
    EXPECT_NE(rows["rocks/basalt"]["error"].get<std::string>().find("images left out of the pack: T_Rock_Preview.png"),
              std::string::npos)
        << rows["rocks/basalt"].dump();
    EXPECT_EQ(inode_of(out + "/rocks/basalt.nmc"), pack);
}

// report.csv: a header and one row per material, the numbers equal to report.json's.
TEST(BatchCli, CsvReportMatchesJsonReport) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/x", "x", 3);
    write_material(root + "/y,z", "y", 4);  // a comma in the material's path is quoted
    const CommandResult r = run_nmc(fast_batch(root + " -o " + out), dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream csv(slurp(out + "/report.csv"));
    std::string header, line;
    ASSERT_TRUE(std::getline(csv, header));
    EXPECT_EQ(header.rfind("material,status,maps,width,height,source_bytes,bcn_bytes,pack_bytes,", 0), 0u) << header;
    const std::map<std::string, Json> rows = report_rows(out);
    int count = 0;
    while (std::getline(csv, line)) {
        if (line.rfind("(total),", 0) == 0) {  // the totals row, last: the sum of the packs' bytes
            uint64_t pack_bytes = 0;
            for (const auto& [name, row] : rows) pack_bytes += row["pack_bytes"].get<uint64_t>();
            EXPECT_NE(line.find("," + std::to_string(pack_bytes) + ","), std::string::npos) << line;
            EXPECT_FALSE(std::getline(csv, line)) << line;
            break;
        }
        ++count;
        const bool quoted = line.rfind("\"y,z\",", 0) == 0;
        const std::string name = quoted ? "y,z" : line.substr(0, line.find(','));
        ASSERT_EQ(rows.count(name), 1u) << line;
        const Json& row = rows.at(name);
        const std::string expected = "," + std::to_string(row["pack_bytes"].get<uint64_t>()) + ",";
        EXPECT_NE(line.find(expected), std::string::npos) << line;
        EXPECT_NE(line.find(",ok,"), std::string::npos) << line;
    }
    EXPECT_EQ(count, 2);
}

// Bug: after Ctrl-C (SIGINT to the whole process group, children included) the child being interrupted could exit
// before the batch saw its own signal, and its material was reported (and recorded) as failed; SIGTERM to the batch
// alone must stop it the same way. Either way: exit 10, the packs finished before are `ok` in the report, the others
// `pending`, none `failed`, and no record says failed.
TEST(BatchCli, InterruptReportsFinishedPacksAsDone) {
    for (const int signal_number : {SIGINT, SIGTERM}) {
        TempDir dir;
        const std::string root = dir.file("assets"), out = dir.file("out");
        for (const std::string n : {"m1", "m2", "m3", "m4"}) write_material(root + "/" + n, n, n[1] - '0');
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::setpgid(0, 0);  // its own process group, as a shell's foreground job
            const std::string bin = nmc_binary();
            std::freopen("/dev/null", "w", stdout);
            std::freopen("/dev/null", "w", stderr);
            // 60 steps: each material trains long enough to be interrupted in the middle.
            ::execl(bin.c_str(), bin.c_str(), "-q", "batch", root.c_str(), "-o", out.c_str(), "--quality", "fast",
                    "--steps", "60", "--bpp", "600", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!fs::exists(out + "/m1.nmc") && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the next child is training
        ::kill(signal_number == SIGINT ? -pid : pid, signal_number);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFEXITED(status)) << strsignal(signal_number);
        EXPECT_EQ(WEXITSTATUS(status), 10) << strsignal(signal_number);
        const std::map<std::string, Json> rows = report_rows(out);
        ASSERT_EQ(rows.size(), 4u) << strsignal(signal_number);
        int done = 0;
        for (const auto& [name, row] : rows) {
            const bool packed = fs::exists(out + "/" + name + ".nmc");
            EXPECT_EQ(row["status"], packed ? "ok" : "pending") << strsignal(signal_number) << " " << name;
            done += packed;
            const Json record = read_json(out + "/" + name + ".nmc.state.json");
            if (record.is_object()) {
                EXPECT_EQ(record["status"], "ok") << strsignal(signal_number) << " " << name;
            }
        }
        EXPECT_GE(done, 1) << strsignal(signal_number);
        EXPECT_LT(done, 4) << strsignal(signal_number) << ": the batch finished before the signal, proving nothing";
    }
}

// The report says how the packs were made and how good they are: the nmc version and settings, psnr8 and the worst
// texture per material, compress's warnings, a totals row; the compress options batch passes on (--address-mode,
// --resample here) reach the packs; a --min-psnr gate fails the materials below it (exit 9) without compressing them
// again; a material that fails shows the image library's own words, not a generic "PNG library error".
TEST(BatchCli, ReportCarriesSettingsQualityWarningsTotalsAndTheGate) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    write_material(root + "/a", "a", 1);
    fs::create_directories(root + "/b");
    nmc::test::write_png(root + "/b/b_albedo.png", nmc::test::make_image(16, 16, 3, [](int x, int y, int c) {
        return static_cast<float>((x * 11 + y * 5 + c * 40) % 256) / 255.0f;
    }));
    nmc::test::write_png(root + "/b/b_roughness.png", nmc::test::make_image(8, 8, 1, [](int x, int y, int) {
        return static_cast<float>(x * 30 + y) / 255.0f;
    }));
    // A PNG whose chunks are whole (every CRC right) but whose pixel data stops after 8 of its 16 rows.
    const std::string broken = root + "/c/c_albedo.png";
    {
        fs::create_directories(root + "/c");
        nmc::test::write_png(broken, nmc::test::make_image(16, 8, 3, [](int, int, int) { return 0.5f; }));
        std::string bytes = slurp(broken);
        bytes[23] = 16;  // IHDR height 8 -> 16 (big-endian, bytes 20-23), then the chunk's CRC again
        const uint32_t crc = nmc::crc32(reinterpret_cast<const uint8_t*>(bytes.data()) + 12, 17);
        for (int i = 0; i < 4; ++i) bytes[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
        std::ofstream(broken, std::ios::binary) << bytes;
    }

    CommandResult r = run_nmc(fast_batch(root + " -o " + out + " --address-mode clamp --resample --min-psnr 99"),
                              dir.path());
    EXPECT_EQ(r.exit_code, 9) << r.out << r.err;
    const Json report = read_json(out + "/report.json");
    ASSERT_TRUE(report.is_object());
    EXPECT_EQ(report["nmc_version"].get<std::string>().rfind("nmc ", 0), 0u);
    EXPECT_EQ(report["settings"]["address_mode"], "clamp");
    EXPECT_EQ(report["settings"]["resample"], true);
    EXPECT_EQ(report["settings"]["min_psnr"], 99.0);
    const std::map<std::string, Json> rows = report_rows(out);
    for (const std::string name : {"a", "b"}) {
        const Json& row = rows.at(name);
        EXPECT_EQ(row["status"], "failed") << name;
        EXPECT_EQ(row["exit_code"], 6) << name;
        EXPECT_NE(row["error"].get<std::string>().find("is below --min-psnr 99.00 dB"), std::string::npos) << row;
        EXPECT_GT(row["psnr8_mip0_db"].get<double>(), 0.0) << name;
        EXPECT_TRUE(row["worst_texture"].is_object()) << name;
        auto pack = nmc::read_pack_file(out + "/" + name + ".nmc");  // the gate keeps the pack
        ASSERT_TRUE(pack.ok()) << name;
        EXPECT_EQ(pack->material.address_mode, nmc::AddressMode::clamp) << name;
        EXPECT_EQ(read_json(out + "/" + name + ".nmc.state.json")["status"], "ok") << name;
    }
    ASSERT_EQ(rows.at("b")["warnings"].size(), 1u) << rows.at("b");
    EXPECT_NE(rows.at("b")["warnings"][0].get<std::string>().find("b_roughness.png"), std::string::npos);
    EXPECT_EQ(rows.at("c")["exit_code"], 8);
    EXPECT_NE(rows.at("c")["error"].get<std::string>().find("c_albedo.png"), std::string::npos) << rows.at("c");
    EXPECT_NE(rows.at("c")["error"].get<std::string>().find("Not enough image data"), std::string::npos)
        << rows.at("c");
    const Json& totals = report["totals"];
    EXPECT_EQ(totals["pack_bytes"].get<uint64_t>(),
              rows.at("a")["pack_bytes"].get<uint64_t>() + rows.at("b")["pack_bytes"].get<uint64_t>());
    EXPECT_DOUBLE_EQ(totals["min_psnr_db"].get<double>(),
                     std::min(rows.at("a")["psnr_db"].get<double>(), rows.at("b")["psnr_db"].get<double>()));
    const std::string md = slurp(out + "/report.md");
    EXPECT_NE(md.find("--address-mode clamp --resample --min-psnr 99"), std::string::npos) << md;
    EXPECT_NE(md.find("\n| total |"), std::string::npos) << md;
    EXPECT_NE(md.find("## Warnings\n\n- b: "), std::string::npos) << md;

    // Without the gate the same packs are up to date: the gate judged them, it did not make them stale.
    r = run_nmc(fast_batch(root + " -o " + out + " --address-mode clamp --resample"), dir.path());
    EXPECT_EQ(r.exit_code, 9) << r.out << r.err;  // c still fails
    const std::map<std::string, Json> again = report_rows(out);
    EXPECT_EQ(again.at("a")["status"], "skipped");
    EXPECT_EQ(again.at("b")["status"], "skipped");
}

// A map the pack does not reproduce (compress's collapse rule, as in CompressCli.CollapsedMapIsReportedAndAFlatOneIsNot:
// two training steps) is listed per material in report.json, .md and .csv, and still when the pack is up to date.
TEST(BatchCli, ReportListsCollapsedMaps) {
    TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    fs::create_directories(root + "/crate");
    nmc::test::write_png(root + "/crate/crate_albedo.png", nmc::test::make_image(16, 16, 3, nmc::test::code));
    nmc::test::write_png(root + "/crate/crate_roughness.png", nmc::test::make_image(16, 16, 1, [](int x, int y, int) {
        return static_cast<float>(x * 7 + y * 3) / 256.0f;
    }));
    const std::string batch = "-q batch " + root + " -o " + out + " --quality fast --steps 2 --bpp 600";
    for (const char* status : {"ok", "skipped"}) {
        SCOPED_TRACE(status);
        const CommandResult r = run_nmc(batch, dir.path());
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const Json report = read_json(out + "/report.json");
        const std::map<std::string, Json> rows = report_rows(out);
        const Json& row = rows.at("crate");
        EXPECT_EQ(row["status"], status);
        ASSERT_TRUE(row["collapsed_textures"].is_array()) << row;
        EXPECT_NE(std::find(row["collapsed_textures"].begin(), row["collapsed_textures"].end(), "crate_roughness"),
                  row["collapsed_textures"].end())
            << row;
        EXPECT_EQ(report["totals"]["collapsed_textures"], row["collapsed_textures"].size());
        const std::string md = slurp(out + "/report.md");
        EXPECT_NE(md.find("## Collapsed maps\n"), std::string::npos) << md;
        EXPECT_NE(md.find("\n- crate: crate_roughness"), std::string::npos) << md;
        std::istringstream csv(slurp(out + "/report.csv"));
        std::string header, line;
        ASSERT_TRUE(std::getline(csv, header));
        EXPECT_NE(header.find(",warnings,collapsed_textures"), std::string::npos) << header;
        ASSERT_TRUE(std::getline(csv, line));
        // RFC 4180 fields: the warnings' text holds commas and is quoted.
        const auto fields = [](const std::string& text) {
            std::vector<std::string> split(1);
            bool quoted = false;
            for (size_t i = 0; i < text.size(); ++i) {
                if (text[i] == '"' && quoted && i + 1 < text.size() && text[i + 1] == '"') {
                    split.back() += '"';
                    ++i;
                } else if (text[i] == '"') {
                    quoted = !quoted;
                } else if (text[i] == ',' && !quoted) {
                    split.emplace_back();
                } else {
                    split.back() += text[i];
                }
            }
            return split;
        };
        const std::vector<std::string> names = fields(header), values = fields(line);
        const size_t column = static_cast<size_t>(
            std::find(names.begin(), names.end(), "collapsed_textures") - names.begin());
        ASSERT_LT(column, values.size()) << line;
        EXPECT_NE(values[column].find("crate_roughness"), std::string::npos) << line;
    }
}

}  // namespace

