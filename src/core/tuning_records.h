// The records the dispatcher reads from a tuning database, as plain structs, and the reader
// interface it reads them through. db/ implements it (open_tuning_records), so src/ never
// includes db/ or speaks SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/measured_with.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/core/vendor_call.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// Outcome of compiling one (config, layout, arch): a cubin, or why there is none.
enum class BinaryStatus { ok, compile_failed, resource_exceeded };
std::string to_string(BinaryStatus status);

struct BinaryRecord {
  int64_t id = 0;
  int64_t kernel_id = 0;
  BinaryStatus status = BinaryStatus::ok;
  std::string reason;       // why it was pruned or failed; empty when ok
  CompiledKernel compiled;  // cubin, resources, options, cache key, arch, NVRTC version
  // False when the stored cubin does not match its checksum (or has none), or is not a cubin
  // for its arch that defines its entry (cubin_problem): compiled.cubin is then empty, so a
  // damaged or planted cubin is never loaded. Recompile instead.
  bool checksum_ok = true;
  std::string cubin_rejected;  // why checksum_ok is false
};

// The best trial of one problem on one device, as the dispatcher and tgemm-db need it.
struct BestEntry {
  Problem problem;
  std::string device_name;
  std::string arch;
  KernelConfig config;
  std::string template_hash;
  TrialResult trial;
  MeasuredWith measured_with;   // the NVRTC and driver the best trial was measured with
  double cublas_median_us = 0;  // cuBLAS timed in the same run, 0 if not measured
  // f32x3 problems: cuBLAS SGEMM's error against FP64 on the tuning inputs (trial's
  // max_rel_error is the kernel's against the same reference); nullopt when not measured.
  std::optional<double> cublas_rel_error;
  int64_t trial_count = 0;  // every trial of this problem on this device, failures too
  // Where the best is a vendor call (vendor_call.h): the problem's fastest ok trial of a tgemm
  // kernel on the device, so our own kernels' gap stays in view; nullopt otherwise or when
  // none ran.
  std::optional<TrialResult> tgemm_best;
  std::string tgemm_best_hash;  // its template hash

  // Our own fastest kernel's median time here: the best's, or tgemm_best's where a vendor call
  // won; 0 when no kernel of ours ran correctly.
  double own_best_us() const {
    if (!is_vendor_call(config)) return trial.time_median_us;
    return tgemm_best ? tgemm_best->time_median_us : 0;
  }
};

// One recorded trial with its problem and device spelled out (what `tgemm-db show` lists).
struct TrialRecord {
  int64_t id = 0;
  Problem problem;
  std::string device_name;
  std::string arch;
  std::string template_hash;
  TrialResult trial;  // trial.config is the kernel's template and parameters
  MeasuredWith measured_with;
  std::string created_at;
};

// What the dispatcher needs of a tuning database. Every method may throw Error (an unreadable
// database); the dispatcher logs and goes on without it.
class TuningRecords {
 public:
  virtual ~TuningRecords() = default;
  // The GPUs the database holds measurements of (name, arch, SM count, ...).
  virtual std::vector<DeviceInfo> devices() = 0;
  // The best entries and every trial recorded on one GPU (device name and arch).
  virtual std::vector<BestEntry> best_entries(const std::string& device_name,
                                              const std::string& arch) = 0;
  virtual std::vector<TrialRecord> trials(const std::string& device_name,
                                          const std::string& arch) = 0;
  // The measured roofs of one GPU (copy bandwidth, FLOP rates), for the performance model.
  virtual std::vector<DeviceCeiling> ceilings(const std::string& device_name,
                                              const std::string& arch) = 0;
  // The cubin of a kernel (config and template hash) built for this problem's layout and
  // types, for `arch` and this NVRTC version.
  virtual std::optional<BinaryRecord> find_binary(const KernelConfig& config,
                                                  const std::string& template_hash,
                                                  const Problem& variant, const std::string& arch,
                                                  const std::string& nvrtc_version) = 0;
  // Stores a cubin the dispatcher compiled, so the next process finds it: only when the
  // records were opened with write-back on (the file is otherwise never written). Best effort:
  // write-back off, a read-only file or a busy tuner throws, and the caller goes on.
  virtual void write_back(const KernelConfig& config, const std::string& template_hash,
                          const CompiledKernel& compiled) = 0;
};

// Whether the dispatcher may write the cubins it compiles into the database file.
enum class CubinWriteBack { off, on };

// Opens `path` read-only (db/tuning_records_reader.cpp); throws Error naming the path when
// it is missing or not a tgemm database. write_back() writes only with CubinWriteBack::on.
std::unique_ptr<TuningRecords> open_tuning_records(const std::string& path,
                                                   CubinWriteBack write_back = CubinWriteBack::off);

}  // namespace tgemm
