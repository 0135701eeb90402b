-- tgemm tuning database, schema version 1 (PRAGMA user_version = 1).
--
-- One SQLite file (foreign keys on; WAL mode while a tuner has it open, a rollback journal
-- once the last one closes, so a finished file installs read-only) holds every tuning run,
-- the GPUs and kernel configs it met, the cubins NVRTC produced, the problems (GEMM shapes),
-- every trial with its status and times, cuBLAS's time per problem and the best trial per
-- (problem, device).
-- TuningDb (db/tuning_db.cpp) runs this file once to go from version 0 (an empty file) to 1;
-- later versions add migration steps there (kMigrations) instead of editing this file:
--   2: binaries.checksum TEXT, the stable hash of the cubin (NULL when there is none),
--      verified before a cubin is used.
--   3: typed problems (dtype is GemmTypes::name(), alignments in bytes), binaries.types.
--   4: cublas_times.sgemm_rel_error REAL, SGEMM's error against an FP64 reference for
--      f32x3 problems (whose trials' max_rel_error is also against FP64); NULL otherwise.
--   5: device_ceilings (device_id, kind, value, source, detail, run_id, measured_at): the
--      measured copy bandwidth (bytes/s) and FFMA / tensor peaks (FLOP/s) per device.
--   6: trials.nvrtc_version TEXT and trials.driver_version INTEGER, what each trial was
--      measured with (NULL before), so a trial can be found stale after an upgrade.
--   7: kernel_profiles, Nsight Compute metrics of the best kernel and of cuBLAS's per
--      (problem, device) (tgemm-db profile).
--   8: kernels.library ('tgemm', or a vendor call 'cublas' / 'cublasLt': the vendor library
--      as a contender for the best, stored without a cubin); best_kernels gains `library`, and
--      tgemm_best_kernels lists our own fastest kernel per (problem, device).
--   9: binaries.code_hash TEXT, the hash of the cubin's machine code and launch attributes
--      (src/jit/code_hash.h; NULL before: not known), so a trial whose template text changed
--      is kept where its config still builds to the same code (tgemm-db refresh); an index
--      trials_by_binary.
--  10: problems.batch (>= 1; 1 before), batch_pointers (0/1) and stride_a/b/c (elements; 0 for
--      batch 1 and pointer arrays): batched GEMM; a batch adds "_x<batch>[p]" to the key.
--      binaries.batch_form (BatchForm: 0 one GEMM, 1 strided batch, 2 pointer arrays; 3, a
--      grouped GEMM's build, holds no schema change: a library compiling one on a miss may write
--      it back).
--  11: problems.epilogue and binaries.epilogue TEXT (Epilogue::name(), '' for a plain GEMM):
--      fused epilogues; an epilogue adds "_e<name>" to the key ("_ebias_gelu").
--
-- Ask it directly, e.g.:
--   sqlite3 tgemm.db "select * from best_kernels where m=4096 and n=4096 and k=4096"
--   sqlite3 tgemm.db "select * from trial_details where status != 'ok'"
--
-- Times are microseconds, timestamps are UTC ISO-8601 text ("2025-01-31T12:00:00Z").

-- One invocation of tgemm-tune; every row the tuner writes points at the run that made it.
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  command_line TEXT NOT NULL,            -- argv joined by spaces
  tool_version TEXT NOT NULL,            -- "tgemm 0.1.0"
  arch         TEXT NOT NULL,            -- the target it compiled for, "sm_90"
  started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  finished_at  TEXT,                     -- NULL while running or when the run died
  summary      TEXT                      -- one line: counts of binaries and trials
);

