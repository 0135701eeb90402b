// ProblemRecorder: record mode. Each problem the dispatcher serves without an exact tuned
// entry goes once into a shape file (configs/shapes format) with its call count, so that
// `tgemm-tune --shapes <file>` tunes exactly what an application runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "src/core/problem.h"

namespace tgemm {

class ProblemRecorder {
 public:
  ProblemRecorder() = default;
  ~ProblemRecorder();  // flushes
  ProblemRecorder(const ProblemRecorder&) = delete;
  ProblemRecorder& operator=(const ProblemRecorder&) = delete;

  // Records into `path` from now on (after flushing and stopping any earlier file); an empty
  // path only stops. Throws Error naming the path when its lock file cannot be created.
  void start(const std::string& path);
  // Writes the counts not yet in the file and stops recording.
  void stop();
  bool active() const { return active_.load(std::memory_order_relaxed); }
  std::string path() const;

  // One served call. A shape new to this process is written to the file at once (so a
  // killed process keeps it); further calls are counted and written by flush() or stop().
  // Never throws: a file that cannot be written is one warning on stderr, then recording stops.
  void note(const Problem& problem);
  void flush();

 private:
  // What one shape-file entry can express (shape_entry()): types, layout, sizes, batch and the
  // epilogue's activation, bias (along, f32) and aux.
  using ShapeKey = std::tuple<int64_t, int64_t, int64_t, DType, DType, DType, ComputeType, Op, Op,
                              int64_t, Activation, BiasAlong, bool, bool>;
  struct Pending {
    std::string entry;    // shape_entry() of the problem, without the count
    std::string details;  // the first call's leading dimensions, alignments and beta
    int64_t calls = 0;    // calls not yet in the file
  };

  void flush_locked();  // caller holds mutex_
  void disable(const std::string& why);

  mutable std::mutex mutex_;  // guards everything below; held while the file is written
  std::atomic<bool> active_{false};
  std::string path_;
  std::map<ShapeKey, Pending> shapes_;
};

// The shape-file entry of `problem` without its count, e.g.
// "{m: 16, n: 4096, k: 4096, dtype: bf16, layout: NT" (", out: f32" for a wider C).
std::string shape_entry(const Problem& problem);

// Starts `recorder` on $TGEMM_RECORD when that is set; a file that cannot be used is one
// warning on stderr.
void start_from_environment(ProblemRecorder& recorder);

// The process's recorder, started from the environment on first use.
ProblemRecorder& problem_recorder();

}  // namespace tgemm
