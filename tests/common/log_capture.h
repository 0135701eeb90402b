// What the library logs while this object lives (its library_log(), and spdlog's default logger
// that the tools' own code logs to), into a string, so a test can check that a warning is
// given, and given once.
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "src/core/library_log.h"

namespace tgemm::testing {

class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)),
        previous_(spdlog::default_logger()) {
    library_log().sinks().push_back(sink_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
  }
  ~LogCapture() {
    spdlog::set_default_logger(previous_);
    auto& sinks = library_log().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::sink> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace tgemm::testing
