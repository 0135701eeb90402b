#!/bin/sh
# The Python package as a user installs it: a fresh virtual environment in the build folder
# (Debian's Python with its system site packages: setuptools, wheel), `pip install` from a
# copy of python/ without network or build isolation, carrying the just-built libtgemm as the
# package's own copy; then every tests/python/test_*.py under unittest (pytest may be absent).
# Usage: run_python_tests.sh BUILD_DIR SOURCE_DIR LIBTGEMM TOOLS_DIR
# $TGEMM_PYTHON picks the interpreter (default /usr/bin/python3), e.g. one that has torch.
set -eu
build=$1 source=$2 library=$3 tools=$4
python=${TGEMM_PYTHON:-/usr/bin/python3}
work=$build/python_test
rm -rf "$work"
mkdir -p "$work"
"$python" -m venv --system-site-packages "$work/venv"
# What the interpreter sees, the environment sees too: where $TGEMM_PYTHON is itself a virtual
# environment's (torch installed there), --system-site-packages reaches only the base one's.
"$python" -c 'import site; print("\n".join(site.getsitepackages()))' \
  >"$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/interpreter_site.pth"
# pip builds in the source folder: build a copy, so the worktree stays clean.
cp -R "$source/python" "$work/package"
TGEMM_BUNDLE_LIBRARY=$library "$work/venv/bin/python" -m pip install --quiet --no-index \
  --no-build-isolation "$work/package"
cd "$work"
# No TGEMM_LIBRARY: the installed package must find its own copy.
unset TGEMM_LIBRARY
# The C module must have been built here (setup.py makes it optional for users).
TGEMM_EXPECT_FASTCALL=${TGEMM_EXPECT_FASTCALL:-1} TGEMM_TOOLS_DIR=$tools TGEMM_SOURCE_DIR=$source \
  exec "$work/venv/bin/python" -m unittest discover -s "$source/tests/python" -p 'test_*.py' -v
