// ProgressLine: one status line on stderr, redrawn in place on a terminal and written as a
// plain line at most every few seconds otherwise (CI logs, device runs), or not at all
// under --quiet. What the line says is format_progress's job, so it can be tested alone.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace tgemm {

// The facts one progress line reports.
struct ProgressFacts {
  std::string what;            // "compile <family> f32 NN for sm_90", "4096^3 (f32 NN)"
  size_t done = 0, total = 0;  // done is shown clamped to total
  double elapsed_s = 0;
  double best_tflops = 0;     // 0: nothing measured yet
  double best_vs_cublas = 0;  // cuBLAS's time over the best's; 0: unknown
};

// "what: 12/68, 3s elapsed, ETA 14s, best 42.10 TFLOP/s (0.83x cuBLAS)". The ETA is left
// out until there is enough progress to extrapolate (a first item and a second of work),
// and at the end; the best is left out until there is one.
std::string format_progress(const ProgressFacts& facts);

// "1m05s", "42s"; "?" for what is not a sane duration (NaN, over a year), never an
// overflowed number.
std::string format_duration(double seconds);

class ProgressLine {
 public:
  enum class Mode { in_place, plain, quiet };
  // The mode for stderr: in place on a terminal, plain lines otherwise, none when quiet.
  static Mode mode_for_stderr(bool quiet);

  explicit ProgressLine(Mode mode, std::FILE* out = stderr,
                        std::chrono::milliseconds plain_interval = std::chrono::seconds(5))
      : mode_(mode), out_(out), interval_(plain_interval) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const ProgressFacts& facts);
  // Ends the line: on a terminal a newline, in plain mode the last state if it was not
  // the last line written (so a log always shows where a phase ended).
  void finish();

 private:
  Mode mode_;
  std::FILE* out_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool open_ = false;      // in place: a line is drawn and not yet ended
  std::string unwritten_;  // plain: the newest text not yet written
};

}  // namespace tgemm
