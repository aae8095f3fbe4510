#!/usr/bin/env bash
# Package test: install a configured+built pipescope tree into a scratch prefix, then configure,
# build and run tests/package/consumer — an outside project that only does find_package(pipescope).
#
#   tests/package/package_test.sh <build-dir> <source-dir> <work-dir>
#
# <work-dir>/prefix and <work-dir>/consumer-build are wiped and recreated; nothing else in
# <work-dir> is touched. Environment:
#   PIPESCOPE_CONSUMER_CXX_FLAGS  CMAKE_CXX_FLAGS for the consumer (e.g. the sanitizer flags the
#                                 pipescope build used: its static libraries need them at link time)
#   PIPESCOPE_CMAKE_COMMAND       the cmake to use (default: cmake on PATH)
set -euo pipefail

me="package_test"

usage() {
    echo "usage: $0 <build-dir> <source-dir> <work-dir>" >&2
    exit 2
}

die() {
    echo "" >&2
    echo "$me: FAILED: $*" >&2
    exit 1
}

[[ $# -eq 3 ]] || usage
cmake_cmd="${PIPESCOPE_CMAKE_COMMAND:-cmake}"
command -v "$cmake_cmd" >/dev/null 2>&1 || die "cmake not found ('$cmake_cmd')"

abspath() { (cd "$1" && pwd -P); }
[[ -d "$1" ]] || die "build directory '$1' does not exist"
[[ -d "$2" ]] || die "source directory '$2' does not exist"
mkdir -p "$3" || die "cannot create work directory '$3'"
build_dir="$(abspath "$1")"
source_dir="$(abspath "$2")"
work_dir="$(abspath "$3")"
consumer_src="$source_dir/tests/package/consumer"
prefix="$work_dir/prefix"
consumer_build="$work_dir/consumer-build"

[[ -f "$build_dir/CMakeCache.txt" ]] || die "'$build_dir' is not a configured CMake build directory (no CMakeCache.txt)"
[[ -f "$consumer_src/CMakeLists.txt" ]] || die "consumer project not found at '$consumer_src'"

# Build settings to reuse for the consumer, read from the pipescope build's cache.
cache_value() {
    sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | head -n 1
}
cxx="$(cache_value CMAKE_CXX_COMPILER)"
generator="$(cache_value CMAKE_GENERATOR)"
make_program="$(cache_value CMAKE_MAKE_PROGRAM)"
build_type="$(cache_value CMAKE_BUILD_TYPE)"
consumer_flags="${PIPESCOPE_CONSUMER_CXX_FLAGS:-}"

step() {
    echo ""
    echo "== $me: $*"
}

echo "$me: build dir      $build_dir"
echo "$me: prefix         $prefix"
echo "$me: consumer build $consumer_build"
echo "$me: compiler       ${cxx:-<default>} (generator ${generator:-<default>}, build type ${build_type:-<none>})"
echo "$me: consumer flags ${consumer_flags:-<none>}"

# --- 1. install --------------------------------------------------------------------------------
step "installing pipescope into $prefix"
rm -rf "$prefix" "$consumer_build"
install_args=(--install "$build_dir" --prefix "$prefix")
[[ -n "$build_type" ]] && install_args+=(--config "$build_type")
"$cmake_cmd" "${install_args[@]}" \
    || die "'cmake --install $build_dir --prefix $prefix' failed (are the targets built?)"

# --- 2. check what was installed ---------------------------------------------------------------
step "checking the installed package"
config_file="$(find "$prefix" -path '*/cmake/pipescope/pipescopeConfig.cmake' -print -quit)"
[[ -n "$config_file" ]] || die "no lib*/cmake/pipescope/pipescopeConfig.cmake under $prefix"
config_dir="$(dirname "$config_file")"
for f in pipescopeConfigVersion.cmake pipescopeTargets.cmake; do
    [[ -f "$config_dir/$f" ]] || die "$config_dir/$f was not installed"
done
for h in pipescope/pipescope.hpp pipescope/pipeline.hpp pipescope/task_group.hpp pipescope/scheduler.hpp \
         pipescope/detail/pipeline_engine.hpp; do
    [[ -f "$prefix/include/$h" ]] || die "header include/$h was not installed"
done
[[ -d "$prefix/include/pipescope/trace" ]] || die "tracer headers (include/pipescope/trace) were not installed"
if grep -q "pipescope_build_flags" "$config_dir"/pipescopeTargets*.cmake; then
    die "the exported targets mention pipescope_build_flags (a build-only target leaked into the export)"
fi
if grep -qF -e "$source_dir" -e "$build_dir" "$config_dir"/pipescope*.cmake; then
    grep -nF -e "$source_dir" -e "$build_dir" "$config_dir"/pipescope*.cmake >&2 || true
    die "the installed package refers to the source or build tree (not relocatable)"
fi
echo "ok: $config_dir"

# --- 3. configure the consumer -----------------------------------------------------------------
step "configuring the consumer project"
configure_args=(-S "$consumer_src" -B "$consumer_build"
    "-DCMAKE_PREFIX_PATH=$prefix"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    "-DCMAKE_CXX_FLAGS=$consumer_flags")
[[ -n "$generator" ]] && configure_args+=(-G "$generator")
[[ -n "$make_program" ]] && configure_args+=("-DCMAKE_MAKE_PROGRAM=$make_program")
[[ -n "$cxx" ]] && configure_args+=("-DCMAKE_CXX_COMPILER=$cxx")
[[ -n "$build_type" ]] && configure_args+=("-DCMAKE_BUILD_TYPE=$build_type")
"$cmake_cmd" "${configure_args[@]}" \
    || die "configuring the consumer failed: find_package(pipescope) with CMAKE_PREFIX_PATH=$prefix did not work"

found_dir="$(sed -n 's/^pipescope_DIR:[A-Z]*=//p' "$consumer_build/CMakeCache.txt" | head -n 1)"
case "$(cd "$found_dir" 2>/dev/null && pwd -P)" in
    "$prefix"/*) echo "ok: pipescope_DIR=$found_dir" ;;
    *) die "the consumer found pipescope at '$found_dir', not in the freshly installed prefix $prefix" ;;
esac

# --- 4. build the consumer ---------------------------------------------------------------------
step "building the consumer project"
build_args=(--build "$consumer_build")
[[ -n "$build_type" ]] && build_args+=(--config "$build_type")
"$cmake_cmd" "${build_args[@]}" \
    || die "building the consumer against the installed pipescope failed (headers, link interface or flags)"

# --- 5. run it ---------------------------------------------------------------------------------
step "running the consumer"
exe="$consumer_build/pipescope_consumer"
if [[ ! -x "$exe" ]]; then
    exe="$(find "$consumer_build" -type f -name pipescope_consumer -perm -u+x -print -quit)"
fi
[[ -n "$exe" && -x "$exe" ]] || die "the consumer executable was not produced in $consumer_build"
rc=0
"$exe" || rc=$?
[[ $rc -eq 0 ]] || die "the consumer program exited with status $rc (pipe_while/task_group result differs from the serial value, or it crashed)"

# --- 6. the README's examples -------------------------------------------------------------------
# Every complete example in README.md ("Writing your own pipeline") builds against the installed
# package as a user would build it, and runs to exit 0 (each checks its own result).
step "building and running the README's examples"
examples_src="$work_dir/readme-examples"
examples_build="$work_dir/readme-examples-build"
rm -rf "$examples_src" "$examples_build"
python3 "$source_dir/tests/package/readme/extract_examples.py" "$source_dir/README.md" "$examples_src" >"$work_dir/examples.txt" \
    || die "cutting the examples out of README.md failed"
examples_args=("${configure_args[@]}")
examples_args[1]="$examples_src"     # -S's value
examples_args[3]="$examples_build"   # -B's value
"$cmake_cmd" "${examples_args[@]}" >/dev/null || die "configuring the README examples failed"
"$cmake_cmd" --build "$examples_build" || die "a README example does not compile against the installed package"
for name in $(cat "$work_dir/examples.txt"); do
    exe="$(find "$examples_build" -type f -name "$name" -perm -u+x -print -quit)"
    [[ -n "$exe" ]] || die "README example $name was not built"
    "$exe" >"$work_dir/example-$name.out" || die "README example $name exited $? (output in $work_dir/example-$name.out)"
    echo "ok: README example $name.cpp built and ran"
done

# --- 6. a machine without libdeflate's development files ------------------------------------------
# The package declares its dependencies: where pkg-config cannot find libdeflate (its search path
# emptied, as on a machine without libdeflate-dev), find_package(pipescope) says so by name at
# configure time, instead of the consumer failing to link against a bare -ldeflate.
step "configuring the consumer where pkg-config finds no libdeflate"
no_pc="$work_dir/empty-pkgconfig"
rm -rf "$no_pc" "$consumer_build-nodeflate"
mkdir -p "$no_pc"
configure_args[3]="$consumer_build-nodeflate"   # -B's value
out="$(PKG_CONFIG_LIBDIR="$no_pc" PKG_CONFIG_PATH="" "$cmake_cmd" "${configure_args[@]}" 2>&1)" && rc=0 || rc=$?
[[ $rc -ne 0 ]] || die "find_package(pipescope) succeeded although pkg-config could not find libdeflate"
grep -q "libdeflate-dev" <<<"$out" || { echo "$out" >&2; die "the failure does not name libdeflate-dev"; }
echo "ok: find_package(pipescope) refused, naming libdeflate-dev"

echo ""
echo "$me: OK: installed pipescope was found, linked and ran correctly"
