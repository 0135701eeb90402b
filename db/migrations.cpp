#include "db/migrations.h"

namespace tgemm {

extern const char kSchemaSql[];  // db/schema.sql, embedded at build time

namespace {

// Version 2: every cubin carries its checksum (cubin_checksum), verified before it is used.
// tgemm_checksum is the SQL function that connect registers on every connection.
constexpr const char* kAddCubinChecksums =
    "ALTER TABLE binaries ADD COLUMN checksum TEXT;  -- cubin_checksum(cubin); NULL: no cubin\n"
    "UPDATE binaries SET checksum = tgemm_checksum(cubin) WHERE cubin IS NOT NULL;";

// 2 -> 3: typed problems. `dtype` holds GemmTypes::name() (the shape-file dtype, with
// "_out_f32" for an f32 C of 16-bit inputs), alignments move from elements to bytes, the
// key gets its new form (functional key, then "_a" and the byte alignments), and binaries
// record the types they were built for.
constexpr const char* kTypedProblems = R"sql(
UPDATE problems SET
  align_a = align_a * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END),
  align_b = align_b * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END),
  align_c = align_c * (CASE WHEN dtype IN ('f16', 'bf16') THEN 2 ELSE 4 END);
UPDATE problems SET key = dtype || '_' || layout || '_m' || m || '_n' || n || '_k' || k ||
  '_b' || (1 - beta_zero) || '_a' || align_a || '.' || align_b || '.' || align_c;
ALTER TABLE binaries ADD COLUMN types TEXT NOT NULL DEFAULT 'f32';
)sql";

// 3 -> 4: beside cuBLAS's time, SGEMM's own error against an FP64 reference on the same
// inputs (f32x3 problems; NULL for others and for files tuned before): the figure an f32x3
// kernel's max_rel_error (also against FP64) is compared with.
constexpr const char* kCublasErrors = "ALTER TABLE cublas_times ADD COLUMN sgemm_rel_error REAL;";

// 4 -> 5: the measured roofs of each device (copy bandwidth, FFMA and tensor peaks), so a
// roofline uses what the GPU reached rather than a datasheet. One row per (device, kind).
constexpr const char* kDeviceCeilings = R"sql(
CREATE TABLE device_ceilings (
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  kind        TEXT NOT NULL,   -- copy_bandwidth, f32_ffma, f16, bf16, tf32
  value       REAL NOT NULL CHECK (value > 0),  -- bytes/s for copy_bandwidth, else FLOP/s
  source      TEXT NOT NULL,   -- cudaMemcpyAsync, nvrtc_ffma_kernel, cublasSgemm, cublasGemmEx
  detail      TEXT NOT NULL,   -- what was measured: sizes, repetitions
  run_id      INTEGER REFERENCES runs (id),
  measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (device_id, kind)
);
)sql";

// 5 -> 6: what each trial was measured with beyond its kernel's source (whose hash the kernel
// row holds): the NVRTC version that compiled it and the CUDA driver that ran it, so a trial
// can be found stale after an upgrade. NULL for trials recorded before: not known.
constexpr const char* kTrialVersions =
    "ALTER TABLE trials ADD COLUMN nvrtc_version TEXT;\n"
    "ALTER TABLE trials ADD COLUMN driver_version INTEGER;";

