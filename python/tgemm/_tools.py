"""Running the tgemm command-line tools (tgemm-tune, tgemm-db) from Python."""

import json
import os
import shutil
import subprocess
import tempfile

from ._library import TgemmError


def tool_path(name):
    """$TGEMM_TOOLS_DIR/<name> when that is set, else <name> on PATH."""
    folder = os.environ.get("TGEMM_TOOLS_DIR")
    if folder:
        path = os.path.join(folder, name)
        if not os.access(path, os.X_OK):
            raise TgemmError(f"TGEMM_TOOLS_DIR={folder}: no executable {name} there")
        return path
    found = shutil.which(name)
    if not found:
        raise TgemmError(f"{name} is not on PATH; set TGEMM_TOOLS_DIR to the folder holding it")
    return found


def run_tool(name, args):
    """Runs a tool; returns its standard output. Raises TgemmError with its exit code and
    output when it fails."""
    command = [tool_path(name)] + [str(a) for a in args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise TgemmError(f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout}",
                         done.returncode)
    return done.stdout


def write_shape_file(shapes, path):
    """Writes shapes ([m, n, k] lists/tuples or dicts with the shape-file keys:
    configs/shapes/README.md) as a shape file. JSON is valid YAML, so each entry is written
    as it is and the shape-file reader alone judges it."""
    entries = [list(s) if isinstance(s, (list, tuple)) else dict(s) for s in shapes]
    if not entries:
        raise TgemmError("tgemm.tune: no shapes given")
    with open(path, "w") as out:
        out.write("shapes:\n")
        for entry in entries:
            out.write(f"  - {json.dumps(entry)}\n")


def tune(shapes_or_file, db="tgemm.db", *, arch=None, compile_only=False, args=()):
    """Runs tgemm-tune on a shape file (a path) or a list of shapes, into the database `db`.
    arch: compile for this arch (e.g. "sm_90"); compile_only: NVRTC only, no GPU needed;
    args: further tgemm-tune arguments (["--budget", "50"]). Returns tgemm-tune's output;
    raises TgemmError with it when tgemm-tune fails."""
    extra = (["--arch", arch] if arch else []) + (["--compile-only"] if compile_only else [])
    extra += list(args)
    if isinstance(shapes_or_file, (str, os.PathLike)):
        return run_tool("tgemm-tune", ["--shapes", os.fspath(shapes_or_file), "--db",
                                       os.fspath(db)] + extra)
    with tempfile.TemporaryDirectory(prefix="tgemm_tune_") as folder:
        path = os.path.join(folder, "shapes.yaml")
        write_shape_file(shapes_or_file, path)
        return run_tool("tgemm-tune", ["--shapes", path, "--db", os.fspath(db)] + extra)
