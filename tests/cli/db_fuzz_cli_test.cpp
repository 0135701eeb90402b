// A real tuned database (tests/data/databases, an H200's TF32 run) with one targeted corruption
// per case: NULLs, negative, NaN and huge values, bad parameters, dangling references, truncated
// and foreign cubins with and without a matching checksum, planted SQL objects, random byte
// flips (fixed seeds). Every tgemm-db subcommand and a library open run on each: none may die of
// a signal, hang, write an output after a failed check, change its input, leave files behind, or
// exit 0 having printed a wrong value.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/dispatch/kernel_selector.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/result_databases.h"
#include "tests/common/sql_edit.h"
#include "tgemm/tgemm_c.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;
using testing::edit_database;
using testing::TempDir;

// --- the corruptions ----------------------------------------------------------------------

// NULL in a NOT NULL column: the schema is relaxed for the edit and put back, as a foreign
// writer without the constraint would leave it.
void set_null(const std::string& path, const std::string& table, const std::string& column) {
  const std::string schema =
      testing::query_text(path, "SELECT sql FROM sqlite_schema WHERE name = '" + table + "'");
  std::string literal = "'";
  for (char c : schema) literal += c == '\'' ? std::string("''") : std::string(1, c);
  literal += "'";
  edit_database(path,
                "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, "
                "'NOT NULL', '') WHERE name = '" +
                    table + "'");
  edit_database(path, "UPDATE " + table + " SET " + column + " = NULL");
  edit_database(path, "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = " + literal +
                          " WHERE name = '" + table + "'");
}