// 6 -> 7: Nsight Compute profiles of the best kernel and of cuBLAS's per (problem, device), so
// the report can show why one is faster. Metrics ncu could not collect are NULL; the stall
// reasons are "name=value" pairs, the largest first, joined by ';'.
constexpr const char* kKernelProfiles = R"sql(
CREATE TABLE kernel_profiles (
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  contender   TEXT NOT NULL CHECK (contender IN ('tgemm', 'cublas')),
  config      TEXT NOT NULL,   -- tgemm: the best kernel's canonical name; cuBLAS: ''
  kernel_name TEXT NOT NULL,   -- the profiled kernel as ncu names it
  ncu_version TEXT NOT NULL,
  duration_us REAL,            -- gpu__time_duration.sum
  sm_throughput_pct REAL,      -- sm__throughput.avg.pct_of_peak_sustained_elapsed
  memory_throughput_pct REAL,  -- gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  dram_read_bytes REAL,
  dram_write_bytes REAL,
  global_load_sectors REAL,    -- l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  global_load_requests REAL,
  global_store_sectors REAL,
  global_excess_sectors REAL,  -- smsp__sass_sectors_mem_global minus its _ideal
  shared_load_bank_conflicts REAL,
  shared_store_bank_conflicts REAL,
  achieved_occupancy_pct REAL, -- sm__warps_active.avg.pct_of_peak_sustained_active
  fma_pipe_pct REAL,
  tensor_pipe_pct REAL,
  registers REAL,              -- per thread
  stall_reasons TEXT NOT NULL DEFAULT '',  -- warps stalled per issued instruction
  profiled_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (problem_id, device_id, contender)
);
)sql";

// 7 -> 8: the vendor library as a contender (src/core/vendor_call.h). A kernel row says which
// library it is (ours, or a vendor call stored as a pseudo-kernel without a cubin, its "source
// hash" the cuBLAS version), so a problem's best may be the vendor call; best_kernels says
// which library serves it, and tgemm_best_kernels keeps our own fastest kernel per problem in
// view beside it. A build before this one refuses the file (a newer schema) rather than taking
// a vendor row for a kernel.
constexpr const char* kVendorCalls = R"sql(
ALTER TABLE kernels ADD COLUMN library TEXT NOT NULL DEFAULT 'tgemm'
  CHECK (library IN ('tgemm', 'cublas', 'cublasLt'));
DROP VIEW IF EXISTS best_kernels;
CREATE VIEW best_kernels AS
SELECT d.name                                           AS device,
       d.arch                                           AS arch,
       p.dtype                                          AS dtype,
       p.layout                                         AS layout,
       p.m                                              AS m,
       p.n                                              AS n,
       p.k                                              AS k,
       kr.canonical_name                                AS kernel,
       round(t.time_median_us, 2)                       AS us,
       round(t.tflops, 2)                               AS tflops,
       round(c.median_us, 2)                            AS cublas_us,
       round(c.median_us / t.time_median_us, 3)         AS vs_cublas,
       kr.params                                        AS params,
       p.key                                            AS problem_key,
       (SELECT count(*) FROM trials a
         WHERE a.problem_id = p.id AND a.device_id = d.id) AS trials,
       t.id                                             AS trial_id,
       kr.library                                       AS library
FROM best bs
JOIN trials t ON t.id = bs.trial_id
JOIN problems p ON p.id = bs.problem_id
JOIN devices d ON d.id = bs.device_id
JOIN kernels kr ON kr.id = t.kernel_id
LEFT JOIN cublas_times c ON c.problem_id = bs.problem_id AND c.device_id = bs.device_id;
-- Our fastest ok kernel per (problem, device), whatever the best (stale or not: a view cannot
-- know the build), so the gap of our kernels to the vendor stays visible.
CREATE VIEW tgemm_best_kernels AS
SELECT d.name                                   AS device,
       d.arch                                   AS arch,
       p.dtype                                  AS dtype,
       p.layout                                 AS layout,
       p.m                                      AS m,
       p.n                                      AS n,
       p.k                                      AS k,
       kr.canonical_name                        AS kernel,
       round(r.time_median_us, 2)               AS us,
       round(r.tflops, 2)                       AS tflops,
       round(c.median_us, 2)                    AS cublas_us,
       round(c.median_us / r.time_median_us, 3) AS vs_cublas,
       kr.params                                AS params,
       p.key                                    AS problem_key,
       r.id                                     AS trial_id
FROM (SELECT t.*, row_number() OVER (PARTITION BY t.problem_id, t.device_id
                                     ORDER BY t.time_median_us, t.time_min_us, t.id) AS rank
      FROM trials t JOIN kernels k ON k.id = t.kernel_id
      WHERE t.status = 'ok' AND t.time_median_us > 0 AND k.library = 'tgemm') r
