// The tuning database under hostile but realistic use: installed read-only for other users,
// tuners started together on a new file, tuners killed mid-compile, planted garbage cubins.
#include <fmt/format.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::query_int;
using testing::query_text;
using testing::run_tool;
using testing::TempDir;

const std::string kQuick = TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";
constexpr int kNobody = 65534;

Problem square(int64_t n) { return Problem::packed(GemmTypes{}, Op::N, Op::N, n, n, n); }

// One tuned problem (trial and best) on a made-up device.
void record_best(TuningDb& db, int64_t n) {
  DeviceInfo device;
  device.name = "Test GPU";
  device.arch = "sm_90";
  device.sm_count = 132;
  const KernelConfig config = testing::labelled_sgemm_config(1);
  const int64_t run = db.begin_run("test", "tgemm test", "sm_90");
  const int64_t device_id = db.upsert_device(device);
  const int64_t problem = db.upsert_problem(square(n));
  const int64_t kernel = db.upsert_kernel(config, "hash");
  TrialResult trial;
  trial.config = config;
  trial.status = TrialStatus::ok;
  trial.time_min_us = trial.time_median_us = trial.time_max_us = 10;
  trial.runs = 5;
  db.record_trial(run, problem, kernel, device_id, std::nullopt, trial);
  db.update_best(problem, device_id);
}

// --- read-only installs ----------------------------------------------------------------

// How this test runs a command as an ordinary user: as is when not root, else through
// setpriv or runuser; empty when root has neither.
std::string unprivileged_prefix() {
  if (::geteuid() != 0) return " ";
  if (std::system("command -v setpriv >/dev/null 2>&1") == 0)
    return fmt::format("setpriv --reuid={0} --regid={0} --clear-groups -- ", kNobody);
  if (std::system("command -v runuser >/dev/null 2>&1") == 0) return "runuser -u nobody -- ";
  return "";
}

testing::CliResult run_unprivileged(const std::string& prefix, const std::string& tool,
                                    const std::string& args) {
  const std::string command =
      prefix + std::string(TGEMM_TOOLS_DIR) + "/" + tool + " " + args + " 2>&1 </dev/null";
  testing::CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// The library's read-only open as an ordinary user, in a child process: the best entries
// it reads (as the exit code), or 100 and the error on stderr.
int best_entries_as_nobody(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (::geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0))
      _exit(101);
    try {
      TuningDb db(path, TuningDb::Mode::read_only);
      _exit(int(db.best_entries().size()));
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", e.what());
      _exit(100);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// An install folder as a package would make it: root-owned 0755, the files 0644.
class InstallDir {
 public:
  explicit InstallDir(const std::string& tag) : dir_(tag) {}
  std::string install(const std::string& source, const std::vector<std::string>& suffixes) {
    const std::string dest = dir_.file("tgemm.db");
    for (const std::string& suffix : suffixes) {
      fs::copy_file(source + suffix, dest + suffix);
      fs::permissions(dest + suffix, fs::perms(0644));
    }
    fs::permissions(dest, fs::perms(0644));
    fs::permissions(fs::path(dest).parent_path(), fs::perms(0755));
    return dest;
  }

 private:
  TempDir dir_;
};

class ReadOnlyInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = unprivileged_prefix();
    if (prefix_.empty()) GTEST_SKIP() << "running as root without setpriv or runuser";
    // The temp folders must be reachable by the ordinary user.
    fs::permissions(fs::path(work_.file("x")).parent_path(), fs::perms(0755));
  }
  void expect_readable(const std::string& path, const std::vector<int64_t>& sizes) {
    auto r = run_unprivileged(prefix_, "tgemm-db", "--db " + path + " list");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (int64_t n : sizes)
      EXPECT_NE(r.output.find(square(n).key()), std::string::npos) << n << "\n" << r.output;
    EXPECT_EQ(best_entries_as_nobody(path), int(sizes.size()));
  }
  std::string prefix_;
  TempDir work_{"ro_work"};
};

TEST_F(ReadOnlyInstall, finished_database_is_readable_by_another_user) {
  const std::string db = work_.file("tuned.db");
  {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 64);
  }
  InstallDir opt("ro_opt");
  expect_readable(opt.install(db, {""}), {64});
}