// Every cubin replaced by `replace(cubin)`, its checksum fixed to match or left as it was.
void replace_cubins(const std::string& path,
                    const std::function<std::vector<char>(const std::vector<char>&)>& replace,
                    bool fix_checksum) {
  std::vector<std::pair<std::string, std::vector<char>>> replaced;
  {
    TuningDb db(path, TuningDb::Mode::read_only);
    for (const std::string id : {"2", "50"}) {
      const auto found = db.find_binary(
          testing::query_text(path, "SELECT cache_key FROM binaries WHERE id = " + id));
      ASSERT_TRUE(found) << "binary " << id;
      replaced.emplace_back(id, replace(found->compiled.cubin));
    }
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  for (const auto& [id, bytes] : replaced) {
    sqlite3_stmt* stmt = nullptr;
    const std::string sql = fix_checksum
                                ? "UPDATE binaries SET cubin = ?1, checksum = ?2 WHERE id = " + id
                                : "UPDATE binaries SET cubin = ?1 WHERE id = " + id;
    ASSERT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    sqlite3_bind_blob(stmt, 1, bytes.data(), int(bytes.size()), SQLITE_TRANSIENT);
    const std::string sum = cubin_checksum(bytes);
    if (fix_checksum) sqlite3_bind_text(stmt, 2, sum.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(raw);
}

std::function<void(const std::string&)> cubins_cut_to(size_t bytes, bool fix_checksum) {
  return [=](const std::string& path) {
    replace_cubins(
        path,
        [bytes](const std::vector<char>& in) {
          return std::vector<char>(in.begin(), in.begin() + std::min(bytes, in.size()));
        },
        fix_checksum);
  };
}

// Random bytes of the cubin's size (seeded), from the ELF header on or only past it.
std::function<void(const std::string&)> cubins_randomized(bool keep_elf_header) {
  return [=](const std::string& path) {
    replace_cubins(
        path,
        [keep_elf_header](std::vector<char> cubin) {
          std::mt19937 rng(7);
          for (size_t i = keep_elf_header ? 64 : 0; i < cubin.size(); ++i) cubin[i] = char(rng());
          return cubin;
        },
        true);
  };
}

// `flips` random bits of the file flipped (seeded), past its 100-byte header or anywhere.
void flip_bits(const std::string& path, unsigned seed, int flips, bool header_too) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  const auto size = int64_t(fs::file_size(path));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < flips; ++i) {
    const int64_t first = header_too ? 0 : 100;
    const int64_t at = first + int64_t(rng() % uint64_t(size - first));
    file.seekg(at);
    char byte = 0;
    file.read(&byte, 1);
    byte = char(byte ^ (1 << (rng() % 8)));
    file.seekp(at);
    file.write(&byte, 1);
  }
}

// What a run may do wrong. A case that meets a defect of another item of issue 42, still open,
// names it and the findings it excuses; every other finding fails the case.
enum class Finding { signal, hang, output_after_failure, input_changed, files_left, wrong_value };

const char* describe(Finding f) {
  switch (f) {
    case Finding::signal:
      return "died of a signal";
    case Finding::hang:
      return "hung";
    case Finding::output_after_failure:
      return "wrote its output after a failure";
    case Finding::input_changed:
      return "changed its input";
    case Finding::files_left:
      return "left files behind";
    case Finding::wrong_value:
      return "exited 0 with a wrong value";
  }
  return "";
}

struct Case {
  std::string name;
  std::function<void(const std::string& path)> corrupt;
};

std::function<void(const std::string&)> sql(const std::string& statements) {
  return [statements](const std::string& path) { edit_database(path, statements); };
}

// The best kernel of the 4096 shape made an sgemm_warp config with VEC=0 on an f32 TN problem:
// sgemm_warp's host side takes A's alignment modulo VEC * 4 bytes.
const char* const kVecZero =
    "UPDATE problems SET dtype = 'f32', layout = 'TN', key = "
    "'f32_TN_m4096_n4096_k4096_b0_a16.16.16' WHERE id = 1; UPDATE kernels SET template = "
    "'sgemm_warp', params = 'BM=128,BN=128,BK=8,WM=64,WN=32,TM=8,TN=4,STAGES=3,VEC=0,SPLIT_K=1,"
    "TAIL_SPLIT=1,SWIZZLE=1,MIN_BLOCKS=1,PACK_B=0' WHERE id = (SELECT kernel_id FROM trials WHERE "
    "id = (SELECT trial_id FROM best WHERE problem_id = 1))";

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"untouched", [](const std::string&) {}},
      // NULLs
      {"nulls_in_not_null_columns",
       [](const std::string& p) {
         set_null(p, "trials", "time_median_us");
         set_null(p, "problems", "m");
         set_null(p, "devices", "name");
       }},
      {"null_cubin_of_ok_binary", sql("UPDATE binaries SET cubin = NULL, checksum = NULL")},
      // negative, NaN, huge values and text where numbers belong
      // The 4096 shape's row grown to m = 2^40, n = 2^63 - 1 must not be listed with the 4096
      // trial's figures.
      {"bad_sizes_and_device_figures",
       sql("UPDATE problems SET m = 1 << 40, n = 9223372036854775807 WHERE id = 1; "
           "UPDATE problems SET lda = -1, ldb = 0, align_a = 3, align_c = -16 WHERE id = 2; "
           "UPDATE devices SET sm_count = 0, l2_bytes = -1, clock_khz = 0, "
           "smem_per_block_optin = -5")},
      {"text_in_numeric_columns",
       sql("UPDATE problems SET m = '4096x', k = x'00ff' WHERE id = 3; UPDATE devices SET "
           "sm_count = 'many'; UPDATE trials SET runs = 'x', problem_id = 'one' WHERE id = 3")},
      {"bad_ceilings",
       sql("UPDATE device_ceilings SET value = -1 WHERE kind = 'f32_ffma'; "
           "UPDATE device_ceilings SET value = 9e999 WHERE kind = 'tf32'; "
           "UPDATE device_ceilings SET value = 'nan' WHERE kind = 'copy_bandwidth'")},
      {"checks_broken", sql("UPDATE problems SET beta_zero = 7, layout = 'XY' WHERE id = 1; "
                            "UPDATE trials SET status = 'fast' WHERE id = 2")},
      {"negative_and_zero_times",
       sql("UPDATE trials SET time_median_us = -1, tflops = -3 WHERE id IN (SELECT trial_id FROM "
           "best WHERE problem_id % 2 = 0); UPDATE trials SET time_median_us = 0 WHERE id IN "
           "(SELECT trial_id FROM best WHERE problem_id % 2 = 1); UPDATE cublas_times SET "
           "median_us = -4")},
      {"infinite_and_text_times",
       sql("UPDATE trials SET time_median_us = 9e999, tflops = 9e999, time_min_us = -9e999 WHERE "
           "id % 2 = 0; UPDATE trials SET time_median_us = 'nan', runs = 'many' WHERE id % 2 = 1; "
           "UPDATE cublas_times SET sgemm_rel_error = 9e999")},
      // bad parameters
      {"bad_parameters",
       sql("UPDATE kernels SET params = replace(replace(params, 'BN=', 'VEC=0,BN='), 'BM=128', "
           "'BM=0') WHERE id % 4 = 0; UPDATE kernels SET params = 'FOO=1' WHERE id % 4 = 1; "
           "UPDATE kernels SET params = 'BM' WHERE id % 4 = 2; UPDATE kernels SET template = "
           "'nosuch' WHERE id % 4 = 3")},
      {"parameter_of_zero_a_host_side_divides_by", sql(kVecZero)},
      {"huge_and_negative_parameters",
       sql("UPDATE kernels SET params = replace(params, 'BM=128', 'BM=99999999999999999999') "
           "WHERE id % 2 = 0; UPDATE kernels SET params = replace(params, 'STAGES=', "
           "'STAGES=-') WHERE id % 2 = 1")},
      // dangling references
      {"best_of_a_missing_trial", sql("UPDATE best SET trial_id = 999999 WHERE problem_id = 1")},
      {"best_of_a_missing_device_and_problem",
       sql("UPDATE best SET device_id = 77 WHERE problem_id = 2; UPDATE best SET problem_id = 88 "
           "WHERE problem_id = 3")},
      {"trials_of_missing_kernels_and_binaries",
       sql("UPDATE trials SET kernel_id = kernel_id + 100000 WHERE id % 2 = 0; UPDATE trials SET "
           "binary_id = 424242")},
      {"best_of_another_problems_trial",
       sql("UPDATE best SET trial_id = (SELECT min(id) FROM trials WHERE problem_id != "
           "best.problem_id)")},
      {"duplicate_device", sql("INSERT INTO devices (name, arch, sm_count, l2_bytes, clock_khz, "
                               "memory_clock_khz, driver_version, runtime_version, "
                               "smem_per_block_optin, smem_per_sm, regs_per_sm, "
                               "max_threads_per_block) SELECT name, arch, sm_count + 1, l2_bytes, "
                               "clock_khz, memory_clock_khz, driver_version, runtime_version, "
                               "smem_per_block_optin, smem_per_sm, regs_per_sm, "
                               "max_threads_per_block FROM devices; INSERT INTO best SELECT "
                               "problem_id, (SELECT max(id) FROM devices), trial_id, updated_at "
                               "FROM best")},
      // cubins
      {"truncated_cubins", cubins_cut_to(4000, false)},
      {"truncated_cubins_with_fixed_checksums", cubins_cut_to(4000, true)},
      {"empty_cubins_with_fixed_checksums", cubins_cut_to(0, true)},
      {"random_cubins_with_fixed_checksums", cubins_randomized(false)},
      {"random_cubins_past_the_elf_header_with_fixed_checksums", cubins_randomized(true)},
      // SQL of its own
      {"trigger", sql("CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM best; END")},
      {"looping_view", sql("DROP VIEW trial_details; CREATE VIEW trial_details AS WITH RECURSIVE "
                           "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS "
                           "trial_id FROM c")},
      {"schema_version_negative", sql("PRAGMA user_version = -5")},
      {"control_characters_in_text",
       sql("UPDATE devices SET name = name || char(27) || '[2J' || char(10) || 'x'")},
      {"control_characters_in_free_text",
       sql("UPDATE trials SET status = 'compile_failed', error = char(27) || ']0;owned' || "
           "char(7) WHERE id IN (SELECT id FROM trials LIMIT 5); UPDATE device_ceilings SET "
           "source = char(27) || '[31m', detail = char(13) || 'forged'")},
      // damage
      {"index_behind_its_table",
       [](const std::string& p) {
         testing::change_behind_index(p, "problems_by_shape", "UPDATE problems SET m = m + 1");
       }},
      {"truncated_file", [](const std::string& p) { fs::resize_file(p, fs::file_size(p) / 3); }},
      {"flips_in_data_few", [](const std::string& p) { flip_bits(p, 1, 8, false); }},
      {"flips_in_data_some", [](const std::string& p) { flip_bits(p, 2, 64, false); }},
      {"flips_in_data_many", [](const std::string& p) { flip_bits(p, 3, 512, false); }},
      {"flips_anywhere", [](const std::string& p) { flip_bits(p, 4, 16, true); }},
  };
  return all;
}

