// TuningDb: the only code that speaks SQL. One SQLite file holds runs, devices, kernels,
// binaries (cubins), problems, every trial and the best config per (problem, device).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/read_checks.h"
#include "src/core/current_build.h"
#include "src/core/device_ceiling.h"
#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/kernel_profile.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/core/tuning_records.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// The checksum stored beside every cubin (binaries.checksum): a stable hash of its bytes.
std::string cubin_checksum(const std::vector<char>& cubin);

// Named columns of text cells; nullopt is SQL NULL (an export keeps the difference).
struct TextTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// What TuningDb::merge_from added to the database from the other file.
struct MergeCounts {
  int64_t runs = 0;  // every run is kept, under a new id
  int64_t devices = 0, kernels = 0, binaries = 0, problems = 0;  // new here (natural keys)
  int64_t trials = 0;            // new (problem, kernel, device) triples
  int64_t duplicate_trials = 0;  // triples in both files: the faster ok one kept
  int64_t replaced_trials = 0;   // of those, the ones the other file's trial won
  int64_t cublas_times = 0;      // (problem, device) times added or replaced by a later one
  int64_t ceilings = 0;          // (device, kind) ceilings this file lacked
  int64_t profiles = 0;          // kernel profiles of (problem, device)s this file lacked
  // The other file's best rows not carried over: their trial is not an ok one with a positive
  // finite time, or is another problem's or device's (the bests are recomputed from trials).
  int64_t bests_not_kept = 0;
};

// The run under which the library writes back the cubins it compiled (CubinWriteBack::on).
inline constexpr const char* kCubinWriteBackRun = "libtgemm (cubin write-back)";

// What TuningDb::prune drops (each on by default but `stale`, which needs a build to judge by).
struct PruneOptions {
  bool failed = true;  // trials that did not run ok (builds that failed or spilled: only their
                       // binaries), and failed or pruned binaries
  // Cubins of kernels no best runs, but the library's write-backs (rebuilt on demand if needed).
  bool unused_cubins = true;
  // Trials stale against the CurrentBuild made for each device (given its stored driver).
  std::function<CurrentBuild(const DeviceInfo&)> stale;
};
struct PruneCounts {
  int64_t failed_trials = 0, failed_binaries = 0, cubins = 0, stale_trials = 0, kernels = 0;
};

// A binary that recorded trials ran, with its kernel: what re-keying trials by the machine
// code their config builds to (tuner/compile/code_refresh.h) judges.
struct TrialBinary {
  KernelConfig config;
  std::string template_hash;
  BinaryRecord binary;  // its stored code hash, and its cubin where that passes its checks
  int64_t trials = 0;   // the trials that ran it
};

class TuningDb {
 public:
  enum class Mode { read_write, read_only };

  // read_write creates the file and schema when missing and migrates older schemas;
  // read_only never writes, and reads a finished file from a folder it cannot write (an
  // install), with or without the -wal/-shm a killed tuner left. Throws Error naming the
  // path for: a file that is not a SQLite database, a damaged file (PRAGMA quick_check), a
  // schema newer than this build (PRAGMA user_version), schema objects tgemm does not create
  // (a trigger, a view, an unknown table: they would run SQL inside the tools), a directory, a
  // FIFO or device, or a path that cannot be written, a missing file in read_only mode.
  // Concurrent first opens of a new file are safe. Rows that break the schema's rules are
  // skipped as they are read, with one warning per read.
  TuningDb(const std::string& path, Mode mode);
  // The last read_write connection to close leaves the file in rollback-journal mode, with
  // no -wal/-shm beside it, so a finished database is one file that installs read-only.
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  static int schema_version();  // the user_version this build writes
  const std::string& path() const { return path_; }

  // Runs: every row the tuner writes points at the run that produced it.
  int64_t begin_run(const std::string& command_line, const std::string& tool_version,
                    const std::string& arch);
  void finish_run(int64_t run_id, const std::string& summary);

