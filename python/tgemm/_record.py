"""tgemm.record: libtgemm's record mode (tgemmSetRecordFile) as a context manager."""

import contextlib
import os

from ._library import check, library


@contextlib.contextmanager
def record(path):
    """Within the block, every problem tgemm serves without an exact tuned entry goes once
    into the shape file `path` with its call count (process-wide, all threads); afterwards
    the file is complete and `tgemm.tune(path)` tunes exactly those problems. The recording
    that was on before (e.g. $TGEMM_RECORD) resumes after the block."""
    lib = library()
    previous = lib.tgemmGetRecordFile() or b""
    path = os.fspath(path)
    check(lib.tgemmSetRecordFile(os.fsencode(path)), f"tgemm.record({path!r})")
    try:
        yield path
    finally:
        check(lib.tgemmSetRecordFile(previous or None), "tgemm.record: restoring the recording")


def recording():
    """The shape file being recorded into, or None."""
    path = library().tgemmGetRecordFile()
    return os.fsdecode(path) if path else None
