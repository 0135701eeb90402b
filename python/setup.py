# The package's own copy of libtgemm: set TGEMM_BUNDLE_LIBRARY=/path/to/libtgemm.so.0 when
# installing to ship it inside the package (tgemm/lib/); without it the package finds the
# library at run time ($TGEMM_LIBRARY, then the loader path; see tgemm/_library.py).
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        source = os.environ.get("TGEMM_BUNDLE_LIBRARY")
        if not source:
            return
        if not os.path.isfile(source):
            raise SystemExit(f"TGEMM_BUNDLE_LIBRARY={source}: no such file")
        target_dir = os.path.join(self.build_lib, "tgemm", "lib")
        os.makedirs(target_dir, exist_ok=True)
        shutil.copyfile(source, os.path.join(target_dir, "libtgemm.so"))


# The direct call of tgemmGemmEx (tgemm/_fastcall.c) on the stable ABI. Optional: where no C
# compiler or Python headers are, the package installs without it and calls through ctypes.
fastcall = Extension("tgemm._fastcall", ["tgemm/_fastcall.c"], py_limited_api=True,
                     optional=True)

setup(cmdclass={"build_py": BuildPyWithLibrary}, ext_modules=[fastcall],
      options={"bdist_wheel": {"py_limited_api": "cp310"}})