// --- running every command ------------------------------------------------------------------

struct CommandRun {
  std::string command;
  std::string out_file;  // the file it writes, "" for none
  int exit_code = -1;
  std::string out, err;  // stdout, stderr
};

// One tgemm-db command bounded by a timeout (exit 124: it hung; 128 + n: signal n).
CommandRun run_db(const std::string& dir, const std::string& command, const std::string& out_file,
                  int index) {
  CommandRun r;
  r.command = command;
  r.out_file = out_file;
  const std::string err_path = dir + "/stderr-" + std::to_string(index);
  const std::string shell = "timeout 60 " + std::string(TGEMM_TOOLS_DIR) + "/tgemm-db " + command +
                            " 2>" + err_path + " </dev/null";
  FILE* pipe = popen(shell.c_str(), "r");
  char buffer[4096];
  for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = pipe ? pclose(pipe) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = testing::read_bytes(err_path);
  fs::remove(err_path);
  return r;
}

// Every subcommand but profile (which needs Nsight Compute and a GPU before it reads anything).
std::vector<CommandRun> run_every_command(const std::string& dir, const std::string& db,
                                          const std::string& good) {
  const std::string shape = " --m 4096 --n 4096 --k 4096 --dtype tf32";
  const std::string on = "--db '" + db + "' ";
  auto out = [&dir](const std::string& name) { return dir + "/" + name; };
  const std::vector<std::pair<std::string, std::string>> commands = {
      {on + "list", ""},
      {on + "best" + shape, ""},
      {on + "show" + shape, ""},
      {on + "explain" + shape, ""},
      {on + "export --format csv --output " + out("export.csv"), out("export.csv")},
      {on + "export --format json", ""},
      {on + "replay --leave-one-out", ""},
      {on + "replay --against '" + good + "'", ""},
      {"--db '" + good + "' replay --against '" + db + "'", ""},
      {on + "report --out " + out("report.html"), out("report.html")},
      {on + "ceilings", ""},
      {on + "stale", ""},
      {on + "profiles", ""},
      {"merge " + out("merged.db") + " '" + db + "'", out("merged.db")},
      {on + "prune " + out("pruned.db"), out("pruned.db")},
      {on + "vacuum " + out("vacuumed.db"), out("vacuumed.db")},
  };
  // Two at a time: the tools spend most of their start loading the CUDA libraries.
  std::vector<CommandRun> runs(commands.size());
  for (size_t i = 0; i < commands.size(); i += 2) {
    auto second = std::async(std::launch::async, [&, i] {
      if (i + 1 < commands.size())
        runs[i + 1] = run_db(dir, commands[i + 1].first, commands[i + 1].second, int(i + 1));
    });
    runs[i] = run_db(dir, commands[i].first, commands[i].second, int(i));
    second.get();
  }
  return runs;
}