JOIN problems p ON p.id = r.problem_id
JOIN devices d ON d.id = r.device_id
JOIN kernels kr ON kr.id = r.kernel_id
LEFT JOIN cublas_times c ON c.problem_id = r.problem_id AND c.device_id = r.device_id
WHERE r.rank = 1;
)sql";

// 8 -> 9: the code hash of every cubin compiled from now on (src/jit/code_hash.h), so a trial
// whose template text changed can be kept when its config still builds to the same machine
// code (tgemm-db refresh). Stored, not only recomputed, because a pruned file drops the cubins
// no best uses. NULL for cubins stored before: not known (their bytes are hashed instead).
// The trials of a binary are found by an index: re-keying moves them binary by binary.
constexpr const char* kCodeHashes =
    "ALTER TABLE binaries ADD COLUMN code_hash TEXT;\n"
    "CREATE INDEX trials_by_binary ON trials (binary_id);";

// 9 -> 10: batched GEMM. A problem is `batch` GEMMs of its shape (1 for every problem before),
// a stride apart (in elements, of the first problem seen with the key, as its leading
// dimensions) or given by pointer arrays. Keys of batch-1 problems are unchanged; a batch adds
// "_x<batch>" ("p" for pointer arrays) after k (Problem::key()). A cubin built for a batch is
// another variant of its config (binaries.batch_form, BatchForm: 0 for every cubin before). No
// CHECKs: SQLite would test
// every existing row against all of the table's on ADD COLUMN, and a file with one bad row
// (which readers skip) must still migrate; readers check these columns (Problem::validate).
constexpr const char* kBatches = R"sql(
ALTER TABLE problems ADD COLUMN batch INTEGER NOT NULL DEFAULT 1;    -- >= 1
ALTER TABLE problems ADD COLUMN batch_pointers INTEGER NOT NULL DEFAULT 0;  -- 0 or 1
ALTER TABLE problems ADD COLUMN stride_a INTEGER NOT NULL DEFAULT 0;
ALTER TABLE problems ADD COLUMN stride_b INTEGER NOT NULL DEFAULT 0;
ALTER TABLE problems ADD COLUMN stride_c INTEGER NOT NULL DEFAULT 0;
ALTER TABLE binaries ADD COLUMN batch_form INTEGER NOT NULL DEFAULT 0;  -- TGEMM_BATCH
)sql";

// 10 -> 11: fused epilogues. A problem applies an epilogue to its result (Epilogue::name():
// "bias_gelu", "relu.m.aux", ...; '' for a plain GEMM, every problem before), which its key ends
// with ("_e<name>"); a cubin built with one is another variant of its config (binaries.epilogue,
// Epilogue::build()'s name; '' for every cubin before). Readers check the names.
constexpr const char* kEpilogues = R"sql(
ALTER TABLE problems ADD COLUMN epilogue TEXT NOT NULL DEFAULT '';
ALTER TABLE binaries ADD COLUMN epilogue TEXT NOT NULL DEFAULT '';
)sql";

const MigrationStep kMigrations[] = {
    {"create the first schema (db/schema.sql)", kSchemaSql},                // 0 -> 1
    {"add a checksum to every cubin", kAddCubinChecksums},                  // 1 -> 2
    {"type the problems (GemmTypes, alignment in bytes)", kTypedProblems},  // 2 -> 3
    {"store cuBLAS SGEMM's error against FP64", kCublasErrors},             // 3 -> 4
    {"add the measured device ceilings", kDeviceCeilings},                  // 4 -> 5
    {"record each trial's NVRTC and driver versions", kTrialVersions},      // 5 -> 6
    {"add the Nsight Compute kernel profiles", kKernelProfiles},            // 6 -> 7
    {"record vendor library calls as contenders", kVendorCalls},            // 7 -> 8
    {"add the code hash of every cubin", kCodeHashes},                      // 8 -> 9
    {"add batched problems (batch, strides, pointer arrays)", kBatches},    // 9 -> 10
    {"add fused epilogues (bias, activation, aux, D)", kEpilogues},         // 10 -> 11
};

}  // namespace

std::span<const MigrationStep> migration_steps() { return kMigrations; }

}  // namespace tgemm
