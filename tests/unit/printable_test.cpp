// printable(): what the tools and the library print from a database or a path.
#include "src/core/printable.h"

#include <gtest/gtest.h>

namespace tgemm {
namespace {

TEST(Printable, keeps_plain_text_and_utf8) {
  EXPECT_EQ(printable("NVIDIA H200 (sm_90) 4096x4096"), "NVIDIA H200 (sm_90) 4096x4096");
  EXPECT_EQ(printable("r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"),
            "r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
}

TEST(Printable, escapes_control_characters) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("line\nforged\r\tx\x7f"), "line\\nforged\\r\\tx\\x7f");
  EXPECT_EQ(printable(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(Printable, escapes_c1_controls_and_invalid_utf8) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");  // U+009B, the one-character CSI
  EXPECT_EQ(printable("\x9b"
                      "31m"),
            "\\x9b31m");                                    // a bare 8-bit CSI
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("cut \xe2\x82"), "cut \\xe2\\x82");   // truncated sequence
}

}  // namespace
}  // namespace tgemm
