#include "tuner/cli/db_profile_commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "tuner/cli/db_exit_codes.h"
#include "tuner/cli/db_formatting.h"
#include "tuner/cli/db_shape.h"
#include "tuner/cli/executable_dir.h"
#include "tuner/output/output_file.h"
#include "tuner/profile/ncu_profiler.h"
#include "tuner/report/text_columns.h"

namespace tgemm::cli::db_tool {

namespace {

// The shape to profile, or nullopt for --all; bad combinations are named.
std::optional<Shape> profile_shape(const ProfileArgs& args) {
  const bool any = !args.m.empty() || !args.n.empty() || !args.k.empty();
  if (args.all && any) fail("profile takes either --all or --m --n --k, not both");
  if (args.all) return std::nullopt;
  if (args.m.empty() || args.n.empty() || args.k.empty())
    fail("profile needs --m, --n and --k (or --all)");
  ShapeArgs shape{args.m, args.n, args.k, args.dtype, args.out, args.layout, ""};
  return parse_shape(shape);
}

// ncu's path, found before anything is profiled or written; fails naming where it looked.
std::string ncu_or_fail(const std::string& explicit_path) {
  const char* path_variable = std::getenv("PATH");
  std::string ncu = find_ncu(explicit_path, path_variable ? path_variable : "");
  if (ncu.empty())
    fail(
        "Nsight Compute's ncu was not found (not on PATH, not in "
        "/opt/nvidia/nsight-compute/<version>/, not in /usr/local/cuda/bin); install it or "
        "pass --ncu PATH. Nothing was profiled or written");
  return ncu;
}

std::string metric(const std::optional<double>& v, double scale = 1, int digits = 1) {
  return v ? fixed(*v * scale, digits) : "-";
}

std::string top_stalls(const KernelProfile& p, size_t count) {
  std::string out;
  for (size_t i = 0; i < p.stalls.size() && i < count; ++i)
    out += fmt::format("{}{} {:.2f}", i ? ", " : "", p.stalls[i].name, p.stalls[i].value);
  return out.empty() ? "-" : out;
}

std::string profiled_kernel(const KernelProfile& p) {
  return p.contender == kTgemmContender ? p.config : first_line(p.kernel_name, 60);
}

// The best entries of this GPU to profile: those of `shape` (all for nullopt) that are kernels
// of ours.
std::vector<BestEntry> entries_to_profile(TuningDb& db, const std::optional<Shape>& shape,
                                          const std::string& device_name, const std::string& arch) {
  std::vector<BestEntry> chosen;
  for (auto& e : db.best_entries("", device_name, arch)) {
    if (shape && !shape->matches(e.problem)) continue;
    // A vendor best has no kernel of ours to profile: cuBLAS's own is profiled beside ours.
    if (is_vendor_call(e.config)) {
      fmt::print("{}: its best is the vendor call {}; not profiled\n", e.problem.key(),
                 describe_vendor_call(e.config));
      continue;
    }
    chosen.push_back(std::move(e));
  }
  return chosen;
}

// Profiles one best kernel and cuBLAS's on its problem, stores both and prints a line.
// `run` holds what every entry shares (ncu, target, database, warmup, scratch folder).
void profile_entry(TuningDb& db, const BestEntry& e, const DeviceInfo& device, NcuRun run,
                   const std::string& version) {
  const auto start = std::chrono::steady_clock::now();
  const auto binary = db.find_binary_for(e.config, e.template_hash, e.problem, e.arch, "");
  if (!binary || binary->compiled.entry.empty())
    fail("'{}' has no cubin of {} for {} to profile", db.path(), e.config.canonical_name(),
         e.problem.key());
  run.problem_key = e.problem.key();
  run.contender = kTgemmContender;
  run.kernel_regex = "^" + binary->compiled.entry + "$";
  std::vector<KernelProfile> profiles;
  profiles.push_back(profile_with_ncu(run));
  profiles.back().config = e.config.canonical_name();
  run.contender = kCublasContender;
  run.kernel_regex.clear();
  profiles.push_back(profile_with_ncu(run));
  for (auto& p : profiles) {
    p.contender = &p == &profiles.front() ? kTgemmContender : kCublasContender;
    p.ncu_version = version;
  }
  db.store_profiles(db.upsert_problem(e.problem), db.upsert_device(device), profiles);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}: tgemm {} {} us, cuBLAS {} {} us ({:.1f} s)\n", e.problem.key(),
             profiles[0].config, metric(profiles[0].duration_us, 1, 2),
             first_line(profiles[1].kernel_name, 60), metric(profiles[1].duration_us, 1, 2),
             seconds);
}

}  // namespace