// What the library does with the file on a machine with a GPU, short of launching: open it
// through the C API, then read it as the dispatcher does for each device and choose a kernel
// for every tuned shape. In a child process: 0 when it finished, else its signal or 124 for a
// hang.
int library_open(const std::string& db) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(60);
    tgemmHandle_t handle = nullptr;
    if (tgemmCreate(&handle, db.c_str()) != TGEMM_STATUS_SUCCESS) ::_exit(1);
    tgemmDestroy(handle);
    try {
      auto records = open_tuning_records(db);
      for (const DeviceInfo& d : TuningDb(db, TuningDb::Mode::read_only).devices()) {
        auto tuned = records->best_entries(d.name, d.arch);
        const KernelSelector selector(tuned, shipped_default_kernels(), d.arch, d.sm_count,
                                      records->trials(d.name, d.arch),
                                      records->ceilings(d.name, d.arch));
        for (const BestEntry& e : tuned) {
          selector.choose(e.problem);
          Problem wider = e.problem;
          wider.n += 1;
          selector.choose(wider);
          records->find_binary(e.config, e.template_hash, e.problem, d.arch, "");
        }
      }
    } catch (const std::exception&) {
      // The dispatcher logs a database it cannot read and goes on without it.
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? 124 : 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// --- what a run may print -----------------------------------------------------------------

// A number that is no measurement: nan or inf (any case, as a word).
bool prints_non_finite(const std::string& text) {
  static const std::regex word(R"((^|[^A-Za-z_])(nan|inf|infinity)([^A-Za-z_]|$))",
                               std::regex::icase);
  return std::regex_search(text, word);
}

bool prints_control_characters(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f;
  });
}

