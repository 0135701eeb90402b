// Runs one of the tools as a user would and captures its output and exit code.
#pragma once

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/common/temp_dir.h"

namespace tgemm::testing {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line (sh -c) as given, its redirections included.
inline CliResult run_command(const std::string& command) {
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// A shell command line as a user would type it, its standard error part of its output.
inline CliResult run_shell(const std::string& command_line) {
  return run_command(command_line + " 2>&1 </dev/null");
}

// `args` is appended to the tool's path as a shell word list.
inline CliResult run_tool(const std::string& tool, const std::string& args) {
  return run_shell(std::string(TGEMM_TOOLS_DIR) + "/" + tool + " " + args);
}

// As run_tool, with standard output written to `stdout_path` (/dev/full: a full disk) and only
// standard error captured.
inline CliResult run_tool_with_stdout(const std::string& tool, const std::string& args,
                                      const std::string& stdout_path) {
  return run_command(std::string(TGEMM_TOOLS_DIR) + "/" + tool + " " + args + " 2>&1 >'" +
                     stdout_path + "' </dev/null");
}

// tgemm-tune's arguments for an exhaustive run of tests/data/spaces/<space>.yaml over the
// shape file `shapes` into `db`, then `extra`.
inline std::string exhaustive_tune_args(const std::string& shapes, const std::string& space,
                                        const std::string& db, const std::string& extra = "") {
  return "--shapes " + shapes + " --space " + TGEMM_SOURCE_DIR + "/tests/data/spaces/" + space +
         ".yaml --strategy exhaustive --budget 0 " + extra + (extra.empty() ? "" : " ") + "--db " +
         db;
}

// The same over tests/data/shapes/tiny.yaml.
inline std::string tiny_tune_args(const std::string& space, const std::string& db,
                                  const std::string& extra = "") {
  return exhaustive_tune_args(std::string(TGEMM_SOURCE_DIR) + "/tests/data/shapes/tiny.yaml", space,
                              db, extra);
}

// One integer from plain SQL, as `sqlite3 tgemm.db "select ..."` would print it; -1 on error.
inline int64_t query_int(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

// One text cell from plain SQL, read-only (`fallback` on any error), e.g. PRAGMA integrity_check.
inline std::string query_text(const std::string& db_path, const std::string& sql,
                              const std::string& fallback = "") {
  sqlite3* db = nullptr;
  std::string value = fallback;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0))
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tgemm::testing
