// Trials whose template text changed since they were measured, judged by the machine code
// their config builds to now (src/jit/code_hash.h): where it is the same, the trials are
// re-keyed to today's template hash and served again; where it changed, they stay stale and
// tgemm-tune measures them again. Compiling is the price of the check, so the library keeps the
// fast text check (CurrentBuild) and this runs in the tools.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "db/tuning_db.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

enum class CodeVerdict { same, changed, not_built };

struct CodeCheck {
  CodeVerdict verdict = CodeVerdict::not_built;
  CompiledKernel current;  // today's build of the config (failed when not_built by it)
  std::string why;         // not_built: why there is no verdict
};

// This build's host side of a family by name (a tool's own template file may replace the
// registered one), or nullptr when it has none.
using FamilyLookup = std::function<const GemmTemplate*(const std::string& name)>;

// Whether `family` (nullptr: none) is built from another template text than `stored` was.
bool text_changed(const TrialBinary& stored, const GemmTemplate* family);

// Builds `stored`'s config for its layout, types and arch from `family`'s text and compares
// code hashes with that of the stored cubin, or where it was pruned the one recorded when it
// was compiled.
CodeCheck check_code(const TrialBinary& stored, const GemmTemplate& family);

struct RefreshOptions {
  FamilyLookup family;                                     // today's families
  std::function<CurrentBuild(const DeviceInfo&)> current;  // this build on a stored device
  std::string arch;                                        // only binaries for it; "": all
  int64_t run_id = 0;                                      // the run new binaries point at
  int jobs = 1;                                            // compiles at once
};

// What refresh_by_code did with the trials of the binaries whose family text changed.
struct RefreshCounts {
  int64_t rekeyed = 0;            // moved to today's template hash: the same machine code
  int64_t changed = 0;            // left stale: their code changed
  int64_t not_built = 0;          // left stale: no verdict (the build failed, nothing to compare)
  int64_t superseded = 0;         // same code, left stale: the new kernel has its own trial there
  std::string example_not_built;  // "<kernel> (<arch>): <why>" of the first not built
};

// Checks the code of every binary whose family text changed (options.jobs compiles at once),
// then re-keys the trials of those whose code is the same, in one transaction: on an error
// nothing is changed.
RefreshCounts refresh_by_code(TuningDb& db, const RefreshOptions& options);

}  // namespace tgemm
