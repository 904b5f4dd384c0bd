#!/usr/bin/env bash
# shellcheck disable=SC2016  # '$ORIGIN' in single quotes is for the dynamic loader
# Packs tipbench into a self-contained folder for a GPU machine that has an NVIDIA driver and
# PyTorch but none of tipbench's build dependencies (docs/gpu.md). `make bundle` runs it.
#   scripts/bundle.sh [--out DIR] [--build-dir DIR] [--no-build]
#     --out DIR        where the bundle goes (default .bundle; an older one there is replaced)
#     --build-dir DIR  the build to pack (default build/ when it is a Release build, else
#                      build-bundle/, configured Release)
#     --no-build       pack the build as it is, without bootstrap or rebuild (the ctest test)
# Exit: 0 packed; 1 the bundle breaks a rule (a library not found, an absolute build path left,
# over 56 MiB); 2 usage error, or a missing build or tool.
#
# The bundle: run.sh (the one entry point), bin/ (tipbench, tipbench_micro), tests/ (the test
# binaries but not_carried's), lib/ (every shared library they load that is neither the C/C++ runtime nor LibTorch nor
# CUDA, found with ldd; and nvJPEG, which torch's own CUDA wheels lack), share/ (files the tests and reports read at run time, the result checker,
# build-info.sh) and MANIFEST.txt. The binaries find lib/ through RPATH $ORIGIN/../lib (patchelf);
# LibTorch and the CUDA libraries are the target's own, put on the library path by run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

log() { printf '[bundle] %s\n' "$*" >&2; }
die() { local code=$1; shift; printf '[bundle] error: %s\n' "$*" >&2; exit "$code"; }

out=.bundle
build_dir=
no_build=0
while (($#)); do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
    --no-build) no_build=1; shift ;;
    -h|--help) awk 'NR > 1 && /^# shellcheck/ { next } NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
               exit 0 ;;
    *) die 2 "unknown argument '$1' (see --help)" ;;
  esac
done
# A device call carries 64 MiB in all, the checkout (about 3.5 MiB) included.
max_bytes=$((56 * 1024 * 1024))
# An older bundle there is replaced; anything else is left alone.
if [[ -e $out && ! -f $out/MANIFEST.txt ]]; then
  die 2 "$out exists and is not a bundle (no MANIFEST.txt): refusing to replace it"
fi

