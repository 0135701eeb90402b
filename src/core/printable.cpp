#include "src/core/printable.h"

#include <fmt/format.h>

#include <cstdint>

namespace tgemm {

namespace {

// The length of the valid UTF-8 sequence at text[at] that encodes a printable code point
// (not a C1 control, U+0080 to U+009F), or 0.
size_t printable_sequence(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length = 0;
  uint32_t code = 0, lowest = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, code = lead & 0x1f, lowest = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, code = lead & 0x0f, lowest = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, code = lead & 0x07, lowest = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    code = code << 6 | (byte(at + i) & 0x3f);
  }
  const bool overlong = code < lowest, surrogate = code >= 0xd800 && code <= 0xdfff;
  const bool c1_control = code >= 0x80 && code <= 0x9f;
  if (overlong || surrogate || code > 0x10ffff || c1_control) return 0;
  return length;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      ++i;
    } else if (const size_t length = c >= 0x80 ? printable_sequence(text, i) : 0; length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += c == '\n'   ? "\\n"
             : c == '\r' ? "\\r"
             : c == '\t' ? "\\t"
                         : fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  return out;
}

}  // namespace tgemm