  // Idempotent: the same natural key returns the same id.
  int64_t upsert_device(const DeviceInfo& device);  // key: name, arch, sm_count
  // Every device with trials recorded (name, arch, SM count, L2 and clocks).
  std::vector<DeviceInfo> devices();
  int64_t upsert_kernel(const KernelConfig& config, const std::string& template_hash);
  int64_t upsert_problem(const Problem& problem);  // key: problem.key()

  // Binaries by NvrtcCompiler cache key (failures and prunes too, so they are not retried).
  // A found ok binary whose cubin fails its checksum comes back with checksum_ok false.
  std::optional<BinaryRecord> find_binary(const std::string& cache_key);
  int64_t store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                       BinaryStatus status, const std::string& reason);

  // Every binary that trials ran (vendor calls have none), in id order; a binary whose
  // kernel's config does not hold on its arch is skipped with a warning.
  std::vector<TrialBinary> trial_binaries();
  // Moves the trials that ran `stored` to the kernel of its config under `template_hash`, with
  // `current` as their binary (stored like store_binary, keeping `stored`'s status): for a build
  // from a new template text to the same machine code, whose times still hold. A trial whose
  // problem and device already have one of that kernel stays where it is. The best of each
  // (problem, device) that gains an ok trial current by `current_for` its device is recomputed
  // as tgemm-tune does. Returns the trials moved.
  int64_t rekey_trials(int64_t run_id, const TrialBinary& stored, const std::string& template_hash,
                       const CompiledKernel& current,
                       const std::function<CurrentBuild(const DeviceInfo&)>& current_for);

  // Trials: one per (problem, kernel, device); a rerun skips those already recorded.
  bool has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id);
  // The versions the recorded trial was measured with; nullopt when there is no such trial.
  std::optional<MeasuredWith> trial_measured_with(int64_t problem_id, int64_t kernel_id,
                                                  int64_t device_id);
  // `with`: the NVRTC and driver it was measured with (empty: not known, stored as NULL).
  int64_t record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id, int64_t device_id,
                       std::optional<int64_t> binary_id, const TrialResult& trial,
                       const MeasuredWith& with = {});
  // Records cuBLAS's median time for a problem on a device (the ratio's denominator) and,
  // for f32x3 problems, SGEMM's error against FP64 (nullopt keeps the one stored before).
  void record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id, double median_us,
                          std::optional<double> sgemm_rel_error = std::nullopt);

  // The measured roofs of a device (one row per kind; storing a kind again replaces it).
  void store_ceilings(int64_t run_id, int64_t device_id,
                      const std::vector<DeviceCeiling>& ceilings);
  bool has_ceilings(int64_t device_id);
  // Every stored ceiling, filtered by device name and arch (empty: all), with both filled in.
  std::vector<DeviceCeiling> ceilings(const std::string& device_name = "",
                                      const std::string& arch = "");

  // Nsight Compute profiles (tgemm-db profile). Storing replaces every profile of that
  // (problem, device) at once; profiles() lists them per device and problem, tgemm first.
  void store_profiles(int64_t problem_id, int64_t device_id,
                      const std::vector<KernelProfile>& profiles);
  std::vector<KernelProfile> profiles(const std::string& device_name = "",
                                      const std::string& arch = "");

  // Recomputes the best (fastest ok median) trial of a problem on a device; with `current`,
  // stale trials (CurrentBuild::stale_reason) cannot be the best.
  void update_best(int64_t problem_id, int64_t device_id, const CurrentBuild* current = nullptr);

  // Best entries, filtered; empty strings / nullopt match everything.
  std::vector<BestEntry> best_entries(const std::string& problem_key = "",
                                      const std::string& device_name = "",
                                      const std::string& arch = "");
  // Every trial, optionally of one problem and/or device: per problem and device, ok trials
  // first by median time, then failures.
  std::vector<TrialRecord> trials(const std::string& problem_key = "",
                                  const std::string& device_name = "");
  // Every trial joined with its problem, kernel and device (the trial_details view), as
  // table cells and as a JSON array of objects with the same keys.
  TextTable trial_table();
  std::string trial_table_json();

  // The cubin stored for the best entry's kernel with this layout, types, arch and NVRTC
  // version (an empty nvrtc_version matches any version, newest binary first); checksum_ok
  // false and no bytes when that cubin fails its checksum.
  std::optional<BinaryRecord> find_binary_for(const KernelConfig& config,
                                              const std::string& template_hash,
                                              const Problem& variant, const std::string& arch,
                                              const std::string& nvrtc_version);

  // What a full check finds wrong (PRAGMA integrity_check: pages, indexes against their
  // tables, NOT NULL and, on a read_write connection, CHECK constraints; then PRAGMA
  // foreign_key_check: references that do not resolve), or "" when nothing. Slower than the
  // quick check on open: for what the tools copy or merge before it replaces anything.
  std::string integrity_problems();

  // A consistent snapshot of the whole database written to `dest_path` (SQLite's online
  // backup), a new file: an existing one (or a link) is refused, never overwritten. Throws
  // when the copy fails the quick check, which on a writable file covers the CHECK
  // constraints.
  void copy_to(const std::string& dest_path);
  // Adds everything in the tuning database at `other_path` (opened read-only, never written;
  // an older schema is read through a migrated copy; refused when integrity_problems() finds
  // anything) in one transaction: devices, kernels,
  // binaries and problems by their natural keys, every run under a new id, every trial; a
  // (problem, kernel, device) in both keeps the faster ok trial (this file's when neither is
  // ok or they tie), cuBLAS times the latest per (problem, device), and the best of every
  // (problem, device) the other file has trials for is recomputed.
  MergeCounts merge_from(const std::string& other_path);
  // Removes one problem and everything measured on it (best, trials, cuBLAS times), as if it
  // had never been tuned; kernels and binaries stay. Returns the trials removed (0 when the
  // problem is not there). For a scratch copy: tgemm-bench --untuned serves shapes from one.
  int64_t forget_problem(const std::string& problem_key);
  // Removes every vendor call's trial (src/core/vendor_call.h) and recomputes the bests they
  // held, so the file serves our own kernels only. Returns the trials removed. For a scratch
  // copy: tgemm-bench times our own best beside the served one from one.
  int64_t forget_vendor_calls();
  // Drops what `options` names, then kernels nothing refers to, and compacts the file
  // (VACUUM). Bests, problems, devices, runs and cuBLAS times stay. For a copy: tgemm-db
  // prune writes a new file.
  PruneCounts prune(const PruneOptions& options);

  // Wraps many writes in one transaction (much faster; all or nothing on error).
  void begin_transaction();
  void commit();
  void rollback();
  // How long a write waits for another connection's write transaction before it fails with
  // a "locked" error (default 10 s; a caller that must not stall can lower it).
  void set_busy_timeout_ms(int ms);

 private:
  void connect(bool immutable);     // sqlite3_open_v2 for mode_; immutable only for readers
  void open_checks();               // version, integrity, WAL and schema checks after connect
  int read_only_version();          // a reader's first read, reopening an install immutable
  void check_integrity();           // PRAGMA quick_check
  void migrate();                   // check and create/migrate atomically, under the write lock
  void migrate_a_copy_in_memory();  // a reader of an older file: migrate a copy, not the file
  void enter_wal_mode();            // on open, waiting out the others' locks like any write
  void leave_wal_mode();  // on close: back to a rollback journal when this is the last one
  std::string binary_columns() const;  // the binaries columns binary_at reads
  // Whether a trial read from the file may be handed out: its device row is no repeat, its
  // kernel's config holds on the device's arch, an ok trial's figures are a measurement.
  bool trial_usable(int64_t trial_id, int64_t kernel_id, const TrialResult& trial,
                    int64_t device_id, const std::string& arch);
  bool device_usable(int64_t device_id);  // not a repeat of an earlier devices row
  int64_t drop_stale_trials(const std::function<CurrentBuild(const DeviceInfo&)>& current_for);

  std::string path_;
  Mode mode_;
  sqlite3* db_ = nullptr;
  int busy_ms_ = 0;           // the busy timeout (set by connect), also for the journal mode switch
  int file_version_ = 0;      // the file's schema version (a reader may open an older one)
  ReadChecks checks_{path_};  // what every row read must pass (after path_: it names the file)
};

}  // namespace tgemm
