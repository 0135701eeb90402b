// ProgressLine: one status line on stderr, redrawn in place on a terminal and logged at
// most every few seconds otherwise (CI logs, device runs).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace tgemm {

class ProgressLine {
 public:
  ProgressLine() : tty_(isatty(fileno(stderr)) != 0) {}
  ~ProgressLine() { finish(); }

  void update(const std::string& text) {
    auto now = std::chrono::steady_clock::now();
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
      open_ = true;
    } else if (now - last_ >= std::chrono::seconds(5)) {
      std::fprintf(stderr, "%s\n", text.c_str());
      last_ = now;
    }
  }
  // Ends the in-place line so that the next output starts on a fresh line.
  void finish() {
    if (open_) std::fprintf(stderr, "\n");
    open_ = false;
  }

 private:
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// "1m05s", "42s"; "?" for what is not a sane duration (NaN, over a year: an ETA from too
// little progress), never an overflowed number.
inline std::string format_duration(double seconds) {
  if (!(seconds < 365.0 * 24 * 3600)) return "?";
  if (seconds < 0) seconds = 0;
  const long long s = (long long)(seconds + 0.5);
  char buf[32];
  if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

}  // namespace tgemm