// A negative figure in a table of bests (times, TFLOP/s, ratios are never negative).
bool prints_negative_figure(const std::string& text) {
  static const std::regex negative(R"((^|\s)-[0-9])");
  return std::regex_search(text, negative);
}

// 2mnk / time for the shape named in a problem key, in TFLOP/s; 0 when the key names none.
double shape_tflops(const std::string& key, double median_us) {
  static const std::regex shape(R"(_m(\d+)_n(\d+)_k(\d+)_)");
  std::smatch m;
  if (!std::regex_search(key, m, shape)) return 0;
  return 2 * std::stod(m[1]) * std::stod(m[2]) * std::stod(m[3]) / (median_us * 1e6);
}

bool near(double a, double b) {
  return std::abs(a - b) <= 0.02 * std::max(std::abs(a), std::abs(b));
}

// Where `list` contradicts itself: a (problem, device) listed twice, a time that is not
// positive, TFLOP/s that is not the problem's work over its time, a cuBLAS ratio that is not
// the quotient of the two times. "" when it does not.
std::string list_contradiction(const std::string& out) {
  static const std::regex row(
      R"(^(\S+)\s+(.+?)\s+(sm_\w+)\s+(\S+)\s+([-0-9.e+]+)\s+([-0-9.e+]+)\s+(\S+)\s+(\S+)\s+\d+\s*$)");
  std::set<std::string> seen;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    if (!seen.insert(m.str(1) + " on " + m.str(2)).second) return "listed twice: " + line;
    const double median = std::stod(m[5]), tflops = std::stod(m[6]);
    if (!(median > 0)) return "a time that is not positive: " + line;
    if (!near(shape_tflops(m[1], median), tflops)) return "TFLOP/s not the shape's: " + line;
    if (m.str(7) != "-" && !near(std::stod(m[7]) / median, std::stod(m[8])))
      return "a ratio not the quotient of its times: " + line;
  }
  return "";
}

