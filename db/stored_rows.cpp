#include "db/stored_rows.h"

#include <fmt/format.h>

#include <utility>

#include "db/schema.h"
#include "src/core/printable.h"
#include "src/jit/cubin_check.h"

namespace tgemm {

const char* const kProblemColumns =
    "p.id AS problem_id, p.dtype AS dtype, p.layout AS layout, p.m AS m, p.n AS n, p.k AS k, "
    "p.lda AS lda, p.ldb AS ldb, p.ldc AS ldc, p.align_a AS align_a, p.align_b AS align_b, "
    "p.align_c AS align_c, p.beta_zero AS beta_zero, p.batch AS batch, "
    "p.batch_pointers AS batch_pointers, p.stride_a AS stride_a, p.stride_b AS stride_b, "
    "p.stride_c AS stride_c, p.epilogue AS epilogue";

const char* const kTrialColumns =
    "t.id AS trial_id, kr.id AS kernel_id, kr.template AS template, kr.params AS params, "
    "t.status AS status, t.error AS error, t.time_min_us AS time_min_us, "
    "t.time_median_us AS time_median_us, t.time_max_us AS time_max_us, t.runs AS runs, "
    "t.tflops AS tflops, t.max_rel_error AS max_rel_error, t.nvrtc_version AS nvrtc_version, "
    "t.driver_version AS driver_version";

const char* const kBinaryColumns =
    "b.id AS binary_id, b.kernel_id AS kernel_id, b.status AS status, b.reason AS reason, "
    "b.arch AS arch, b.nvrtc_version AS nvrtc_version, b.op_a AS op_a, b.op_b AS op_b, "
    "b.entry AS entry, b.options AS options, b.cache_key AS cache_key, b.cubin AS cubin, "
    "b.registers AS registers, b.smem_bytes AS smem_bytes, b.stack_bytes AS stack_bytes, "
    "b.spill_store_bytes AS spill_store_bytes, b.spill_load_bytes AS spill_load_bytes, "
    "b.resources_found AS resources_found, b.compile_ms AS compile_ms, b.log AS log, "
    "b.types AS types, b.checksum AS checksum, b.code_hash AS code_hash, "
    "b.batch_form AS batch_form, b.epilogue AS epilogue";

namespace {

BinaryStatus parse_binary_status(const std::string& text) {
  if (text == "ok") return BinaryStatus::ok;
  if (text == "compile_failed") return BinaryStatus::compile_failed;
  if (text == "resource_exceeded") return BinaryStatus::resource_exceeded;
  fail("unknown binary status '{}' (expected ok, compile_failed or resource_exceeded)", text);
}

TrialStatus parse_stored_trial_status(const std::string& text) {
  try {
    return parse_trial_status(text);
  } catch (const Error&) {
    std::string allowed;
    for (int i = 0; to_string(TrialStatus(i)) != "?"; ++i)
      allowed += (i ? ", " : "") + to_string(TrialStatus(i));
    fail("unknown trial status '{}' (expected one of {})", text, allowed);
  }
}

// `text` with each line made printable() and the line breaks kept: a compiler log stays a log
// of lines, and none of them can move the cursor or rewrite the terminal.
std::string printable_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out += printable(std::string_view(text).substr(start, end - start)) + '\n';
  return out + printable(std::string_view(text).substr(start));
}

}  // namespace

std::string to_string(BinaryStatus status) {
  switch (status) {
    case BinaryStatus::ok:
      return "ok";
    case BinaryStatus::compile_failed:
      return "compile_failed";
    case BinaryStatus::resource_exceeded:
      return "resource_exceeded";
  }
  return "?";
}

std::string measured_trials() {
  return fmt::format("status = 'ok' AND time_median_us > 0 AND time_median_us {}", kFiniteReal);
}

Problem problem_at(const Statement& s) {
  Problem p;
  const int64_t id = s.integer("problem_id");
  p.types = decoded(s, "problems", id, "dtype", [&] { return parse_gemm_types(s.text("dtype")); });
  decoded(s, "problems", id, "layout", [&] { parse_layout(s.text("layout"), &p.op_a, &p.op_b); });
  p.m = s.integer("m");
  p.n = s.integer("n");
  p.k = s.integer("k");
  p.lda = s.integer("lda");
  p.ldb = s.integer("ldb");
  p.ldc = s.integer("ldc");
  p.align_a = int(s.integer("align_a"));
  p.align_b = int(s.integer("align_b"));
  p.align_c = int(s.integer("align_c"));
  // The schema's CHECKs, which SQLite does not apply on a read-only connection.
  for (auto [column, value] : {std::pair{"m", p.m}, {"n", p.n}, {"k", p.k}})
    if (value < 1) bad_row(s, "problems", id, column, fmt::format("{} is below 1", value));
  const int64_t beta_zero = s.integer("beta_zero");
  if (beta_zero != 0 && beta_zero != 1)
    bad_row(s, "problems", id, "beta_zero", fmt::format("{} is neither 0 nor 1", beta_zero));
  p.beta_zero = beta_zero != 0;
  p.batch = s.integer("batch");
  p.batch_pointers = s.integer("batch_pointers") != 0;
  p.stride_a = s.integer("stride_a");
  p.stride_b = s.integer("stride_b");
  p.stride_c = s.integer("stride_c");
  try {
    p.validate_batch();
  } catch (const Error& e) {
    bad_row(s, "problems", id, "batch", e.what());
  }
  p.epilogue = decoded(s, "problems", id, "epilogue",
                       [&] { return parse_epilogue_name(s.text("epilogue")); });
  if (std::string why = p.epilogue.invalid_reason(p.types); !why.empty())
    bad_row(s, "problems", id, "epilogue", why);
  if (p.epilogue.any() && p.batched())
    bad_row(s, "problems", id, "epilogue", "an epilogue on a batch");
  return p;
}

