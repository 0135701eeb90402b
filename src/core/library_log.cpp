#include "src/core/library_log.h"

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "src/core/printable.h"

namespace tgemm {

namespace {

// Standard error, each message escaped before it is formatted.
class EscapingStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string escaped = printable(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, escaped);
    spdlog::memory_buf_t line;
    formatter_->format(copy, line);
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

std::shared_ptr<spdlog::logger> make_library_log() {
  auto logger = std::make_shared<spdlog::logger>("tgemm", std::make_shared<EscapingStderrSink>());
  // Registered, it takes the global level and follows spdlog::set_level; an application that
  // already holds a logger of this name keeps it, and this one stays unregistered.
  try {
    spdlog::initialize_logger(logger);
  } catch (const spdlog::spdlog_ex&) {
    logger->set_level(spdlog::get_level());
  }
  return logger;
}

}  // namespace

spdlog::logger& library_log() {
  static const std::shared_ptr<spdlog::logger> logger = make_library_log();
  return *logger;
}

}  // namespace tgemm