// Where `best` contradicts itself: its median outside [min, max] or TFLOP/s not the problem's
// work over its median. "" when it does not.
std::string best_contradiction(const std::string& out) {
  static const std::regex problem(R"(problem:\s+(\S+))");
  static const std::regex time(
      R"(time:\s+([-0-9.e+]+) us median \(min ([-0-9.e+]+), max ([-0-9.e+]+))");
  static const std::regex tflops(R"(TFLOP/s:\s+([-0-9.e+]+))");
  std::smatch p, t, f;
  if (!std::regex_search(out, p, problem) || !std::regex_search(out, t, time) ||
      !std::regex_search(out, f, tflops))
    return "";
  const double median = std::stod(t[1]), min = std::stod(t[2]), max = std::stod(t[3]);
  if (!(median > 0 && min <= median && median <= max)) return "median outside [min, max]";
  if (!near(shape_tflops(p[1], median), std::stod(f[1]))) return "TFLOP/s not the shape's";
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The wrong value a successful run printed or wrote, "" for none.
std::string wrong_value(const CommandRun& r) {
  if (prints_non_finite(r.out)) return "prints nan or inf";
  if (prints_control_characters(r.out)) return "prints control characters";
  if ((has(r.command, " list") || has(r.command, " best ") || has(r.command, " ceilings")) &&
      prints_negative_figure(r.out))
    return "prints a negative figure";
  if (has(r.command, " list")) {
    if (std::string why = list_contradiction(r.out); !why.empty()) return why;
  }
  if (has(r.command, " best ")) {
    if (std::string why = best_contradiction(r.out); !why.empty()) return why;
  }
  if (has(r.command, "--format json") && !nlohmann::json::accept(r.out)) return "invalid JSON";
  if (has(r.out_file, ".csv") && prints_non_finite(testing::read_bytes(r.out_file)))
    return "writes nan or inf";
  if (has(r.out_file, ".db") && testing::query_text(r.out_file, "PRAGMA integrity_check") != "ok")
    return "writes a damaged database";
  return "";
}

struct Found {
  Finding what;
  std::string where;
};

void check_run(const CommandRun& r, std::vector<Found>& found) {
  const std::string where = "tgemm-db " + r.command + "\nstdout: " + r.out.substr(0, 1500) +
                            "\nstderr: " + r.err.substr(0, 1500);
  if (r.exit_code == 124) found.push_back({Finding::hang, where});
  if (r.exit_code > 128) found.push_back({Finding::signal, where});
  if (!r.out_file.empty() && r.exit_code != 0 && fs::exists(r.out_file))
    found.push_back({Finding::output_after_failure, where});
  if (r.exit_code != 0) return;
  if (std::string why = wrong_value(r); !why.empty())
    found.push_back({Finding::wrong_value, why + "\n" + where});
}

// --- the test -----------------------------------------------------------------------------

// The tuned database every case starts from, unpacked once.
const std::string& base_database() {
  static const TempDir dir{"db_fuzz_base"};
  static const std::string path = testing::unpack_tuned_database(dir);
  return path;
}

// Everything wrong the commands and the library open did with the corrupted file at `db`.
std::vector<Found> findings(const std::string& db, const std::string& good) {
  std::vector<Found> found;
  const std::string before = testing::read_bytes(db);
  const std::string folder = fs::path(db).parent_path();
  std::set<std::string> files_before;
  for (const auto& e : fs::directory_iterator(folder)) files_before.insert(e.path().filename());

  const int library = library_open(db);
  if (library == 124) found.push_back({Finding::hang, "the library open"});
  if (library > 128)
    found.push_back({Finding::signal, "the library open: signal " + std::to_string(library - 128)});

  std::set<std::string> expected = files_before;
  for (const CommandRun& r : run_every_command(folder, db, good)) {
    check_run(r, found);
    if (!r.out_file.empty() && r.exit_code == 0) expected.insert(fs::path(r.out_file).filename());
  }
  if (testing::read_bytes(db) != before) found.push_back({Finding::input_changed, db});
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(folder)) files.insert(e.path().filename());
  for (const std::string& name : files)
    if (!expected.count(name)) found.push_back({Finding::files_left, name});
  return found;
}

class DbFuzz : public ::testing::TestWithParam<size_t> {};

TEST_P(DbFuzz, every_command_and_a_library_open_survive) {
  const Case& c = cases()[GetParam()];
  TempDir dir{"db_fuzz"};
  const std::string db = dir.file("fuzzed.db"), good = dir.file("good.db");
  fs::copy_file(base_database(), db);
  fs::copy_file(base_database(), good);
  c.corrupt(db);
  for (const Found& f : findings(db, good)) {
    ADD_FAILURE() << describe(f.what) << ": " << f.where;
  }
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  return cases()[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Corruptions, DbFuzz, ::testing::Range(size_t(0), cases().size()),
                         case_name);

}  // namespace
}  // namespace tgemm
