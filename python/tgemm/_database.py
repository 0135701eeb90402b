"""tgemm.Database: read-only queries of a tuning database as plain Python objects.

Rows come from the schema's own views (db/schema.sql: best_kernels, trial_details), read
with the standard library's sqlite3 and returned as dicts keyed by the views' column names,
so the meaning of each column is stated once, in the schema. `explain` is tgemm-db's.
"""

import os
import sqlite3

from ._library import TgemmError
from ._tools import run_tool


def problem_dtype(dtype, out=None):
    """The problems.dtype spelling (GemmTypes::name(), src/core/dtype.h): the shape file's
    `dtype`, plus "_out_<out>" when C's type differs from the inputs'."""
    return dtype if not out or out == dtype else f"{dtype}_out_{out}"


class Database:
    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise TgemmError(f"{self.path}: no such tuning database")
        uri = "file:" + self.path.replace("?", "%3f").replace("#", "%23") + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True)
            self._db.row_factory = sqlite3.Row
            self._db.execute("SELECT 1 FROM best_kernels LIMIT 1").fetchall()
        except sqlite3.DatabaseError as error:
            raise TgemmError(f"{self.path}: not a tgemm tuning database ({error})") from None

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rows(self, sql, params=()):
        return [dict(row) for row in self._db.execute(sql, params)]

    def list(self, device=None):
        """Every tuned (problem, device) with its best kernel: best_kernels rows."""
        where, params = ("WHERE device = ?", (device,)) if device else ("", ())
        return self._rows(f"SELECT * FROM best_kernels {where} "
                          "ORDER BY device, dtype, layout, m, n, k", params)

    def _shape_filter(self, m, n, k, dtype, layout, out, device):
        sql = "m = ? AND n = ? AND k = ? AND dtype = ? AND layout = ?"
        params = [m, n, k, problem_dtype(dtype, out), layout]
        if device:
            sql += " AND device = ?"
            params.append(device)
        return sql, params

    def best(self, m, n, k, dtype="f32", layout="NN", *, out=None, device=None):
        """The best kernel for one shape (its fastest device's row when device is None), as
        a best_kernels row; None when the shape is not tuned."""
        where, params = self._shape_filter(m, n, k, dtype, layout, out, device)
        rows = self._rows(f"SELECT * FROM best_kernels WHERE {where} ORDER BY us LIMIT 1",
                          params)
        return rows[0] if rows else None

    def trials(self, m, n, k, dtype="f32", layout="NN", *, out=None, device=None):
        """Every trial of one shape, fastest first (failures last): trial_details rows."""
        where, params = self._shape_filter(m, n, k, dtype, layout, out, device)
        return self._rows(f"SELECT * FROM trial_details WHERE {where} "
                          "ORDER BY median_us IS NULL, median_us", params)

    def explain(self, m, n, k, dtype="f32", layout="NN", *, out=None, device=None):
        """tgemm-db explain's text: which kernel the dispatcher picks for the shape and why."""
        args = ["--db", self.path, "explain", "--m", m, "--n", n, "--k", k, "--dtype", dtype,
                "--layout", layout]
        args += (["--out", out] if out else []) + (["--device", device] if device else [])
        return run_tool("tgemm-db", args)
