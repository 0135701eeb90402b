"""libtgemm through ctypes: loading it, its status codes and one handle per database.

The C API (include/tgemm/tgemm_c.h) is the only interface used, through ctypes; a cached
plan's calls go through the optional C module _fastcall where it was built (it calls the
tgemmGemmEx loaded here, on the stable ABI). The library is searched in this order:
  1. $TGEMM_LIBRARY, a path to libtgemm.so (an error if it does not load);
  2. the package's own copy, tgemm/lib/libtgemm.so (installed with TGEMM_BUNDLE_LIBRARY);
  3. the dynamic loader's path: libtgemm.so.0, then libtgemm.so (LD_LIBRARY_PATH, ldconfig).
"""

import ctypes
import os
import threading

# tgemmStatus_t, tgemmDataType_t, tgemmComputeType_t, tgemmOperation_t (tgemm_c.h).
STATUS_SUCCESS = 0
STATUS_NOT_INITIALIZED = 1
STATUS_INVALID_VALUE = 2
STATUS_NO_DEVICE = 3
STATUS_NOT_SUPPORTED = 4
STATUS_EXECUTION_FAILED = 5
STATUS_INTERNAL_ERROR = 6
STATUS_TYPE_NOT_SUPPORTED = 7
STATUS_NOT_PREPARED = 8
STATUS_WORKSPACE_TOO_SMALL = 9

DATA_TYPES = {"f32": 0, "f16": 1, "bf16": 2}
COMPUTE_TYPES = {"f32": 0, "tf32": 1, "f32x3": 2}
OPS = {"N": 0, "T": 1}
SELECTIONS = {0: "exact", 1: "nearest", 2: "default", 3: "cublas"}


class TgemmError(RuntimeError):
    """A failure reported by libtgemm (status code and its text) or by argument checks."""

    def __init__(self, message, status=STATUS_INVALID_VALUE, status_name=None):
        super().__init__(message)
        self.status = status
        self.status_name = status_name


class LibraryNotFound(TgemmError, OSError):
    """libtgemm could not be loaded from any place in the search order."""


_lock = threading.Lock()
_lib = None
_raw_gemm = None
_fast_gemm = None
_handles = {}


def _candidates():
    explicit = os.environ.get("TGEMM_LIBRARY")
    if explicit:
        return [explicit], True
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libtgemm.so")
    names = [own] if os.path.exists(own) else []
    return names + ["libtgemm.so.0", "libtgemm.so"], False


def _declare(lib):
    c_int, c_void_p, c_char_p, c_float = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_float
    handle_p = ctypes.POINTER(c_void_p)
    signatures = {
        "tgemmCreate": (c_int, [handle_p, c_char_p]),
        "tgemmDestroy": (c_int, [c_void_p]),
        "tgemmGemmEx": (
            c_int,
            [c_void_p, c_int, c_int, c_int, c_int, c_int, ctypes.POINTER(c_float), c_void_p,
             c_int, c_int, c_void_p, c_int, c_int, ctypes.POINTER(c_float), c_void_p, c_int,
             c_int, c_int, c_void_p],
        ),
        "tgemmGetSelection": (
            c_int,
            [c_void_p, c_int, c_int, c_int, c_int, c_int, c_void_p, c_int, c_void_p, c_int,
             c_void_p, c_int, ctypes.POINTER(c_int)],
        ),
        "tgemmSetMathMode": (c_int, [c_void_p, c_int]),
        "tgemmSetCublasFallback": (c_int, [c_void_p, c_int]),
        "tgemmSetRecordFile": (c_int, [c_char_p]),
        "tgemmGetRecordFile": (c_char_p, []),
        "tgemmGetStatusString": (c_char_p, [c_int]),
        "tgemmGetLastError": (c_char_p, []),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def library():
    """The loaded libtgemm (ctypes.CDLL); raises LibraryNotFound naming every place tried."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        names, explicit = _candidates()
        failures = []
        for name in names:
            try:
                lib = ctypes.CDLL(name)
                _declare(lib)
            except (OSError, AttributeError) as error:
                failures.append(f"{name}: {error}")
                if explicit:
                    break
                continue
            global _raw_gemm, _fast_gemm
            _raw_gemm = lib["tgemmGemmEx"]  # a second function object, without argtypes
            _fast_gemm = _bound_fastcall(lib)
            _lib = lib
            return lib
        raise LibraryNotFound(
            "libtgemm not found; tried " + "; ".join(failures)
            + " (set TGEMM_LIBRARY to the path of libtgemm.so)",
            STATUS_NOT_INITIALIZED,
        )


def raw_gemm():
    """tgemmGemmEx with no declared argument types, for a caller that passes every argument
    already as its C type (ints as int, pointers as c_void_p, alpha and beta by reference):
    ctypes then converts nothing, which is most of a declared call's host cost."""
    if _raw_gemm is None:
        library()
    return _raw_gemm


def _bound_fastcall(lib):
    try:
        from . import _fastcall
    except ImportError:
        return None
    _fastcall.bind(ctypes.cast(lib.tgemmGemmEx, ctypes.c_void_p).value)
    return _fastcall.gemm


def fast_gemm():
    """tgemmGemmEx through the compiled _fastcall module, taking plain ints and floats in the C
    call's order (pointers as ints), or None where the package was installed without it."""
    if _lib is None:
        library()
    return _fast_gemm


def status_name(status):
    text = library().tgemmGetStatusString(status)
    return text.decode() if text else f"status {status}"


def check(status, what):
    """Raises TgemmError for a failed status, with the library's status text and message."""
    if status == STATUS_SUCCESS:
        return
    lib = library()
    name = status_name(status)
    detail = (lib.tgemmGetLastError() or b"").decode(errors="replace")
    raise TgemmError(f"{what}: {name}" + (f": {detail}" if detail else ""), status, name)


_default_db = None


def set_database(path):
    """Makes `path` the database of calls that name none (None: $TGEMM_DB, else tgemm.db),
    opened afresh: a handle reads its database when made, so call this again after tuning
    into the same file. Destroy no handle a captured CUDA graph still runs on."""
    global _default_db
    key = os.fspath(path) if path is not None else ""
    with _lock:
        _default_db = key or None
        stale = _handles.pop(key, None)
    if stale is not None:
        library().tgemmDestroy(stale)


def handle(db_path=None):
    """The process's handle on `db_path` (None: set_database's, else $TGEMM_DB, else
    "tgemm.db"), made once per path."""
    key = os.fspath(db_path) if db_path else (_default_db or "")
    found = _handles.get(key)  # a dict read is atomic; making a handle takes the lock
    if found is not None:
        return found
    db_path = key or None
    lib = library()
    made = ctypes.c_void_p()
    check(lib.tgemmCreate(ctypes.byref(made), os.fsencode(db_path) if db_path else None),
          "tgemmCreate")
    with _lock:
        # Two threads racing here both create one; the first stored wins, the other is freed.
        kept = _handles.setdefault(key, made.value)
    if kept != made.value:
        lib.tgemmDestroy(made)
    return kept
