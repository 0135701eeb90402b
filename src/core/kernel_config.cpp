#include "src/core/kernel_config.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>

#include "src/core/error.h"

namespace tgemm {

std::string KernelConfig::canonical_name() const {
  std::string name = template_name;
  for (const auto& [key, value] : params) {
    name += '_';
    for (char c : key) name += char(std::tolower(static_cast<unsigned char>(c)));
    name += std::to_string(value);
  }
  return name;
}

std::vector<std::string> KernelConfig::defines() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : params) out.push_back(fmt::format("-D{}={}", key, value));
  return out;
}

bool KernelConfig::has(const std::string& name) const {
  for (const auto& p : params)
    if (p.first == name) return true;
  return false;
}

int64_t KernelConfig::get(const std::string& name) const {
  for (const auto& p : params)
    if (p.first == name) return p.second;
  fail("config {} has no parameter {}", canonical_name(), name);
}

int64_t KernelConfig::divisor(const std::string& name) const {
  const int64_t value = get(name);
  if (value < 1) fail("config {}: {}={} must be at least 1", canonical_name(), name, value);
  return value;
}

int64_t KernelConfig::get_or(const std::string& name, int64_t fallback) const {
  return has(name) ? get(name) : fallback;
}

void KernelConfig::set(const std::string& name, int64_t value) {
  for (auto& p : params)
    if (p.first == name) {
      p.second = value;
      return;
    }
  params.emplace_back(name, value);
}

std::string KernelConfig::params_text() const {
  std::string text;
  for (const auto& [key, value] : params) {
    if (!text.empty()) text += ',';
    text += fmt::format("{}={}", key, value);
  }
  return text;
}

KernelConfig KernelConfig::from_params_text(const std::string& template_name,
                                            const std::string& text) {
  KernelConfig config{template_name, {}};
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail("bad parameter '{}' in '{}'", item, text);
    try {
      size_t used = 0;
      int64_t value = std::stoll(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) throw std::invalid_argument(item);
      config.params.emplace_back(item.substr(0, eq), value);
    } catch (const std::logic_error&) {
      fail("bad parameter value in '{}'", item);
    }
    start = end + 1;
  }
  return config;
}

size_t KernelConfigHash::operator()(const KernelConfig& config) const noexcept {
  // FNV-1a's xor-then-multiply step, taken per field hash rather than per byte.
  size_t seed = std::hash<std::string>{}(config.template_name);
  auto mix = [&](size_t h) { seed = (seed ^ h) * size_t{0x100000001b3ULL}; };
  for (const auto& [name, value] : config.params) {
    mix(std::hash<std::string>{}(name));
    mix(std::hash<int64_t>{}(value));
  }
  return seed;
}

}  // namespace tgemm
