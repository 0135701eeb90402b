// Runs Nsight Compute (ncu) on tgemm-profile-target for one contender of one tuned problem
// and reads the profiled kernel's metrics back (tgemm-db profile). Never touches CUDA itself.
#pragma once

#include <string>
#include <vector>

#include "src/core/kernel_profile.h"

namespace tgemm {

// ncu's path: `explicit_path` when given (it must be an executable file, else Error), else
// the first ncu on PATH, then /opt/nvidia/nsight-compute/<version>/ncu (newest first) and
// /usr/local/cuda/bin/ncu; empty when there is none.
std::string find_ncu(const std::string& explicit_path, const std::string& path_variable);

// What `ncu --version` says its version is. Throws Error when ncu does not run.
std::string ncu_version(const std::string& ncu);

struct NcuRun {
  std::string ncu;           // from find_ncu
  std::string target;        // the tgemm-profile-target executable
  std::string db_path;       // the database the target reads
  std::string problem_key;   // Problem::key() of a tuned problem
  std::string contender;     // kTgemmContender or kCublasContender
  std::string kernel_regex;  // tgemm: "^<entry>$", so a split-K helper is never profiled
  int warmup = 3;            // calls before the profiled one
  std::string scratch_dir;   // where ncu's output is kept while it is read
};

// The ncu command line of one run with these metrics (also what an error message shows).
std::vector<std::string> ncu_command(const NcuRun& run, const std::vector<std::string>& metrics);

// Profiles the one call the target makes between cudaProfilerStart/Stop: tgemm's kernel
// (the row of its entry), or the longest kernel of cuBLAS's call (a split-K reduction or a
// helper is shorter). Metrics this ncu does not know are dropped and the run repeated.
// Throws Error with the end of ncu's output when nothing was profiled.
KernelProfile profile_with_ncu(const NcuRun& run);

// The device the target would profile on ("NVIDIA H200" and "sm_90"), asked of the target.
std::pair<std::string, std::string> target_device(const std::string& target, int* exit_code);

}  // namespace tgemm
