#include "tuner/profile/ncu_profiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/core/error.h"
#include "tuner/output/output_file.h"
#include "tuner/profile/ncu_csv.h"

extern char** environ;

namespace tgemm {
namespace {

namespace fs = std::filesystem;

bool executable_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] (a path) with stdout and stderr into files; its exit status, 127 when it
// could not start, 128 + signal when a signal ended it.
int run_to_files(const std::vector<std::string>& argv, const std::string& out_path,
                 const std::string& err_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string tail_of(const std::string& text, size_t lines) {
  size_t at = text.size();
  for (size_t n = 0; n <= lines && at > 0; ++n) {
    at = text.rfind('\n', at - 1);
    if (at == std::string::npos) return text;
  }
  return text.substr(at + 1);
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace

std::string find_ncu(const std::string& explicit_path, const std::string& path_variable) {
  if (!explicit_path.empty()) {
    if (!executable_file(explicit_path))
      fail("--ncu '{}' is not an executable file (expected the path of Nsight Compute's ncu)",
           explicit_path);
    return explicit_path;
  }
  std::stringstream dirs(path_variable);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable_file(dir + "/ncu")) return dir + "/ncu";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
    if (executable_file((entry.path() / "ncu").string()))
      found.push_back((entry.path() / "ncu").string());
  std::sort(found.rbegin(), found.rend());  // "2025.1.0" before "2024.3.2"
  if (!found.empty()) return found.front();
  if (executable_file("/usr/local/cuda/bin/ncu")) return "/usr/local/cuda/bin/ncu";
  return "";
}

std::string ncu_version(const std::string& ncu) {
  const ScratchDir scratch(fs::temp_directory_path().string(), "the output of ncu --version");
  const int rc = run_to_files({ncu, "--version"}, scratch.file("out"), scratch.file("err"));
  const std::string out = read_text(scratch.file("out")) + read_text(scratch.file("err"));
  if (rc != 0) fail("'{} --version' failed (exit {}): {}", ncu, rc, tail_of(out, 5));
  return ncu_version_of(out);
}

std::vector<std::string> ncu_command(const NcuRun& run, const std::vector<std::string>& metrics) {
  std::vector<std::string> argv = {
      run.ncu, "--clock-control", "none", "--profile-from-start", "off",
      "--csv", "--page",          "raw",  "--print-units",        "base"};
  if (!run.kernel_regex.empty()) {
    argv.insert(argv.end(), {"--kernel-name", "regex:" + run.kernel_regex, "--launch-count", "1"});
  } else {
    argv.insert(argv.end(), {"--launch-count", "8"});  // every kernel of the one cuBLAS call
  }
  argv.insert(argv.end(), {"--metrics", joined(metrics, ","), run.target, "--db", run.db_path,
                           "--problem", run.problem_key, "--contender", run.contender, "--warmup",
                           std::to_string(run.warmup)});
  return argv;
}

KernelProfile profile_with_ncu(const NcuRun& run) {
  std::vector<std::string> metrics = profile_metrics();
  const std::string base = (fs::path(run.scratch_dir) / ("ncu-" + run.contender)).string();
  std::string output;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto argv = ncu_command(run, metrics);
    const int rc = run_to_files(argv, base + ".csv", base + ".log");
    const std::string csv = read_text(base + ".csv"), log = read_text(base + ".log");
    output = log + csv;
    std::vector<NcuKernelRow> rows;
    try {
      rows = parse_ncu_raw_csv(csv);
    } catch (const Error& e) {
      fail("cannot read ncu's CSV for {} on {}: {}", run.contender, run.problem_key, e.what());
    }
    if (rc == 0 && !rows.empty()) {
      auto longest = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.number("gpu__time_duration.sum").value_or(0) <
               b.number("gpu__time_duration.sum").value_or(0);
      });
      return profile_from_row(*longest);
    }
    // An ncu that lacks some metrics (another version or arch) says which; drop them.
    const auto missing = missing_metrics(output);
    bool dropped = false;
    for (const std::string& m : missing) {
      auto it = std::find(metrics.begin(), metrics.end(), m);
      if (it == metrics.end()) continue;
      const bool stall_regex = m.rfind("regex:", 0) == 0;
      metrics.erase(it);
      if (stall_regex)
        for (const std::string& name : stall_metric_names()) metrics.push_back(name);
      dropped = true;
    }
    if (!dropped)
      fail("ncu profiled no kernel of {} on {} (exit {}); command: {}\n{}", run.contender,
           run.problem_key, rc, joined(argv, " "), tail_of(output, 15));
  }
  fail("ncu kept rejecting metrics for {} on {}:\n{}", run.contender, run.problem_key,
       tail_of(output, 15));
}

std::pair<std::string, std::string> target_device(const std::string& target, int* exit_code) {
  const ScratchDir scratch(fs::temp_directory_path().string(), "the output of " + target);
  *exit_code = run_to_files({target, "--print-device"}, scratch.file("out"), scratch.file("err"));
  const std::string out = read_text(scratch.file("out")), err = read_text(scratch.file("err"));
  if (*exit_code != 0)
    fail("'{}' found no GPU to profile on (exit {}): {}", target, *exit_code, tail_of(err, 5));
  const size_t nl = out.find('\n');
  if (nl == std::string::npos) fail("'{}' --print-device printed '{}'", target, out);
  std::string arch = out.substr(nl + 1);
  arch = arch.substr(0, arch.find('\n'));
  return {out.substr(0, nl), arch};
}

}  // namespace tgemm
