#include "tuner/report/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace tgemm {

namespace {
// Below this much work an ETA is noise (the first compile also pays NVRTC's start-up).
constexpr double kMinSecondsForEta = 1.0;
}  // namespace

std::string format_duration(double seconds) {
  if (!(seconds < 365.0 * 24 * 3600)) return "?";
  if (seconds < 0) seconds = 0;
  const long long s = (long long)(seconds + 0.5);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string format_progress(const ProgressFacts& f) {
  const size_t done = std::min(f.done, f.total);
  std::string text =
      fmt::format("{}: {}/{}, {} elapsed", f.what, done, f.total, format_duration(f.elapsed_s));
  if (done > 0 && done < f.total && f.elapsed_s >= kMinSecondsForEta) {
    const double eta = f.elapsed_s / double(done) * double(f.total - done);
    text += ", ETA " + format_duration(eta);
  }
  if (f.best_tflops > 0) {
    text += fmt::format(", best {:.2f} TFLOP/s", f.best_tflops);
    if (f.best_vs_cublas > 0) text += fmt::format(" ({:.2f}x cuBLAS)", f.best_vs_cublas);
  }
  return text;
}

ProgressLine::Mode ProgressLine::mode_for_stderr(bool quiet) {
  if (quiet) return Mode::quiet;
  return isatty(fileno(stderr)) ? Mode::in_place : Mode::plain;
}

void ProgressLine::update(const ProgressFacts& facts) {
  if (mode_ == Mode::quiet) return;
  const std::string text = format_progress(facts);
  if (mode_ == Mode::in_place) {
    std::fprintf(out_, "\r\033[K%s", text.c_str());
    std::fflush(out_);
    open_ = true;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (last_ == std::chrono::steady_clock::time_point{} || now - last_ >= interval_) {
    std::fprintf(out_, "%s\n", text.c_str());
    last_ = now;
    unwritten_.clear();
  } else {
    unwritten_ = text;
  }
}

void ProgressLine::finish() {
  if (open_) std::fprintf(out_, "\n");
  open_ = false;
  if (!unwritten_.empty()) std::fprintf(out_, "%s\n", unwritten_.c_str());
  unwritten_.clear();
}

}  // namespace tgemm
