#!/usr/bin/env bash
# Builds pipescope in Release and runs the benchmarks, printing their tables.
#
#   bench/run.sh                       # build into build-bench/, run with default settings
#   BUILD_DIR=/tmp/b bench/run.sh      # another build directory
#   PIPE_FIB_ARGS="--runs 3" SPS_ARGS="--runs 5 --grains-us 2,50" bench/run.sh
#   PIPELINES_ARGS="--size small --runs 3" bench/run.sh   # bench_pipelines_vs_tbb (large: several minutes)
#
# Progress lines go to stderr, tables to stdout. Nothing here judges the numbers.
set -euo pipefail

src_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-${src_dir}/build-bench}"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

cmake -S "${src_dir}" -B "${build_dir}" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DPIPESCOPE_BUILD_TESTS=OFF -DPIPESCOPE_BUILD_BENCH=ON >/dev/null
cmake --build "${build_dir}" --target bench_pipe_fib bench_trace_cost
# bench_sps_vs_tbb and bench_pipelines_vs_tbb only exist when CMake found oneTBB.
have_tbb=0
if cmake --build "${build_dir}" --target help | grep -q 'bench_sps_vs_tbb'; then
  cmake --build "${build_dir}" --target bench_sps_vs_tbb bench_pipelines_vs_tbb
  have_tbb=1
fi

echo
echo "== bench_pipe_fib =="
# shellcheck disable=SC2086  # the *_ARGS variables are meant to split into words
"${build_dir}/bench/bench_pipe_fib" ${PIPE_FIB_ARGS:-}

echo
echo "== bench_sps_vs_tbb =="
if [[ ${have_tbb} -eq 1 ]]; then
  # shellcheck disable=SC2086
  "${build_dir}/bench/bench_sps_vs_tbb" ${SPS_ARGS:-}
else
  echo "skipped: oneTBB was not found when configuring (install libtbb-dev)"
fi

echo
echo "== bench_pipelines_vs_tbb =="
if [[ ${have_tbb} -eq 1 ]]; then
  # shellcheck disable=SC2086
  "${build_dir}/bench/bench_pipelines_vs_tbb" ${PIPELINES_ARGS:-}
else
  echo "skipped: oneTBB was not found when configuring (install libtbb-dev)"
fi

echo
echo "== bench_trace_cost =="
# shellcheck disable=SC2086
"${build_dir}/bench/bench_trace_cost" ${TRACE_ARGS:-}