TEST_F(ReadOnlyInstall, wal_mode_file_without_its_wal_is_readable_by_another_user) {
  // What an older tgemm-tune left: the header says WAL, no -wal or -shm beside it.
  const std::string db = work_.file("tuned.db");
  {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 64);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  ASSERT_FALSE(fs::exists(db + "-wal"));
  InstallDir opt("ro_opt");
  expect_readable(opt.install(db, {""}), {64});
}

TEST_F(ReadOnlyInstall, files_left_by_a_killed_tuner_are_readable_by_another_user) {
  const std::string db = work_.file("tuned.db");
  {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 64);
  }
  // A child writes a second problem and dies without closing: it lives only in the -wal.
  const pid_t pid = fork();
  if (pid == 0) {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 128);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(fs::exists(db + "-wal") && fs::exists(db + "-shm"));
  InstallDir opt("ro_opt");
  expect_readable(opt.install(db, {"", "-wal", "-shm"}), {64, 128});
}

TEST_F(ReadOnlyInstall, wal_that_cannot_be_read_is_named_not_skipped) {
  // The -wal holds a committed problem but its -shm was not installed: reading only the main
  // file would silently lose that problem.
  const std::string db = work_.file("tuned.db");
  {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 64);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    TuningDb writer(db, TuningDb::Mode::read_write);
    record_best(writer, 128);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  InstallDir opt("ro_opt");
  const std::string path = opt.install(db, {"", "-wal"});
  auto r = run_unprivileged(prefix_, "tgemm-db", "--db " + path + " list");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("'" + path + "-wal'"), std::string::npos) << r.output;
  EXPECT_EQ(best_entries_as_nobody(path), 100);
}

// --- damaged files ------------------------------------------------------------------------

TEST(DbDamage, tools_refuse_a_damaged_file_on_open_naming_it) {
  TempDir dir("damage");
  const std::string db = dir.file("t.db");
  {
    TuningDb writer(db, TuningDb::Mode::read_write);
    for (int64_t n = 1; n <= 40; ++n) record_best(writer, n);
  }
  // Garbage over the first page of the trials table; tgemm-db list never reads it.
  const int64_t root =
      query_int(db, "select rootpage from sqlite_schema where type='table' and name='trials'");
  const int64_t page_size = query_int(db, "pragma page_size");
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root - 1) * page_size);
    const std::string garbage(size_t(page_size), '\x33');
    f.write(garbage.data(), std::streamsize(garbage.size()));
  }
  const std::string before = testing::read_bytes(db);
  auto list = run_tool("tgemm-db", "--db " + db + " list");
  EXPECT_NE(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("'" + db + "' is damaged"), std::string::npos) << list.output;
  auto tune = run_tool("tgemm-tune",
                       "--compile-only --arch sm_75 --shapes " + kQuick + " --budget 1 --db " + db);
  EXPECT_NE(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("'" + db + "' is damaged"), std::string::npos) << tune.output;
  EXPECT_EQ(testing::read_bytes(db), before);
}

// --- concurrent first launches ---------------------------------------------------------

// A one-point space whose constraint also rejects every shipped default (none has TM=2):
// each launch compiles one small kernel, so a round is quick.
std::string one_config_space(const TempDir& dir) {
  return dir.write(
      "one.yaml",
      "template: sgemm_simt\nparameters:\n  BM: [32]\n  BN: [32]\n  BK: [8]\n"
      "  TM: [2]\n  TN: [2]\n  WARP_N: [8]\n  VEC: [1]\n  PAD_A: [0]\n"
      "  PAD_B: [0]\n  STAGES: [1]\n  SPLIT_K: [1]\n  SWIZZLE: [1]\n  MIN_BLOCKS: [1]\n"
      "constraints:\n  - {expr: \"TM == 2\", reason: \"the test's one config\"}\n");
}

