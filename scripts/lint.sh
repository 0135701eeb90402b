#!/usr/bin/env bash
# Style checks from one place: clang-format (Google base, 100 columns) over our C++ and
# clang-tidy (bugprone, performance) over the library and tuner sources, using the compile
# commands of build/. `scripts/lint.sh --fix` rewrites the files in place instead of checking.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cpp' | grep -v '^kernel_templates/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
[ -f build/compile_commands.json ] ||
  cmake -S . -B build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
mapfile -t sources < <(git ls-files 'src/*.cpp' 'db/*.cpp' 'tuner/*.cpp')
clang-tidy -p build --quiet "${sources[@]}"
