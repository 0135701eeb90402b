// The files tgemm-db writes (merge, prune, vacuum, report --out, export --output) against a
// hostile folder: links planted at the output or at any scratch name, a full disk, a signal
// mid-write. An output is never written through a link, never half written, and nothing is
// left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/tuning_db.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/result_databases.h"

extern char** environ;

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::query_int;
using testing::read_bytes;
using testing::run_shell;
using testing::run_tool;
using testing::TempDir;

const std::string kDb = std::string(TGEMM_TOOLS_DIR) + "/tgemm-db";

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// The names in `dir`, sorted.
std::set<std::string> entries(const TempDir& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(dir.file("")).parent_path()))
    names.insert(e.path().filename().string());
  return names;
}

bool is_link(const std::string& path) { return fs::is_symlink(fs::symlink_status(path)); }

struct Folder {
  TempDir dir{"outputs"};
  std::string db = testing::unpack_tuned_database(dir);
  std::string victim = dir.write("victim", "keep me");
};

// Every command that writes OUT, as the shell words after tgemm-db.
std::vector<std::string> writers(const Folder& f, const std::string& out) {
  return {"merge " + out + " " + f.db, "--db " + f.db + " prune " + out,
          "--db " + f.db + " vacuum " + out, "--db " + f.db + " report --out " + out,
          "--db " + f.db + " export --format json --output " + out};
}

// The scratch name a writer used to open (OUT.writing-<pid>, following links), planted by the
// shell that then becomes the tool: $$ is the tool's pid.
TEST(OutputFiles, a_link_planted_at_the_scratch_name_is_never_written_through) {
  Folder f;
  const std::string out = f.dir.file("out");
  for (const std::string& command : writers(f, out)) {
    const CliResult r =
        run_shell("ln -s " + f.victim + " " + out + ".writing-$$ && exec " + kDb + " " + command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    EXPECT_EQ(read_bytes(f.victim), "keep me") << command;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out))) << command;
    EXPECT_GT(fs::file_size(out), 1000u) << command;
    fs::remove(out);
    for (const std::string& name : entries(f.dir))
      if (name.rfind("out.writing-", 0) == 0) fs::remove(f.dir.file(name));
  }
  // A dangling link is not followed either: nothing appears where it points.
  const std::string ghost = f.dir.file("ghost.db");
  for (const std::string& command : writers(f, out)) {
    run_shell("ln -s " + ghost + " " + out + ".writing-$$ && exec " + kDb + " " + command);
    EXPECT_FALSE(fs::exists(ghost)) << command;
    fs::remove(out);
  }
}

TEST(OutputFiles, an_output_that_is_a_link_is_refused_and_what_it_points_to_kept) {
  Folder f;
  const std::string link = f.dir.file("link.out");
  fs::create_symlink(f.victim, link);
  for (const std::string& command : writers(f, link)) {
    const CliResult r = run_tool("tgemm-db", command);
    EXPECT_NE(r.exit_code, 0) << command << "\n" << r.output;
    EXPECT_HAS(r.output, "'" + link + "'");
    EXPECT_EQ(read_bytes(f.victim), "keep me") << command;
    EXPECT_TRUE(is_link(link)) << command;
  }
  // A dangling one: the databases refuse it as they refuse any existing OUT, the text outputs
  // as a link; nothing is made where it points.
  const std::string dangling = f.dir.file("dangling.out"), ghost = f.dir.file("ghost");
  fs::create_symlink(ghost, dangling);
  for (const std::string& command : writers(f, dangling)) {
    const CliResult r = run_tool("tgemm-db", command);
    EXPECT_NE(r.exit_code, 0) << command << "\n" << r.output;
    EXPECT_FALSE(fs::exists(ghost)) << command;
  }
  const CliResult report = run_tool("tgemm-db", "--db " + f.db + " report --out " + link);
  EXPECT_HAS(report.output, "symbolic link");
}

// A regular file already there is replaced whole by a report or an export, atomically.
TEST(OutputFiles, report_and_export_replace_a_regular_file_whole) {
  Folder f;
  for (const std::string& command :
       {"--db " + f.db + " report --out " + f.victim,
        "--db " + f.db + " export --format csv --output " + f.victim}) {
    std::ofstream(f.victim) << "old";
    const CliResult r = run_tool("tgemm-db", command);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(fs::file_size(f.victim), 1000u) << command;
  }
  EXPECT_EQ(entries(f.dir), (std::set<std::string>{fs::path(f.db).filename(), "victim"}));
}

// A disk that fills mid-write (RLIMIT_FSIZE: writes past 512 bytes fail with EFBIG): the
// command fails naming its output, an existing output keeps its bytes, nothing is left over.
TEST(OutputFiles, a_full_disk_fails_the_command_and_leaves_nothing_behind) {
  Folder f;
  const std::string out = f.dir.file("out");
  const std::set<std::string> before = entries(f.dir);
  for (const std::string& command : writers(f, out)) {
    const CliResult r = run_shell("trap '' XFSZ; ulimit -f 1 && exec " + kDb + " " + command);
    EXPECT_NE(r.exit_code, 0) << command << "\n" << r.output;
    EXPECT_EQ(entries(f.dir), before) << command << "\n" << r.output;
  }
  for (const std::string& command :
       {"--db " + f.db + " report --out " + f.victim,
        "--db " + f.db + " export --format csv --output " + f.victim}) {
    const CliResult r = run_shell("trap '' XFSZ; ulimit -f 1 && exec " + kDb + " " + command);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_HAS(r.output, "'" + f.victim + "'");
    EXPECT_EQ(read_bytes(f.victim), "keep me") << command;
    EXPECT_EQ(entries(f.dir), before) << command;
  }
}

// Starts tgemm-db with SIGINT, SIGTERM and SIGHUP at their defaults (a test runner may ignore
// them) and returns its pid.
pid_t spawn_db(const std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(kDb.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, kDb.c_str(), &actions, &attr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// A merge of many inputs killed once its scratch files exist: the signal still ends it, and
// the scratch database with its -wal and -shm is gone with it.
TEST(OutputFiles, a_signal_mid_merge_leaves_no_scratch_files) {
  Folder f;
  const std::set<std::string> before = entries(f.dir);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    std::vector<std::string> args{"merge", f.dir.file("all.db")};
    for (int i = 0; i < 60; ++i) args.push_back(f.db);
    const pid_t pid = spawn_db(args);
    ASSERT_GT(pid, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (entries(f.dir) == before && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // SQLite is writing by now
    ASSERT_EQ(::kill(pid, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "signal " << sig;
    EXPECT_EQ(entries(f.dir), before) << "signal " << sig;
  }
}

// A name with spaces and quotes: the scratch folder sits beside OUT whatever its name.
TEST(OutputFiles, outputs_with_odd_names_are_written_beside_them) {
  Folder f;
  const std::string out = f.dir.file("my 'merged' db");
  const CliResult r = run_tool("tgemm-db", "merge \"" + out + "\" " + f.db);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(query_int(out, "PRAGMA user_version"), TuningDb::schema_version());
}

}  // namespace
}  // namespace tgemm