TEST(DbConcurrency, three_tuners_started_together_on_a_new_file_all_succeed_20_times) {
  TempDir dir("first_launch");
  const std::string space = one_config_space(dir);
  int failures = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string db = dir.file(fmt::format("race{}.db", round));
    std::vector<testing::CliResult> results(3);
    std::vector<std::thread> launches;
    for (auto& r : results)
      launches.emplace_back([&, out = &r] {
        *out = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kQuick +
                                          " --space " + space + " --db " + db + " --jobs 1");
      });
    for (auto& t : launches) t.join();
    for (auto& r : results) {
      if (r.exit_code != 0) ++failures;
      EXPECT_EQ(r.exit_code, 0) << "round " << round << ": " << r.output;
    }
    EXPECT_EQ(query_int(db, "select count(*) from runs where finished_at is not null"), 3);
  }
  EXPECT_EQ(failures, 0);
}

// --- SIGKILL mid-compile ----------------------------------------------------------------

pid_t spawn_tuner(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    const std::string tool = std::string(TGEMM_TOOLS_DIR) + "/tgemm-tune";
    argv.push_back(const_cast<char*>(tool.c_str()));
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(tool.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// "N compiled, M from cache" of the summary line; {-1, -1} when absent.
std::pair<int64_t, int64_t> compiled_and_cached(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("(\\d+) compiled, (\\d+) from cache")))
    return {-1, -1};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

TEST(DbKill, five_kills_mid_compile_lose_only_the_cubins_in_flight) {
  TempDir dir("kill");
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::string> args = {
      "--compile-only", "--arch", "sm_75",      "--shapes", kQuick, "--budget", "6",
      "--jobs",         "2",      "--strategy", "random"};
  for (int round = 0; round < 5; ++round) {
    const std::string db = dir.file(fmt::format("kill{}.db", round));
    std::vector<std::string> with_db = args;
    with_db.insert(with_db.end(), {"--db", db});
    // 18 configs: kill once a random number of them is stored, plus a random moment.
    const int64_t target = std::uniform_int_distribution<int64_t>(1, 12)(rng);
    const pid_t pid = spawn_tuner(with_db);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      if (query_int(db, "select count(*) from binaries") >= target) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 150)(rng)));
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    ASSERT_FALSE(exited) << "round " << round << ": the tuner finished before " << target
                         << " cubins were in the database";
    const int64_t stored = query_int(db, "select count(*) from binaries");
    EXPECT_EQ(query_int(db, "select count(*) from runs where finished_at is null"), 1);

    std::string cmd;
    for (auto& a : with_db) cmd += a + " ";
    auto rerun = run_tool("tgemm-tune", cmd);
    ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
    const auto [compiled, cached] = compiled_and_cached(rerun.output);
    const int64_t total = query_int(db, "select count(*) from kernels");
    EXPECT_GE(stored, target) << "round " << round;
    EXPECT_LT(stored, total) << "round " << round << ": killed after the layout was stored";
    EXPECT_EQ(cached, stored) << "round " << round << ": " << rerun.output;
    EXPECT_LE(compiled, total - stored) << rerun.output;
    EXPECT_EQ(query_int(db, "select count(*) from binaries"), total);
    EXPECT_EQ(query_text(db, "PRAGMA integrity_check"), "ok") << "round " << round;
  }
}

// --- planted garbage ---------------------------------------------------------------------

TEST(DbChecksum, tuner_recompiles_a_planted_garbage_cubin) {
  TempDir dir("garbage");
  const std::string db = dir.file("t.db");
  const std::string args = "--compile-only --arch sm_75 --shapes " + kQuick + " --space " +
                           one_config_space(dir) + " --db " + db;
  ASSERT_EQ(run_tool("tgemm-tune", args).exit_code, 0);
  const std::string first = "select hex(cubin) from binaries order by id limit 1";
  const std::string good = query_text(db, first);
  const int64_t total = query_int(db, "select count(*) from binaries");
  ASSERT_FALSE(good.empty());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "UPDATE binaries SET cubin = X'7f454c46deadbeef' "
                         "WHERE id = (SELECT min(id) FROM binaries)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);

  auto rerun = run_tool("tgemm-tune", args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_EQ(compiled_and_cached(rerun.output), std::make_pair(int64_t(1), total - 1))
      << rerun.output;
  EXPECT_EQ(query_text(db, first), good);
  EXPECT_EQ(query_int(db, "select count(*) from binaries"), total);
}

}  // namespace
}  // namespace tgemm