-- A GPU model as the CUDA runtime reports it. Identified by (name, arch, sm_count); the
-- other columns are updated to the latest values seen (a driver upgrade keeps the id).
CREATE TABLE devices (
  id                     INTEGER PRIMARY KEY,
  name                   TEXT NOT NULL,     -- "NVIDIA H200"
  arch                   TEXT NOT NULL,     -- "sm_90"
  sm_count               INTEGER NOT NULL,
  l2_bytes               INTEGER NOT NULL,
  clock_khz              INTEGER NOT NULL,  -- SM clock
  memory_clock_khz       INTEGER NOT NULL,
  driver_version         INTEGER NOT NULL,  -- cudaDriverGetVersion, 13000 = 13.0
  runtime_version        INTEGER NOT NULL,  -- cudaRuntimeGetVersion
  smem_per_block_optin   INTEGER NOT NULL,  -- bytes
  smem_per_sm            INTEGER NOT NULL,  -- bytes
  regs_per_sm            INTEGER NOT NULL,
  max_threads_per_block  INTEGER NOT NULL,
  UNIQUE (name, arch, sm_count)
);

-- One point of a template's search space. template_hash is the hash of the template's
-- source, so an edited template gives new kernels instead of reusing stale results.
CREATE TABLE kernels (
  id             INTEGER PRIMARY KEY,
  template       TEXT NOT NULL,           -- the family: kernel_templates/<template>.cuh
  template_hash  TEXT NOT NULL,
  canonical_name TEXT NOT NULL,           -- "<template>_bm128_bn128_bk8_..."
  params         TEXT NOT NULL,           -- "BM=128,BN=128,BK=8,..." in declaration order
  UNIQUE (template_hash, canonical_name)
);

-- What compiling one kernel for one layout, arch and NVRTC version gave: a cubin with its
-- ptxas resources, or why there is none. Failures are kept so a rerun does not retry them.
CREATE TABLE binaries (
  id                INTEGER PRIMARY KEY,
  kernel_id         INTEGER NOT NULL REFERENCES kernels (id),
  arch              TEXT NOT NULL,
  nvrtc_version     TEXT NOT NULL,         -- "13.0"
  op_a              TEXT NOT NULL CHECK (op_a IN ('N', 'T')),
  op_b              TEXT NOT NULL CHECK (op_b IN ('N', 'T')),
  entry             TEXT NOT NULL,         -- extern "C" kernel name inside the cubin
  options           TEXT NOT NULL,         -- every NVRTC option, space separated
  cache_key         TEXT NOT NULL UNIQUE,  -- hash of template, options, arch, NVRTC version
  cubin             BLOB,                  -- NULL when compilation failed
  registers         INTEGER NOT NULL,      -- per thread
  smem_bytes        INTEGER NOT NULL,      -- static shared memory per block
  stack_bytes       INTEGER NOT NULL,
  spill_store_bytes INTEGER NOT NULL,
  spill_load_bytes  INTEGER NOT NULL,
  resources_found   INTEGER NOT NULL,      -- 1 when the ptxas log reported the resources
  compile_ms        REAL NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('ok', 'compile_failed', 'resource_exceeded')),
  reason            TEXT NOT NULL,         -- why it failed or was pruned; '' when ok
  log               TEXT NOT NULL,         -- NVRTC + ptxas log
  run_id            INTEGER REFERENCES runs (id),
  created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX binaries_by_kernel ON binaries (kernel_id, arch, op_a, op_b, nvrtc_version);

-- One GEMM as the dispatcher matches it. key = Problem::key(): dtype, layout, m, n, k,
-- alignments, beta==0. Leading dimensions are those of the first problem seen with the key.
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,         -- "f32_NN_m4096_n4096_k4096_a444_b0"
  dtype     TEXT NOT NULL,                -- f32, tf32, f16, bf16
  layout    TEXT NOT NULL CHECK (layout IN ('NN', 'NT', 'TN', 'TT')),  -- op(A) op(B)
  m         INTEGER NOT NULL CHECK (m >= 1),
  n         INTEGER NOT NULL CHECK (n >= 1),
  k         INTEGER NOT NULL CHECK (k >= 1),
  lda       INTEGER NOT NULL,
  ldb       INTEGER NOT NULL,
  ldc       INTEGER NOT NULL,
  align_a   INTEGER NOT NULL,             -- vector width in elements (1, 2 or 4)
  align_b   INTEGER NOT NULL,
  align_c   INTEGER NOT NULL,
  beta_zero INTEGER NOT NULL CHECK (beta_zero IN (0, 1))
);
CREATE INDEX problems_by_shape ON problems (m, n, k);

