#!/usr/bin/env bash
# Runs a test program with ATen's CPU kernels forced to one instruction set, so the numerical
# tests also pass with the kernels of CPUs other than this one (tests/CMakeLists.txt registers
# them as <test>@<capability>, label cpu_capability).
#   tests/cpu_capability.sh <default|avx2|avx512> <program> [args...]
# ATen picks its kernels once per process: avx512 when the CPU has AVX-512 VL/BW/DQ and FMA,
# else avx2 when it has AVX2 and FMA, else default (aten/src/ATen/native/DispatchStub.cpp).
# ATEN_CPU_CAPABILITY overrides that choice without checking the CPU: avx512 on a CPU without
# AVX-512 dies of SIGILL (exit 132) at the first vectorised kernel. So this script exits 77,
# which CTest reports as skipped, when the CPU lacks the capability, and also when the capability
# is the one ATen picks here anyway (the plain registration of the same tests covers that).
set -euo pipefail
capability=${1:?usage: cpu_capability.sh <default|avx2|avx512> <program> [args...]}
shift

flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }

native=default
if has avx512vl avx512bw avx512dq fma; then
  native=avx512
elif has avx2 fma; then
  native=avx2
fi

case $capability in
  default) supported=1 ;;
  avx2) has avx2 fma && supported=1 || supported=0 ;;
  avx512) has avx512vl avx512bw avx512dq fma && supported=1 || supported=0 ;;
  *) echo "cpu_capability.sh: unknown capability '$capability' (default, avx2, avx512)" >&2; exit 2 ;;
esac
if ((!supported)); then
  echo "skipped: this CPU cannot run ATen's $capability kernels"
  exit 77
fi
if [[ $capability == "$native" ]]; then
  echo "skipped: $capability is what ATen picks on this CPU; the plain run of these tests covers it"
  exit 77
fi
echo "ATEN_CPU_CAPABILITY=$capability (this CPU's own: $native)"
ATEN_CPU_CAPABILITY=$capability exec "$@"