TrialResult trial_at(const Statement& s) {
  TrialResult t;
  const int64_t id = s.integer("trial_id");
  t.config = decoded(s, "kernels", s.integer("kernel_id"), "params", [&] {
    return KernelConfig::from_params_text(s.text("template"), s.text("params"));
  });
  t.status = decoded(s, "trials", id, "status",
                     [&] { return parse_stored_trial_status(s.text("status")); });
  t.error = printable_lines(s.text("error"));  // for people only: a log of lines
  t.time_min_us = s.real("time_min_us");
  t.time_median_us = s.real("time_median_us");
  t.time_max_us = s.real("time_max_us");
  t.runs = int(s.integer("runs"));
  t.tflops = s.real("tflops");
  t.max_rel_error = s.real("max_rel_error");
  return t;
}

MeasuredWith measured_with_at(const Statement& s) {
  MeasuredWith w;
  if (!s.is_null("nvrtc_version")) w.nvrtc_version = s.text("nvrtc_version");
  if (!s.is_null("driver_version")) w.driver_version = int(s.integer("driver_version"));
  return w;
}

BinaryRecord binary_at(const Statement& s) {
  BinaryRecord r;
  r.id = s.integer("binary_id");
  r.kernel_id = s.integer("kernel_id");
  r.status =
      decoded(s, "binaries", r.id, "status", [&] { return parse_binary_status(s.text("status")); });
  r.reason = s.text("reason");
  CompiledKernel& c = r.compiled;
  // NVRTC produced a cubin unless compilation failed; a resource prune still compiled.
  c.ok = r.status != BinaryStatus::compile_failed;
  c.error = r.status == BinaryStatus::compile_failed ? r.reason : "";
  c.arch = s.text("arch");
  c.nvrtc_version = s.text("nvrtc_version");
  c.op_a = decoded(s, "binaries", r.id, "op_a", [&] { return parse_op(s.text("op_a")); });
  c.op_b = decoded(s, "binaries", r.id, "op_b", [&] { return parse_op(s.text("op_b")); });
  c.entry = s.text("entry");
  c.options = s.text("options");
  c.cache_key = s.text("cache_key");
  c.cubin = s.blob("cubin");
  c.resources.registers = int(s.integer("registers"));
  c.resources.smem_bytes = int(s.integer("smem_bytes"));
  c.resources.stack_frame_bytes = int(s.integer("stack_bytes"));
  c.resources.spill_store_bytes = int(s.integer("spill_store_bytes"));
  c.resources.spill_load_bytes = int(s.integer("spill_load_bytes"));
  c.resources.found = s.integer("resources_found") != 0;
  c.compile_ms = s.real("compile_ms");
  c.log = s.text("log");
  c.types =
      decoded(s, "binaries", r.id, "types", [&] { return parse_gemm_types(s.text("types")); });
  c.code_hash = s.text("code_hash");  // "" for NULL: not known
  const int64_t form = s.integer("batch_form");
  if (form < 0 || form > int64_t(BatchForm::grouped))
    bad_row(s, "binaries", r.id, "batch_form", fmt::format("{} is not 0, 1, 2 or 3", form));
  c.batch_form = BatchForm(form);
  c.epilogue = decoded(s, "binaries", r.id, "epilogue",
                       [&] { return parse_epilogue_name(s.text("epilogue")); });
  // A cubin that does not match its checksum (damage, a hand edit, a file without checksums)
  // is never handed out: the caller sees checksum_ok false and no bytes.
  if (!c.cubin.empty()) {
    r.checksum_ok = !s.is_null("checksum") && s.text("checksum") == cubin_checksum(c.cubin);
    // A checksum recomputed over planted bytes proves nothing: the bytes must be a cubin.
    r.cubin_rejected =
        r.checksum_ok ? cubin_problem(c.cubin, c.arch, {c.entry}) : "it fails its checksum";
    r.checksum_ok = r.cubin_rejected.empty();
    if (!r.checksum_ok) c.cubin.clear();
  }
  return r;
}

std::optional<BinaryRecord> checked_binary_at(const Statement& s) {
  std::optional<BinaryRecord> out;
  SkippedRows(s.path(), "look up a binary").keep([&] { out = binary_at(s); });
  return out;
}

}  // namespace tgemm
