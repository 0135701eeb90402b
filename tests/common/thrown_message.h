// The message of the tgemm::Error a call throws, or "no Error": for tests of the C++ API's
// refusals.
#pragma once

#include <string>

#include "tgemm/tgemm.h"

namespace tgemm::testing {

template <typename Call>
std::string thrown_message(Call&& call) {
  try {
    call();
  } catch (const tgemm::Error& e) {
    return std::string(e.what());
  }
  return std::string("no Error");
}

}  // namespace tgemm::testing
