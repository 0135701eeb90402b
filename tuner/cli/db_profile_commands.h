// tgemm-db's Nsight Compute profiles: measuring the best kernels of this GPU and cuBLAS's beside
// them (profile, the one subcommand that writes its database) and showing what is stored
// (profiles). Each returns the tool's exit status.
#pragma once

#include <string>

#include "db/tuning_db.h"

namespace tgemm::cli::db_tool {

// The profile options as given: one shape (--m --n --k, empty when not given) or --all.
struct ProfileArgs {
  std::string m, n, k;  // empty: not given
  std::string dtype = "f32", out, layout = "NN";
  bool all = false;
  std::string ncu;
  int warmup = 3;
};

// Checks the options and finds ncu before the database is opened, so nothing is written when
// they are wrong.
int run_profile(const std::string& db_path, const ProfileArgs& args);
int run_profiles(TuningDb& db, const std::string& device);

}  // namespace tgemm::cli::db_tool
