// Option checks shared by the command-line tools: each message says what is allowed and
// quotes what was given (CLI11 prefixes the option's name). CLI11's own NonNegativeNumber
// and PositiveNumber print DBL_MAX in full and let nan and inf through.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace tgemm::cli {

// A whole number from `lo` to `hi`, in decimal digits only (CLI11 alone would wrap "-1" into
// an unsigned option and read "010" as octal). `what` describes the value.
inline CLI::Validator whole_number(int64_t lo, int64_t hi, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool negative = !text.empty() && text[0] == '-';
        const std::string digits = text.substr(negative ? 1 : 0);
        if (!digits.empty() && digits.size() <= 18 &&
            digits.find_first_not_of("0123456789") == std::string::npos) {
          const int64_t value = (negative ? -1 : 1) * std::stoll(digits);
          if (value >= lo && value <= hi) {
            text = std::to_string(value);  // no leading zero left for CLI11 to read as octal
            return "";
          }
        }
        return fmt::format("must be {}, a whole number from {} to {}, not '{}'", what, lo, hi,
                           text);
      },
      fmt::format("{}..{}", lo, hi));
}

// A CUDA device ordinal (its upper end is checked against the machine later).
inline CLI::Validator device_ordinal() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.size() <= 4 &&
            text.find_first_not_of("0123456789") == std::string::npos) {
          text = std::to_string(std::stoi(text));
          return "";
        }
        return fmt::format("must be a CUDA device ordinal (0, 1, ... up to 9999), not '{}'", text);
      },
      "0, 1, ...");
}

// A finite decimal number from `lo` to `hi` (nan, inf, hex floats and trailing junk are
// refused), with its unit in the message.
inline CLI::Validator number_from(double lo, double hi, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool plain =
            !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
        char* end = nullptr;
        const double value = plain ? std::strtod(text.c_str(), &end) : 0.0;
        if (plain && end == text.c_str() + text.size() && std::isfinite(value) && value >= lo &&
            value <= hi)
          return "";
        return fmt::format("must be a number of {} from {} to {}, not '{}'", unit, lo, hi, text);
      },
      fmt::format("{}..{}", lo, hi));
}

// Parses like CLI11_PARSE, but an unknown option or argument is reported first: CLI11 checks
// required options (and subcommands) and values before it looks at what was left over.
// Returns the exit code when the tool must stop, -1 when it may go on.
inline int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> extras = app.remaining(true);
    if (!extras.empty()) return app.exit(CLI::ExtrasError(extras));
    return app.exit(e);
  }
  return -1;
}

}  // namespace tgemm::cli