int run_profile(const std::string& db_path, const ProfileArgs& args) {
  const std::optional<Shape> shape = profile_shape(args);
  if (args.warmup < 0 || args.warmup > 100)
    fail("--warmup must be from 0 to 100, got {}", args.warmup);
  const std::string ncu = ncu_or_fail(args.ncu);
  if (!std::filesystem::is_regular_file(db_path))
    fail("tuning database '{}' does not exist (tgemm-tune makes it)", db_path);
  const std::string target = executable_dir() + "/tgemm-profile-target";
  if (::access(target.c_str(), X_OK) != 0)
    fail("'{}' is missing: it is built beside tgemm-db and is what ncu profiles", target);
  int target_exit = 0;
  const auto [device_name, arch] = target_device(target, &target_exit);
  TuningDb db(db_path, TuningDb::Mode::read_write);
  const std::vector<BestEntry> chosen = entries_to_profile(db, shape, device_name, arch);
  if (chosen.empty()) {
    fmt::print(stderr, "tgemm-db: nothing tuned{} on {} ({}) in '{}' to profile\n",
               shape ? " for " + shape->describe() : "", device_name, arch, db.path());
    return kExitNotTuned;
  }
  DeviceInfo device;
  for (const auto& d : db.devices())
    if (d.name == device_name && d.arch == arch) device = d;
  const std::string version = ncu_version(ncu);
  const ScratchDir scratch(std::filesystem::temp_directory_path().string(),
                           "the profiles' scratch files");
  fmt::print("profiling {} problem(s) on {} ({}) with {} (ncu {})\n", chosen.size(), device_name,
             arch, ncu, version);
  NcuRun run;
  run.ncu = ncu;
  run.target = target;
  run.db_path = db_path;
  run.warmup = args.warmup;
  run.scratch_dir = scratch.path();
  for (const auto& e : chosen) profile_entry(db, e, device, run, version);
  return 0;
}

int run_profiles(TuningDb& db, const std::string& device) {
  const auto profiles = db.profiles(device);
  if (profiles.empty()) {
    fmt::print("no kernel profiles stored{} in '{}' (tgemm-db profile makes them with ncu)\n",
               on_device(device), db.path());
    return 0;
  }
  TextColumns table({"problem", "device", "who", "kernel", "ncu us", "SM %", "DRAM rd MB",
                     "DRAM wr MB", "gld sectors", "excess", "smem conflicts", "occupancy %",
                     "FMA %", "tensor %", "regs", "top stalls (warps per issue)"},
                    {false, false, false, false, true, true, true, true, true, true, true, true,
                     true, true, true, false});
  for (const auto& p : profiles) {
    std::optional<double> conflicts;
    if (p.shared_load_bank_conflicts || p.shared_store_bank_conflicts)
      conflicts =
          p.shared_load_bank_conflicts.value_or(0) + p.shared_store_bank_conflicts.value_or(0);
    table.add({p.problem_key, p.device_name, p.contender, profiled_kernel(p),
               metric(p.duration_us, 1, 2), metric(p.sm_throughput_pct),
               metric(p.dram_read_bytes, 1e-6), metric(p.dram_write_bytes, 1e-6),
               metric(p.global_load_sectors, 1, 0), metric(p.global_excess_sectors, 1, 0),
               metric(conflicts, 1, 0), metric(p.achieved_occupancy_pct), metric(p.fma_pipe_pct),
               metric(p.tensor_pipe_pct), metric(p.registers, 1, 0), top_stalls(p, 3)});
  }
  table.print();
  return 0;
}

}  // namespace tgemm::cli::db_tool
