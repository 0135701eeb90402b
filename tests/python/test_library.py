"""The package over the real libtgemm without a GPU: every failure is a TgemmError carrying
the library's status text, never a crash; record mode, tgemm-tune and database queries
through the tools. Run by run_python_tests.sh with $TGEMM_LIBRARY and $TGEMM_TOOLS_DIR set."""

import ctypes
import os
import sqlite3
import subprocess
import tempfile
import unittest

import tgemm
from tgemm import TgemmError
from tgemm import _library


class FakeCudaArray:
    """A __cuda_array_interface__ object at a made-up device address: never dereferenced,
    because the library finds no device before touching memory."""

    def __init__(self, shape, typestr="<f4", strides=None, address=1 << 20):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (address, False),
                                         "strides": strides, "version": 3}


def has_gpu():
    return os.path.exists("/dev/nvidia0")


class NoDeviceTest(unittest.TestCase):
    @unittest.skipIf(has_gpu(), "the no-device status needs a machine without a GPU")
    def test_matmul_without_a_device_raises_the_librarys_no_device_status(self):
        a, b, out = FakeCudaArray((4, 8)), FakeCudaArray((8, 16)), FakeCudaArray((4, 16))
        with self.assertRaises(TgemmError) as caught:
            tgemm.matmul(a, b, out)
        self.assertEqual(caught.exception.status, _library.STATUS_NO_DEVICE)
        self.assertIn(_library.status_name(_library.STATUS_NO_DEVICE), str(caught.exception))
        self.assertIn("m=4 n=16 k=8", str(caught.exception))

    def test_library_checks_reach_python_with_their_text(self):
        # A plan that bypasses the Python checks: lda smaller than a row, which only the
        # library refuses.
        plan = tgemm.GemmPlan("N", "N", 4, 4, 8, 1 << 20, 2, 1 << 21, 4, 1 << 22, 4, "f32", "f32",
                              "f32")
        from tgemm._matmul import run_plan
        with self.assertRaises(TgemmError) as caught:
            run_plan(plan, 1.0, 0.0, 0)
        self.assertEqual(caught.exception.status, _library.STATUS_INVALID_VALUE)
        self.assertIn("lda", str(caught.exception))

    def test_allocating_a_result_for_a_foreign_array_asks_for_out(self):
        with self.assertRaisesRegex(TgemmError, "pass `out`"):
            tgemm.matmul(FakeCudaArray((4, 8)), FakeCudaArray((8, 16)))

    def test_strides_without_a_layout_are_refused_for_foreign_arrays(self):
        broadcast = FakeCudaArray((4, 8), strides=(0, 4))
        with self.assertRaisesRegex(TgemmError, "strides"):
            tgemm.matmul(broadcast, FakeCudaArray((8, 16)), FakeCudaArray((4, 16)))

    def test_objects_that_are_not_arrays_are_refused(self):
        with self.assertRaisesRegex(TgemmError, "a must be a torch tensor"):
            tgemm.matmul([[1.0]], FakeCudaArray((1, 1)), FakeCudaArray((1, 1)))

    def test_a_missing_library_is_a_clear_error(self):
        saved, saved_env = _library._lib, os.environ.get("TGEMM_LIBRARY")
        try:
            _library._lib = None
            os.environ["TGEMM_LIBRARY"] = "/nonexistent/libtgemm.so"
            with self.assertRaisesRegex(tgemm.LibraryNotFound, "/nonexistent/libtgemm.so"):
                _library.library()
        finally:
            _library._lib = saved
            if saved_env is None:
                os.environ.pop("TGEMM_LIBRARY", None)
            else:
                os.environ["TGEMM_LIBRARY"] = saved_env


