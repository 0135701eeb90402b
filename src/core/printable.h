// Text from a database or a path made safe to print: its control characters escaped, so a
// planted name cannot move the cursor, clear the screen or forge a line of output.
#pragma once

#include <string>
#include <string_view>

namespace tgemm {

// `text` with every C0 and C1 control character, DEL and each byte that is not part of valid
// UTF-8 written as an escape (\n, \r, \t, else \xNN); printable UTF-8 is kept as it is.
std::string printable(std::string_view text);

}  // namespace tgemm
