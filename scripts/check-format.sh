#!/usr/bin/env bash
# The code's layout against .clang-format: every tracked C++ file (or the FILEs named) must be what
# clang-format makes of it. The layout is clang-format 14's (Debian 12's; bootstrap --test installs
# it): other releases format some constructs differently, so they are refused rather than trusted.
#   scripts/check-format.sh [--fix] [FILE...]
# --fix rewrites the files in place instead of checking them.
# Exit: 0 every file is formatted (or was fixed); 1 some are not (each named, with the command that
# fixes them); 2 usage error; 77 no clang-format 14 here (ctest reports the test as skipped).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fix=0
if [[ ${1:-} == --fix ]]; then fix=1; shift; fi
[[ ${1:-} == -* ]] && { echo "usage: scripts/check-format.sh [--fix] [FILE...]" >&2; exit 2; }

tool=
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && [[ $("$candidate" --version) =~ version\ 14\. ]]; then tool=$candidate; break; fi
done
if [[ -z $tool ]]; then
  echo "check-format: no clang-format 14 here (found: $(clang-format --version 2>/dev/null || echo none)); install clang-format-14" >&2
  exit 77
fi

if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files '*.cpp' '*.h'); fi
for f in "${files[@]}"; do
  [[ $f == *.cpp || $f == *.h ]] || { echo "check-format: $f is not a C++ file (.cpp, .h)" >&2; exit 2; }
done
if ((fix)); then
  "$tool" -i --style=file "${files[@]}" && echo "check-format: formatted ${#files[@]} file(s) with $tool"
  exit $?
fi
bad=()
for f in "${files[@]}"; do
  [[ -f $f ]] || { echo "check-format: no such file: $f" >&2; exit 2; }
  "$tool" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'check-format: not formatted: %s\n' "${bad[@]}" >&2
  fix_args="${bad[*]}"
  ((${#bad[@]} > 8)) && fix_args=""  # many: fix them all
  echo "check-format: ${#bad[@]} of ${#files[@]} file(s) differ from .clang-format; fix: scripts/check-format.sh --fix${fix_args:+ $fix_args}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} file(s) formatted as .clang-format says ($tool)"