build_type_of() { sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$1/CMakeCache.txt" 2>/dev/null; }
cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"; }

# --- the build --------------------------------------------------------------------------------
# The default build (bootstrap) already is Release: reuse it instead of building twice. Only a
# build/ configured otherwise makes a separate Release tree.
if [[ -z $build_dir ]]; then
  build_dir=build
  if [[ -f build/CMakeCache.txt && $(build_type_of build) != Release ]]; then
    log "build/ is a $(build_type_of build) build: packing a Release build in build-bundle/"
    build_dir="build-bundle"
  fi
fi
if ((!no_build)); then
  TIPBENCH_BUILD_DIR=$build_dir scripts/bootstrap.sh  # installs what is missing, configures Release, builds
fi
[[ -f $build_dir/CMakeCache.txt ]] || die 2 "$build_dir is not a CMake build (run scripts/bootstrap.sh)"
build=$(cd "$build_dir" && pwd -P)
build_type=$(build_type_of "$build")
[[ $build_type == Release ]] || log "warning: $build_dir is a '$build_type' build, not Release"
for tool in patchelf readelf objdump ldd strings strip; do
  command -v "$tool" >/dev/null || die 2 "$tool not found (scripts/bootstrap.sh installs patchelf; binutils has readelf, strings)"
done

python=$(cache_value "$build" TIPBENCH_PYTHON)
torch_dir=$("$python" -c 'import torch,os;print(os.path.realpath(os.path.dirname(torch.__file__)))') ||
  die 2 "cannot import torch with $python (the build's TIPBENCH_PYTHON)"
torch_version=$("$python" -c 'import torch;print(torch.__version__)')
# The wheel's CUDA libraries (site-packages/nvidia/*) and the toolkit the build linked against.
wheel_nvidia=$(dirname "$torch_dir")/nvidia
cuda_root=$(cache_value "$build" CUDAToolkit_LIBRARY_ROOT)
[[ -n $cuda_root ]] || cuda_root=/usr/local/cuda
cuda_root=$(cd "$cuda_root" 2>/dev/null && pwd -P || echo "$cuda_root")

# --- what goes in: binaries found in the build, not listed by hand ------------------------------
is_elf() { [[ $(head -c4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }
binaries=("$build/tipbench")
if [[ -x $build/suites/micro/tipbench_micro ]]; then
  binaries+=("$build/suites/micro/tipbench_micro")
else
  log "warning: no tipbench_micro in $build_dir (TIPBENCH_BUILD_MICRO=OFF?): the micro stage will say so"
fi
# Test binaries that stay out: pure computation on result documents and files (statistics, the
# gate's decision, reports, the readers' fuzzing, the history store) that links no LibTorch, so the
# device could only repeat what CI ran; the space goes to the tests that can differ there. The
# history's confirm/bisect tests run CPU builds and need git and PostgreSQL 15 (and libpq's
# dependencies would take 7 MiB of the bundle). Then the CLI's error paths, the gate's and the
# readers' on the CPU (test_gate_cli, test_reader_fuzz_cli, test_cli_process, test_data_core: no
# *_CUDA test among them) when the bundle reached its 56 MiB again (issue 48's tests), and the
# harness's libraries without LibTorch (test_common, test_statistics, test_results, test_processes,
# test_explain: the result schema, statistics and explain's reductions on plain values) at 57 MiB
# (issue 62's seams: the fixtures a GPU brings back are replayed here, not there).
not_carried=(test_statistics test_gate test_reports test_reader_fuzz test_history test_history_bisect test_gate_cli
  test_reader_fuzz_cli test_cli_process test_data_core test_common test_results test_processes test_explain)
# A test binary the build no longer makes (left in the tree by an earlier layout: the harness's
# tests moved into tests/harness/<library>/) is not carried: with Ninja, only build.ninja's outputs.
made_by_build() {
  [[ ! -f $build/build.ninja ]] || grep -qF "build ${1#"$build"/}: " "$build/build.ninja"
}
tests=()
while IFS= read -r t; do
  [[ " ${not_carried[*]} " == *" $(basename "$t") "* ]] && continue
  made_by_build "$t" || { log "leaving out $t: not made by this build (an earlier layout's)"; continue; }
  is_elf "$t" && tests+=("$t")
done < <(find "$build/tests" -type f -name 'test_*' -perm -u+x | sort)
[[ -x ${binaries[0]} ]] || die 2 "no tipbench in $build_dir: build first (scripts/bootstrap.sh)"
((${#tests[@]})) || log "warning: no test binaries in $build_dir/tests (TIPBENCH_BUILD_TESTS=OFF?)"

stage=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,tests,lib,share/source/docs/examples,share/source/ci,share/source/scripts,share/source/tests/models,share/source/tests/scripts,share/source/tests/suites}
cp "${binaries[@]}" "$stage/bin/"
((${#tests[@]})) && cp "${tests[@]}" "$stage/tests/"

# --- shared libraries: every one ldd resolves, minus the runtime, LibTorch and CUDA -------------
# The C/C++ runtime (glibc, libstdc++, libgcc_s) is the target's: bundling it would break it.
is_runtime() {
  case $1 in
    ld-linux*|libc.so.*|libm.so.*|libmvec.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*|\
    libresolv.so.*|libanl.so.*|libstdc++.so.*|libgcc_s.so.*|linux-vdso.so.*) return 0 ;;
  esac
  return 1
}
declare -A bundled=()   # soname -> the file it resolved to here
declare -A skipped=()   # soname -> why it stays out
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# From each binary's own NEEDED entries down through the libraries that get bundled; what
# LibTorch and CUDA load in turn is theirs. ldd (with the build's RPATH still in place) says where
# each name resolves: exactly what the build linked.
for bin in "$stage"/bin/* "$stage"/tests/*; do
  declare -A where=()
  while IFS= read -r line; do
    [[ $line == *"=>"* ]] || continue
    soname=${line%% =>*}; soname=${soname//[[:space:]]/}
    target=${line#*=> }; target=${target% (*}
    [[ $target == "not found" ]] && die 1 "$(basename "$bin"): $soname not found by ldd here"
    where[$soname]=$(readlink -f "$target")
  done < <(ldd "$bin")
  mapfile -t queue < <(needed "$bin")
  while ((${#queue[@]})); do
    soname=${queue[0]}; queue=("${queue[@]:1}")
    [[ -n ${bundled[$soname]:-} || -n ${skipped[$soname]:-} ]] && continue
    if is_runtime "$soname"; then skipped[$soname]="C/C++ runtime"; continue; fi
    real=${where[$soname]:-}
    [[ -n $real ]] || die 1 "$(basename "$bin") needs $soname, which ldd did not resolve"
    if [[ $real == "$torch_dir"/* ]]; then skipped[$soname]="LibTorch"
    elif [[ $soname == libnvjpeg.so.* ]]; then bundled[$soname]=$real  # not among torch's CUDA wheels: travels
    elif [[ $real == "$wheel_nvidia"/* || $real == "$cuda_root"/* ]]; then skipped[$soname]="CUDA"
    else
      bundled[$soname]=$real
      mapfile -t -O "${#queue[@]}" queue < <(needed "$real")
    fi
  done
  unset where
done
for soname in "${!bundled[@]}"; do cp -L "${bundled[$soname]}" "$stage/lib/$soname"; done
# The allocator suite preloads these (LD_PRELOAD, found in lib/); the GPU machines lack the
# Debian packages. Optional: a build machine without them bundles none, and the arms say skipped.
for allocator in /usr/lib/x86_64-linux-gnu/{libjemalloc.so.2,libtcmalloc_minimal.so.4}; do
  if [[ -e $allocator ]]; then cp -L "$allocator" "$stage/lib/"; fi
done

# The static symbol tables only serve a debugger (the target has none; c10's backtraces read the
# dynamic symbols, which stay): stripping them saves a sixth of the size.
strip --strip-all "$stage"/bin/* "$stage"/tests/*
# RPATH (not RUNPATH): searched before LD_LIBRARY_PATH, so the bundle's copies win over any the
# target's environment names, and also serve the libraries' own dependencies.
old_rpath=()
for bin in "$stage"/bin/* "$stage"/tests/*; do
  old_rpath+=("$(readelf -d "$bin" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')")
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$bin"
done
for lib in "$stage"/lib/*; do
  [[ -e $lib ]] && patchelf --force-rpath --set-rpath '$ORIGIN' "$lib"
done

# --- files read at run time -------------------------------------------------------------------
# Tests read these through TIPBENCH_SOURCE_DIR, TIPBENCH_MAKE_REFERENCE and TIPBENCH_CHARTJS
# (tests/support/test_paths.h, `report --chartjs`); run.sh points the variables here.
cp docs/cli.md docs/sources.md "$stage/share/source/docs/"  # the CLI and source-claim doc checks
cp ci/gate-thresholds.json "$stage/share/source/ci/"
cp docs/examples/result-v1.json "$stage/share/source/docs/examples/"  # the reader fuzz tests' seed
# The model-file tests export their files with the machine's python (tests/support/model_files.h).
cp scripts/export_model.py "$stage/share/source/scripts/"
cp tests/models/make_model_files.py "$stage/share/source/tests/models/"
cp tests/scripts/export_fixtures.py "$stage/share/source/tests/scripts/"
cp tests/suites/run_scripts.py "$stage/share/source/tests/suites/"  # the recipe scripts' test runs them
cp tests/suites/pytorch_optimizer_choice.py "$stage/share/source/tests/suites/"  # the optimizer default's test
mkdir -p "$stage/share/source/models/flops/src"  # the FLOP table's test counts it again (torchvision there)
cp scripts/count_flops.py "$stage/share/source/scripts/"
# The Python worker (torch.compile, python_eager arms; run.sh points TIPBENCH_WORKER_DIR at it),
# whose models count_flops.py imports too.
mkdir -p "$stage/share/source/python/tipbench_worker"
cp python/tipbench_worker/*.py "$stage/share/source/python/tipbench_worker/"
cp models/flops/src/model_flop_table.cpp "$stage/share/source/models/flops/src/"
cp tests/models/make_reference.py "$stage/share/"
chartjs=/usr/share/javascript/chart.js/chart.min.js
[[ -f $chartjs ]] || die 2 "$chartjs not found (Debian libjs-chart.js; scripts/bootstrap.sh installs it)"
cp "$chartjs" "$stage/share/chart.min.js"
cp scripts/bundle/run.sh "$stage/run.sh"
cp scripts/bundle/bundle_check.py scripts/bundle/first_call_check.py "$stage/share/"
chmod +x "$stage/run.sh"

git_sha=$(git rev-parse HEAD 2>/dev/null || echo "")
git_dirty=0
[[ -n $git_sha && -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && git_dirty=1
cat >"$stage/share/build-info.sh" <<EOF
# Written by scripts/bundle.sh; sourced by run.sh.
TIPBENCH_GIT_SHA=$git_sha
TIPBENCH_GIT_DIRTY=$git_dirty
bundle_torch_version=$torch_version
bundle_build_type=$build_type
bundle_packed_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
EOF

# --- rules: no absolute path of this machine needed, and a size that travels -------------------
# RPATHs are now $ORIGIN-relative only.
for f in "$stage"/bin/* "$stage"/tests/* "$stage"/lib/*; do
  [[ -e $f ]] || continue
  rpath=$(readelf -d "$f" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
  [[ -z $rpath || $rpath == '$ORIGIN'* ]] || die 1 "$(basename "$f") still has RPATH $rpath"
done
# Strings that are a path in this checkout or build (text that merely mentions one, like a gtest
# assertion's source text, is not opened): allowed are source file names (__FILE__ in error
# messages), the compile-time defaults that an environment variable overrides (run.sh sets them:
# the harness's source dir for git state, the Python worker's folder (TIPBENCH_WORKER_DIR), the
# tests' TIPBENCH_BUILT_* paths, among them the stack
# A/B head binary, absent on a GPU machine: its test skips), and the RPATH text
# patchelf leaves behind unused. Anything else would be a path opened at run time: refuse it.
# The compiler may store a short literal without its NUL, glued to the next one ("<root>' rev-parse
# HEAD..." on a 16-character root): a path ends at the first quote, space or '<' after the prefix.
stack_b_torch=$(sed -n 's/^torch==//p' "$root/requirements-stack-b.txt")  # the stack A/B test's head
allowed=("$root" "$root/python" "$build/tipbench" "$python" "$(dirname "$python")/torchrun"
         "$root/tests/models/make_reference.py" "$root/build-torch$stack_b_torch/tipbench" "${old_rpath[@]}")
offending=$(for f in "$stage"/bin/* "$stage"/tests/*; do strings -n 6 "$f"; done |
  awk -v r="$root" -v b="$build" '
    function path_at(prefix,   rest) {
      rest = substr($0, length(prefix) + 1)
      sub(/['"'"'" <].*/, "", rest)
      return prefix rest
    }
    index($0, b) == 1 { print path_at(b); next }
    index($0, r) == 1 { print path_at(r) }' | sort -u |
  grep -Ev '\.(c|cc|cpp|cxx|h|hh|hpp|hxx|cu|cuh|inl)$' |
  grep -Fxv -f <(printf '%s\n' "${allowed[@]}") || true)
[[ -z $offending ]] || die 1 "absolute build-machine paths in the binaries (make them overridable):"$'\n'"$offending"

bytes=$(du -sb "$stage" | cut -f1)
if ((bytes > max_bytes)); then
  du -ab "$stage" | sort -rn | sed -n '2,11p' >&2
  die 1 "the bundle is $((bytes / 1024 / 1024)) MiB, over the 56 MiB left to it in a device call's 64"
fi

{
  echo "tipbench device bundle (scripts/bundle.sh); run: ./run.sh STAGE OUTDIR (docs/gpu.md)"
  echo "git $git_sha$( ((git_dirty)) && echo ' (dirty)'), $build_type build, torch $torch_version, packed $(date -u +%FT%TZ)"
  echo "size $bytes bytes"
  # What the target's C/C++ runtime must provide (run.sh's ldd check names any version missing).
  echo "needs from the target: $(for f in "$stage"/bin/* "$stage"/tests/* "$stage"/lib/*; do objdump -T "$f"; done 2>/dev/null |
    grep -oE '(GLIBC|GLIBCXX|CXXABI)_[0-9.]+' | sort -uV |
    awk -F_ '{v[$1] = $0} END {for (k in v) printf "%s ", v[k]}')(newest symbol versions), LibTorch $torch_version, CUDA 13 runtime"
  echo
  echo "bundled libraries (lib/):"
  for soname in $(printf '%s\n' "${!bundled[@]}" | sort); do echo "  $soname  <- ${bundled[$soname]}"; done
  echo "left to the target:"
  for soname in $(printf '%s\n' "${!skipped[@]}" | sort); do echo "  $soname  (${skipped[$soname]})"; done
  echo
  echo "files:"
  (cd "$stage" && find . -type f ! -name MANIFEST.txt | sort | xargs sha256sum)
} >"$stage/MANIFEST.txt"

rm -rf "$out"
mv "$stage" "$out"
trap - EXIT
log "packed $out: $((bytes / 1024)) KiB, ${#tests[@]} test binaries, ${#bundled[@]} bundled libraries ($(printf '%s\n' "${!bundled[@]}" | sort | tr '\n' ' '))"