class FastCallTest(unittest.TestCase):
    """The compiled fast call reaches the real tgemmGemmEx with every argument in its place:
    for each argument made invalid in turn, it gets the declared ctypes call's status and
    message. (Every call is refused before anything runs, so the addresses are never read.)"""

    VALID = dict(handle=None, op_a=0, op_b=0, m=4, n=4, k=8, alpha=1.0, a=1 << 20, a_type=0,
                 lda=8, b=1 << 21, b_type=0, ldb=4, beta=0.0, c=1 << 22, c_type=0, ldc=4,
                 compute=0, stream=0)
    INVALID = dict(op_a=5, op_b=5, m=-1, n=-1, k=-1, a_type=9, lda=2, b_type=9, ldb=2,
                   c_type=9, ldc=2, compute=9)

    def setUp(self):
        self.fast = _library.fast_gemm()
        if self.fast is None:
            if os.environ.get("TGEMM_EXPECT_FASTCALL") == "1":
                self.fail("tgemm._fastcall was not built (TGEMM_EXPECT_FASTCALL=1)")
            self.skipTest("the package was installed without its C module")

    def outcome(self, call, args):
        status = call(*args)
        return status, (_library.library().tgemmGetLastError() or b"").decode()

    def test_each_invalid_argument_gets_the_declared_calls_status_and_message(self):
        lib = _library.library()
        handle = _library.handle()
        for name, bad in self.INVALID.items():
            with self.subTest(argument=name):
                values = dict(self.VALID, handle=handle, **{name: bad})
                fast = self.outcome(self.fast, list(values.values()))
                declared_args = list(values.values())
                for at in (6, 13):  # alpha and beta by reference
                    declared_args[at] = ctypes.byref(ctypes.c_float(declared_args[at]))
                declared = self.outcome(lib.tgemmGemmEx, declared_args)
                self.assertNotEqual(fast[0], _library.STATUS_SUCCESS)
                self.assertEqual(fast, declared)

    def test_wrong_arguments_are_python_errors(self):
        values = list(dict(self.VALID, handle=_library.handle()).values())
        with self.assertRaisesRegex(TypeError, "19 arguments"):
            self.fast(*values[:-1])
        with self.assertRaises(TypeError):
            self.fast(*values[:3], "4", *values[4:])
        with self.assertRaisesRegex(OverflowError, "C int"):
            self.fast(*values[:3], 1 << 40, *values[4:])


class RecordTest(unittest.TestCase):
    def test_record_turns_record_mode_on_for_the_block_only(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "recorded.yaml")
            self.assertIsNone(tgemm.recording())
            with tgemm.record(path) as recorded:
                self.assertEqual(recorded, path)
                self.assertEqual(tgemm.recording(), path)
            self.assertIsNone(tgemm.recording())

    def test_record_into_a_folder_that_does_not_exist_names_it(self):
        with self.assertRaises(TgemmError) as caught:
            with tgemm.record("/nonexistent_tgemm_dir/recorded.yaml"):
                pass
        self.assertEqual(caught.exception.status, _library.STATUS_INVALID_VALUE)
        self.assertIn("/nonexistent_tgemm_dir/recorded.yaml", str(caught.exception))
        self.assertIsNone(tgemm.recording())


TINY_SPACE = os.path.join(os.environ.get("TGEMM_SOURCE_DIR", ""),
                          "tests/data/spaces/tiny_sgemm_simt.yaml")


class TuneAndDatabaseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.folder.name, "t.db")
        cls.output = tgemm.tune([[64, 64, 64], {"m": 33, "n": 17, "k": 9, "layout": "NT"}],
                                db=cls.db, arch="sm_90", compile_only=True,
                                args=["--space", TINY_SPACE, "--strategy", "exhaustive",
                                      "--budget", "0"])

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_tune_writes_the_shapes_it_was_given_into_the_database(self):
        with sqlite3.connect(self.db) as db:
            keys = {row[0] for row in db.execute("SELECT key FROM problems")}
        self.assertTrue(any(key.startswith("f32_NN_m64_n64_k64") for key in keys), keys)
        self.assertTrue(any(key.startswith("f32_NT_m33_n17_k9") for key in keys), keys)

    def test_tune_failures_carry_the_tools_message(self):
        with self.assertRaises(TgemmError) as caught:
            tgemm.tune([{"m": 0, "n": 1, "k": 1}], db=self.db, compile_only=True)
        self.assertIn("m must be >= 1", str(caught.exception))

    def test_a_compile_only_database_has_no_best_kernels(self):
        with tgemm.Database(self.db) as db:
            self.assertEqual(db.list(), [])
            self.assertIsNone(db.best(64, 64, 64))
            self.assertEqual(db.trials(64, 64, 64), [])

    def test_explain_is_the_tools_text(self):
        with tgemm.Database(self.db) as db:
            text = db.explain(64, 64, 64)
        tool = subprocess.run([os.path.join(os.environ["TGEMM_TOOLS_DIR"], "tgemm-db"), "--db",
                               self.db, "explain", "--m", "64", "--n", "64", "--k", "64"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(text, tool.stdout)

    def measured_copy(self):
        """A copy of the compile-only database with two measured trials of f32 NN 64^3 on a
        made-up GPU and the faster one marked best, as a GPU tune would leave them."""
        path = os.path.join(self.folder.name, "measured.db")
        if os.path.exists(path):
            os.remove(path)
        with sqlite3.connect(self.db) as source, sqlite3.connect(path) as target:
            source.backup(target)
        with sqlite3.connect(path) as db:
            problem = db.execute("SELECT id FROM problems WHERE dtype = 'f32' AND layout = 'NN' "
                                 "AND m = 64").fetchone()[0]
            kernels = [row[0] for row in db.execute("SELECT id FROM kernels LIMIT 2")]
            db.execute("INSERT INTO devices VALUES (1, 'Test GPU', 'sm_90', 132, 1, 1, 1, 13000, "
                       "13000, 232448, 233472, 65536, 1024)")
            for trial, (kernel, us) in enumerate(zip(kernels, (9.0, 4.0)), start=1):
                db.execute("INSERT INTO trials (id, problem_id, kernel_id, device_id, status, "
                           "error, time_min_us, time_median_us, time_max_us, runs, tflops, "
                           "max_rel_error) VALUES (?, ?, ?, 1, 'ok', '', ?, ?, ?, 10, 0.1, 1e-7)",
                           (trial, problem, kernel, us, us, us))
            db.execute("INSERT INTO best (problem_id, device_id, trial_id) VALUES (?, 1, 2)",
                       (problem,))
            fastest = db.execute("SELECT canonical_name FROM kernels WHERE id = ?",
                                 (kernels[1],)).fetchone()[0]
        return path, fastest

    def test_queries_agree_with_tgemm_db_on_a_measured_database(self):
        path, fastest = self.measured_copy()
        with tgemm.Database(path) as db:
            best = db.best(64, 64, 64)
            listed = db.list()
            trials = db.trials(64, 64, 64)
            self.assertIsNone(db.best(64, 64, 64, layout="NT"))
            self.assertIsNone(db.best(64, 64, 64, device="Other GPU"))
        self.assertEqual((best["kernel"], best["us"], best["device"]), (fastest, 4.0, "Test GPU"))
        self.assertEqual([row["kernel"] for row in listed], [fastest])
        self.assertEqual([row["median_us"] for row in trials], [4.0, 9.0])
        tool = subprocess.run([os.path.join(os.environ["TGEMM_TOOLS_DIR"], "tgemm-db"), "--db",
                               path, "best", "--m", "64", "--n", "64", "--k", "64"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(tool.returncode, 0, tool.stdout)
        self.assertIn(fastest, tool.stdout)

    def test_a_missing_or_foreign_file_is_refused_naming_it(self):
        with self.assertRaisesRegex(TgemmError, "nope.db: no such tuning database"):
            tgemm.Database(os.path.join(self.folder.name, "nope.db"))
        text = os.path.join(self.folder.name, "text.db")
        with open(text, "w") as out:
            out.write("not sqlite\n" * 100)
        with self.assertRaisesRegex(TgemmError, "text.db: not a tgemm tuning database"):
            tgemm.Database(text)


if __name__ == "__main__":
    unittest.main()
