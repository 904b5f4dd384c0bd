#!/usr/bin/env bash
# Installs what tipbench needs and builds it; idempotent (seconds when nothing changed).
#   scripts/bootstrap.sh [--test]       --test also installs the test-only Python and Debian packages
#   scripts/bootstrap.sh --torch X.Y.Z  a second software stack beside the pinned one, for stack A/B
#                                       gates (docs/gate.md): torch==X.Y.Z from PyPI in .venv-torchX.Y.Z
#                                       and tipbench alone in build-torchX.Y.Z/ (no tests; ccache shared);
#                                       .venv and build/ are untouched
#   --target T                          build only T and what it needs (make quick: tipbench), not
#                                       every target
#   --no-build                          install only (make test fetches stack B's wheel this way
#                                       while the main venv installs and the main build runs)
#   --debian-only                       the Debian packages alone
# Steps: Debian packages (only those missing), the project-local virtual environment with the
# torch wheel, then a CMake/Ninja build with ccache. Each step's wall time goes to
# .times/stages.tsv (scripts/stage_times.sh; scripts/ci-times.py prints them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
want_test=0
torch_version=""
target=""
no_build=0
debian_only=0

log() { printf '[bootstrap] %s\n' "$*" >&2; }
# shellcheck source=scripts/stage_times.sh
source scripts/stage_times.sh

while (($#)); do
  case $1 in
    --test) want_test=1 ;;
    --torch)
      torch_version=${2:-}
      [[ $torch_version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log "--torch needs a release like 2.15.0, got '${torch_version}'"; exit 2; }
      shift ;;
    --target)
      target=${2:-}
      [[ $target =~ ^[A-Za-z0-9_]+$ ]] || { log "--target needs a CMake target name, got '${target}'"; exit 2; }
      shift ;;
    --no-build) no_build=1 ;;
    --debian-only) debian_only=1 ;;
    *) log "unknown argument '$1' (usage: scripts/bootstrap.sh [--test] [--torch X.Y.Z] [--target T] [--no-build] [--debian-only])"; exit 2 ;;
  esac
  shift
done

# clang: the compiler CMakeLists.txt picks (its precompiled headers load lazily); g++ for the C++
# standard library it compiles against.
debian_packages=(cmake ninja-build ccache clang g++ python3-venv libcli11-dev nlohmann-json3-dev libfmt-dev
                 libgtest-dev libgmock-dev libbenchmark-dev libjpeg62-turbo-dev libssl-dev
                 libjs-chart.js libgloo-dev patchelf     # patchelf: scripts/bundle.sh
                 libjemalloc2 libtcmalloc-minimal4       # the allocator suite's LD_PRELOAD arms
                 libsqlite3-dev                          # the history store (harness/history)
                 libpq-dev                               # ... and its PostgreSQL backend (libpq)
                 libboost-math-dev)                      # Student's t for history detect (header-only)
# Test-only: headless Chromium renders the HTML report in tests/reports (the test skips without it);
# clang-format 14 (Debian 12's) checks the code's layout (scripts/check-format.sh); PostgreSQL 15's
# server runs throw-away in tests/harness/history (its tests fail without it); Slurm and MUNGE make a
# throw-away two-node cluster in tests/distributed/slurm (never slurm-wlm-emulator: front-end
# mode gives every task node 0).
test_debian_packages=(chromium clang-format-14 postgresql-15 slurmctld slurmd slurm-client munge)
((want_test)) && debian_packages+=("${test_debian_packages[@]}")
install_debian_packages() {
  local sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "$@"
}
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  timed_stage "Debian packages" install_debian_packages "${missing[@]}"
fi
((debian_only)) && exit 0

venv=.venv
req=requirements.txt
((want_test)) && req=requirements-test.txt
if [[ -n $torch_version ]]; then
  venv=.venv-torch$torch_version
  req=$venv/requirements.txt
  mkdir -p "$venv"
  echo "torch==$torch_version" > "$req"
fi
install_python_packages() {
  [[ -x $venv/bin/python ]] || { log "creating $venv"; python3 -m venv "$venv"; }
  log "installing Python packages from $req (the CUDA torch wheel is large: about a minute)"
  "$venv"/bin/python -m pip install -q --upgrade pip
  "$venv"/bin/python -m pip install -q -r "$req"
}
stamp=$venv/.tipbench-$(cat requirements.txt "$req" | sha256sum | cut -c1-16)
if [[ ! -f $stamp ]]; then
  timed_stage "Python packages ($venv)" install_python_packages
  touch "$stamp"
fi
((no_build)) && exit 0

# The CUDA wheel's CMake config needs nvcc even though no GPU is required to build.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null || { log "nvcc not found: install the CUDA 13 toolkit"; exit 2; }

build=${TIPBENCH_BUILD_DIR:-build}
extra=()
if [[ -n $torch_version ]]; then
  build=${TIPBENCH_BUILD_DIR:-build-torch$torch_version}
  extra=(-DTIPBENCH_BUILD_TESTS=OFF -DTIPBENCH_BUILD_MICRO=OFF)  # the binary the gate runs, nothing else
fi
if [[ ! -f $build/build.ninja ]]; then
  log "configuring $build/"
  # ccache: cmake/TipbenchCcache.cmake; the compiler: CMakeLists.txt
  timed_stage "configure $build/" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTIPBENCH_PYTHON="$root/$venv/bin/python" "${extra[@]}" >&2
fi
what=(); [[ -n $target ]] && what=(--target "$target")
log "building ${target:-every target} in $build/"
timed_stage "build $build/ (${target:-all})" --build cmake --build "$build" "${what[@]}" >&2
