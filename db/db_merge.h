// Merging tuning databases: everything in another file (a cluster's shard, a second machine's
// run) added to this one in one transaction.
#pragma once

#include <cstdint>
#include <string>

#include "db/db_connection.h"

namespace tgemm {

// What merge_from added to the database from the other file.
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

// Adds everything in the tuning database at `other_path` (opened read-only, never written;
// an older schema is read through a migrated copy; refused when integrity_problems() finds
// anything) to `db`, a writable connection, in one transaction: devices, kernels, binaries and
// problems by their natural keys, every run under a new id, every trial; a (problem, kernel,
// device) in both keeps the faster ok trial (this file's when neither is ok or they tie),
// cuBLAS times the latest per (problem, device), and the best of every (problem, device) the
// other file has trials for is recomputed.
MergeCounts merge_from(DbConnection& db, const std::string& other_path);

}  // namespace tgemm