-- Every evaluation of one kernel on one problem on one device, failures included. The
-- UNIQUE key is what makes tuning resumable: a rerun skips what is already here.
CREATE TABLE trials (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER REFERENCES runs (id),
  problem_id     INTEGER NOT NULL REFERENCES problems (id),
  kernel_id      INTEGER NOT NULL REFERENCES kernels (id),
  device_id      INTEGER NOT NULL REFERENCES devices (id),
  binary_id      INTEGER REFERENCES binaries (id),  -- NULL when nothing was compiled
  status         TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'compile_failed',
                   'resource_exceeded', 'launch_failed', 'crashed', 'timeout', 'wrong_result')),
  error          TEXT NOT NULL,           -- why, for every status but ok
  time_min_us    REAL NOT NULL,
  time_median_us REAL NOT NULL,
  time_max_us    REAL NOT NULL,
  runs           INTEGER NOT NULL,        -- timed repetitions behind the three times
  tflops         REAL NOT NULL,           -- at the median time
  max_rel_error  REAL NOT NULL,           -- ||C - Cref|| / ||Cref|| against cuBLAS FP32
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (problem_id, kernel_id, device_id)
);
CREATE INDEX trials_by_problem ON trials (problem_id, device_id, status, time_median_us);

-- cuBLAS's median time for a problem on a device, measured in the same process as the
-- trials (the denominator of every "vs cuBLAS" ratio). The latest measurement wins.
CREATE TABLE cublas_times (
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  run_id      INTEGER REFERENCES runs (id),
  median_us   REAL NOT NULL,
  measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (problem_id, device_id)
);

-- The fastest ok trial (by median time) of each problem on each device; what the
-- dispatcher launches. A problem whose trials all failed has no row.
CREATE TABLE best (
  problem_id INTEGER NOT NULL REFERENCES problems (id),
  device_id  INTEGER NOT NULL REFERENCES devices (id),
  trial_id   INTEGER NOT NULL REFERENCES trials (id),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (problem_id, device_id)
);

-- Every trial in readable columns: problem, kernel and device spelled out.
CREATE VIEW trial_details AS
SELECT t.id                AS trial_id,
       d.name              AS device,
       d.arch              AS arch,
       p.key               AS problem_key,
       p.dtype             AS dtype,
       p.layout            AS layout,
       p.m                 AS m,
       p.n                 AS n,
       p.k                 AS k,
       p.lda               AS lda,
       p.ldb               AS ldb,
       p.ldc               AS ldc,
       p.beta_zero         AS beta_zero,
       kr.template         AS template,
       kr.template_hash    AS template_hash,
       kr.canonical_name   AS kernel,
       kr.params           AS params,
       t.status            AS status,
       t.error             AS error,
       t.time_min_us       AS min_us,
       t.time_median_us    AS median_us,
       t.time_max_us       AS max_us,
       t.runs              AS runs,
       t.tflops            AS tflops,
       t.max_rel_error     AS max_rel_error,
       b.registers         AS registers,
       b.smem_bytes        AS smem_bytes,
       c.median_us         AS cublas_us,
       t.run_id            AS run_id,
       t.created_at        AS created_at
FROM trials t
JOIN problems p ON p.id = t.problem_id
JOIN kernels kr ON kr.id = t.kernel_id
JOIN devices d ON d.id = t.device_id
LEFT JOIN binaries b ON b.id = t.binary_id
LEFT JOIN cublas_times c ON c.problem_id = t.problem_id AND c.device_id = t.device_id;

-- "What is the best kernel for this shape on this GPU": one row per (problem, device).
-- vs_cublas = cuBLAS time / tgemm time, so 1.10 means tgemm is 10% faster than cuBLAS.
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
       t.id                                             AS trial_id
FROM best bs
JOIN trials t ON t.id = bs.trial_id
JOIN problems p ON p.id = bs.problem_id
JOIN devices d ON d.id = bs.device_id
JOIN kernels kr ON kr.id = t.kernel_id
LEFT JOIN cublas_times c ON c.problem_id = bs.problem_id AND c.device_id = bs.device_id;
