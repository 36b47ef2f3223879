// `nmc batch` as a Slurm array job (scripts/slurm/), end to end on a one-node cluster on loopback
// (loopback_slurm.sh: munged, slurmctld and slurmd in a temporary folder): three shards, one task's nmc killed with
// `scancel --signal=KILL` while it compresses and the task requeued, the merge job's report; then the same tree
// through `nmc batch -j 2` on this machine, whose packs must be the array's, byte for byte. About a minute on two
// loaded cores; everything the cluster ran is stopped at the end, and by its own watchdog if this test dies.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch.h"
#include "tests/batch/material_tree.h"
#include "tests/cli/nmc_process.h"
#include "tests/format/pack_equality.h"
#include "tests/material/test_support.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Shell {
    int exit_code = -1;
    std::string out;  // stdout; stderr goes to the test's
};

Shell shell(const std::string& command) {
    Shell r;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return r;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

const std::string kScripts = std::string(NMC_SOURCE_DIR) + "/scripts/slurm";
const std::string kLoopback = std::string(NMC_SOURCE_DIR) + "/tests/batch/loopback_slurm.sh";
// The whole test's bound: the cluster's watchdog stops everything after it, and every wait below gives up by then.
constexpr int kClusterSeconds = 420;
// The settings of every compress: 20 steps on 16x16 texels take about a second, mostly LibTorch's start-up.
const std::string kSettings = "--quality fast --steps 20 --bpp 600 --seed 7";

// The loopback cluster, stopped when the test ends however it ends.
class LoopbackCluster {
public:
    explicit LoopbackCluster(std::string dir) : dir_(std::move(dir)) {
        start_code_ = shell("bash " + kLoopback + " start " + dir_ + " " + std::to_string(kClusterSeconds)).exit_code;
    }
    ~LoopbackCluster() { shell("bash " + kLoopback + " stop " + dir_); }
    LoopbackCluster(const LoopbackCluster&) = delete;
    LoopbackCluster& operator=(const LoopbackCluster&) = delete;
    int start_code() const { return start_code_; }
    // A Slurm command (or a script calling them) against this cluster.
    Shell run(const std::string& command) const { return shell("SLURM_CONF=" + dir_ + "/slurm.conf " + command); }
    // A field of `scontrol show job` ("" when the job or field is unknown).
    std::string job_field(const std::string& job, const std::string& field) const {
        const std::string text = run("scontrol -o show job " + job + " 2>/dev/null").out;
        std::smatch found;
        if (!std::regex_search(text, found, std::regex("(^| )" + field + "=([^ ]*)"))) return "";
        return found[2].str();
    }

private:
    std::string dir_;
    int start_code_ = -1;
};

bool wait_until(Clock::time_point deadline, const std::function<bool()>& done) {
    while (Clock::now() < deadline) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
}

TEST(SlurmArray, KilledTaskIsRequeuedAndTheMergedReportListsEveryMaterialOnce) {
    nmc::test::TempDir dir;
    const std::string root = dir.file("assets"), out = dir.file("out");
    // Five materials whose paths put three in one shard (the one whose task is killed) and one in each other.
    std::map<std::string, int> shard;
    std::map<int, std::vector<std::string>> in_shard;
    int variant = 0;
    for (const std::string rel : {"wood/m0", "rocks/m1", "rocks/m3", "wood/m4", "rocks/m7"}) {
        nmc::test::write_material(root + "/" + rel, fs::path(rel).filename().string(), variant++);
        shard[rel] = nmc::shard_of(rel, 3);
        in_shard[shard[rel]].push_back(rel);
    }
    ASSERT_EQ(in_shard.size(), 3u) << "every shard must have a material";
    int victim = 0;
    for (const auto& [s, materials] : in_shard)
        if (materials.size() > in_shard[victim].size()) victim = s;
    ASSERT_EQ(in_shard[victim].size(), 3u);

    LoopbackCluster cluster(dir.file("cluster"));
    if (cluster.start_code() == 77) GTEST_SKIP() << "a loopback Slurm cluster needs root";
    ASSERT_EQ(cluster.start_code(), 0) << "the loopback Slurm cluster did not start";
    const auto deadline = Clock::now() + std::chrono::seconds(kClusterSeconds - 30);

    const Shell submitted = cluster.run("bash " + kScripts + "/submit.sh --shards 3 --cpus-per-task 1 --nmc " +
                                        nmc::test::nmc_binary() + " " + root + " " + out + " -- " + kSettings);
    ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
    std::smatch ids;
    ASSERT_TRUE(std::regex_search(submitted.out, ids, std::regex("array_job=([0-9]+) merge_job=([0-9]+)")))
        << submitted.out;
    const std::string array_job = ids[1].str(), merge_job = ids[2].str();
    const std::string victim_task = array_job + "_" + std::to_string(victim);

    // Kill the victim's nmc once it has finished one material and before it finished all.
    const auto records_of_victim = [&] {
        size_t n = 0;
        for (const std::string& rel : in_shard[victim]) n += fs::exists(out + "/" + rel + ".nmc.state.json");
        return n;
    };
    ASSERT_TRUE(wait_until(deadline, [&] { return records_of_victim() >= 1; }))
        << "shard " << victim << " never started";
    ASSERT_LT(records_of_victim(), in_shard[victim].size()) << "shard " << victim << " finished before it was killed";
    const std::string raw_job = cluster.job_field(victim_task, "JobId");
    ASSERT_FALSE(raw_job.empty());
    const Shell killed = cluster.run("scancel --signal=KILL " + raw_job + ".0");
    ASSERT_EQ(killed.exit_code, 0);

    ASSERT_TRUE(wait_until(deadline, [&] {
        const std::string state = cluster.job_field(merge_job, "JobState");
        return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED";
    })) << "the merge job did not end in time";
    EXPECT_EQ(cluster.job_field(merge_job, "JobState"), "COMPLETED") << cluster.job_field(merge_job, "ExitCode");
    EXPECT_EQ(cluster.job_field(raw_job, "Restarts"), "1") << "the killed task was not requeued once";
    for (int s = 0; s < 3; ++s)
        EXPECT_EQ(cluster.job_field(array_job + "_" + std::to_string(s), "JobState"), "COMPLETED") << "task " << s;

    // Every material compressed exactly once over every run of every task (the logs are appended across requeues):
    // the killed run's finished packs are up to date for its second run, and its interrupted one is done there.
    std::map<std::string, int> compressed;
    const std::regex finished_line("batch [0-9]+/[0-9]+ ok ([^ ]+) ");
    for (const auto& e : fs::directory_iterator(out + "/slurm-logs")) {
        const std::string log = nmc::test::slurp(e.path().string());
        for (std::sregex_iterator it(log.begin(), log.end(), finished_line), end; it != end; ++it)
            ++compressed[(*it)[1].str()];
    }
    for (const auto& [rel, s] : shard) EXPECT_EQ(compressed[rel], 1) << rel << " (shard " << s << ")";
    EXPECT_EQ(compressed.size(), shard.size());
    const std::string victim_log =
        nmc::test::slurp(out + "/slurm-logs/nmc-batch-" + array_job + "_" + std::to_string(victim) + ".log");
    EXPECT_NE(victim_log.find("requeueing the task"), std::string::npos) << victim_log;
    EXPECT_NE(victim_log.find("run 2,"), std::string::npos) << victim_log;

    // One merged report listing every material, each pack valid.
    const Json report = Json::parse(nmc::test::slurp(out + "/report.json"), nullptr, false);
    ASSERT_TRUE(report.is_object()) << "no merged report";
    std::set<std::string> listed;
    for (const Json& m : report["materials"]) {
        listed.insert(m["material"].get<std::string>());
        EXPECT_EQ(m["status"], "ok") << m.dump();
    }
    std::set<std::string> all;
    for (const auto& [rel, s] : shard) all.insert(rel);
    EXPECT_EQ(listed, all);
    for (const std::string& rel : all) {
        const auto validated = nmc::test::run_nmc("-q validate " + out + "/" + rel + ".nmc", dir.path());
        EXPECT_EQ(validated.exit_code, 0) << rel << ": " << validated.err;
    }
    for (const auto& e : fs::recursive_directory_iterator(out))
        EXPECT_EQ(e.path().string().find(".claim"), std::string::npos) << e.path();

    // The same tree through one machine's batch: the same packs, byte for byte but for the recorded training time.
    const auto local =
        nmc::test::run_nmc("-q batch " + root + " -o " + dir.file("local") + " -j 2 " + kSettings, dir.path());
    ASSERT_EQ(local.exit_code, 0) << local.err;
    for (const std::string& rel : all) {
        const std::vector<uint8_t> from_array =
            nmc::testing::pack_bytes_without_training_time(out + "/" + rel + ".nmc");
        ASSERT_FALSE(from_array.empty()) << rel;
        EXPECT_TRUE(from_array ==
                    nmc::testing::pack_bytes_without_training_time(dir.file("local") + "/" + rel + ".nmc"))
            << rel << ": the Slurm array and nmc batch -j 2 made different packs";
    }
}

}  // namespace
