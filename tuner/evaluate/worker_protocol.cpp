#include "tuner/evaluate/worker_protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "src/core/error.h"
#include "tuner/evaluate/json_codec.h"

namespace tgemm {

// ---- Messages: each lists its fields once (value types map themselves, json_codec.cpp) -----
// (namespace scope, not anonymous: the codec's reader and writer find them by argument lookup)

void describe(auto&, Is<ProbeRequest> auto&) {}
void describe(auto&, Is<QuitRequest> auto&) {}
void describe(auto&, Is<CeilingsRequest> auto&) {}

void describe(auto& io, Is<PrepareRequest> auto& r) {
  io("problem", r.problem);
  io("timing", r.timing);
  io("alpha", r.alpha);
  io("beta", r.beta);
  io("time_cublas", r.time_cublas);
  io("time_vendor", r.time_vendor);
}

void describe(auto& io, Is<EvaluateRequest> auto& r) {
  io("config", r.config);
  io("cubin_path", r.cubin_path);
  io("cutoff_us", r.cutoff_us);
}

void describe(auto& io, Is<CompareRequest> auto& r) {
  io("config", r.config);
  io("cubin_path", r.cubin_path);
}

void describe(auto& io, Is<ProbeResponse> auto& r) {
  io("device", r.device);  // null when there is none
  io("why", r.why);
}

void describe(auto& io, Is<PrepareResponse> auto& r) { io("cublas", r.cublas); }
void describe(auto& io, Is<EvaluateResponse> auto& r) { io("result", r.result); }
void describe(auto& io, Is<CompareResponse> auto& r) { io("comparison", r.comparison); }
void describe(auto& io, Is<CeilingsResponse> auto& r) { io("ceilings", r.ceilings); }
void describe(auto& io, Is<ErrorResponse> auto& r) { io("error", r.error); }

namespace {

// {"type": ..., <head fields>, <the message's fields>} on one line.
template <class Message>
std::string encode_message(const Message& message, Json head = Json::object()) {
  Json j = Json::object();
  j["type"] = Message::kType;
  for (auto& [key, value] : head.items()) j[key] = std::move(value);
  JsonWriter writer(j);
  describe(writer, message);
  // Invalid UTF-8 (in an error text, say) becomes U+FFFD rather than an exception.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json parse_message(std::string_view payload, const char* what) {
  Json j;
  try {
    j = Json::parse(payload.begin(), payload.end());
  } catch (const Json::exception& e) {
    fail("worker protocol: unreadable {} (not JSON: {})", what, e.what());
  }
  if (!j.is_object())
    fail("worker protocol: a {} must be a JSON object, not {}", what, j.type_name());
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string())
    fail("worker protocol: a {} needs a string field 'type'", what);
  return j;
}

// The alternative of `out` whose kType is `type`, read from j; false when none is.
template <class... Ts>
bool decode_alternative(const Json& j, const std::string& type, std::variant<Ts...>& out) {
  auto read = [&]<class T>() {
    T message;
    JsonReader reader(j);
    describe(reader, message);
    out = std::move(message);
    return true;
  };
  return ((type == Ts::kType && read.template operator()<Ts>()) || ...);
}

template <class... Ts>
std::string type_names(const std::variant<Ts...>&) {
  std::string names;
  ((names += (names.empty() ? "" : ", ") + std::string(Ts::kType)), ...);
  return names;
}

// Decodes `payload` into `body`, calling `head(j)` first; every malformation becomes an Error.
template <class Variant, class Head>
void decode_message(std::string_view payload, const char* what, Variant& body, Head head) {
  const Json j = parse_message(payload, what);
  const std::string& type = j["type"].get_ref<const std::string&>();
  try {
    head(JsonReader(j));
    if (!decode_alternative(j, type, body))
      fail("worker protocol: unknown {} type '{}' (known: {})", what, type, type_names(body));
  } catch (const JsonFieldError& e) {
    fail("worker protocol: {} {}: {}", type, what, e.what());
  } catch (const Json::exception& e) {  // not expected: the reader checks types first
    fail("worker protocol: {} {}: {}", type, what, e.what());
  }
}

}  // namespace

std::string request_kind(const WorkerRequest& request) {
  return std::visit([](const auto& r) { return std::string(r.kType); }, request);
}

std::string encode_request(const WorkerRequest& request) {
  return std::visit([](const auto& r) { return encode_message(r); }, request);
}

WorkerRequest decode_request(std::string_view payload) {
  WorkerRequest request;
  decode_message(payload, "request", request, [](const JsonReader&) {});
  return request;
}

std::string encode_response(const WorkerResponse& response) {
  return std::visit(
      [&](const auto& r) {
        return encode_message(r, {{"worker_exits", response.worker_exits}});
      },
      response.body);
}

WorkerResponse decode_response(std::string_view payload) {
  WorkerResponse response;
  decode_message(payload, "response", response.body,
                 [&](const JsonReader& head) { head("worker_exits", response.worker_exits); });
  return response;
}

// ---- Framing: one message per line ---------------------------------------------------------

std::string encode_frame(std::string_view payload) {
  if (payload.size() > kMaxFrameBytes)
    fail("worker protocol: message of {} bytes exceeds the {} byte limit", payload.size(),
         kMaxFrameBytes);
  if (payload.find('\n') != std::string_view::npos)
    fail("worker protocol: a message must fit on one line");
  std::string frame(payload);
  frame += '\n';
  return frame;
}

std::optional<std::string> FrameDecoder::next() {
  const size_t newline = buffer_.find('\n', scanned_);
  const size_t length = newline == std::string::npos ? buffer_.size() : newline;
  if (length > kMaxFrameBytes)
    fail("worker protocol: a line of more than {} bytes (the limit); the peer is confused",
         kMaxFrameBytes);
  if (newline == std::string::npos) {
    scanned_ = buffer_.size();
    return std::nullopt;
  }
  std::string line = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  scanned_ = 0;
  return line;
}

bool read_frame(int fd, FrameDecoder& decoder, std::string* payload) {
  char chunk[65536];
  for (;;) {
    if (auto frame = decoder.next()) {
      *payload = std::move(*frame);
      return true;
    }
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail("worker protocol: read from fd {} failed: {}", fd, std::strerror(errno));
    }
    if (got == 0) {
      if (decoder.has_partial()) fail("worker protocol: the peer closed the pipe mid-message");
      return false;
    }
    decoder.feed(chunk, size_t(got));
  }
}

void write_frame(int fd, std::string_view payload) {
  const std::string frame = encode_frame(payload);
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t wrote = ::write(fd, frame.data() + done, frame.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      fail("worker protocol: write to fd {} failed: {}", fd, std::strerror(errno));
    }
    done += size_t(wrote);
  }
}

}  // namespace tgemm
