// How tgemm-db prints figures and phrases in its tables and messages, stated once for every
// subcommand: a figure that is not finite shows as "-", never as nan or inf.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace tgemm::cli::db_tool {

// A figure as printed; "-" for one that is not finite (a wrong result's error of infinity): a
// table never shows nan or inf.
inline std::string fixed(double value, int digits = 2) {
  return std::isfinite(value) ? fmt::format("{:.{}f}", value, digits) : "-";
}
inline std::string scientific(double value, int digits) {
  return std::isfinite(value) ? fmt::format("{:.{}e}", value, digits) : "-";
}

// cuBLAS time / tgemm time: above 1 means tgemm is faster.
inline std::string vs_cublas(double cublas_us, double tgemm_us) {
  return cublas_us > 0 && tgemm_us > 0 ? fixed(cublas_us / tgemm_us, 3) : "-";
}

// Errors can hold a whole NVRTC log; a table row gets the first line.
inline std::string first_line(const std::string& text, size_t limit = 120) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

// The --device filter as a message names it; nothing when every device was asked about.
inline std::string on_device(const std::string& device) {
  return device.empty() ? "" : fmt::format(" on device '{}'", device);
}

}  // namespace tgemm::cli::db_tool
