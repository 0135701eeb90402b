// Stable 64-bit FNV-1a hash as 16 hex digits: the same text gives the same key on every
// machine and build (std::hash promises neither), so it can live in the database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tgemm {

inline std::string stable_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[size_t(i)] = digits[h & 15];
  return out;
}

}  // namespace tgemm
