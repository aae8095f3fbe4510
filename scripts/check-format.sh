#!/usr/bin/env bash
# Checks that C++ files are formatted as .clang-format says (the ctest test format.check runs it).
#
#   scripts/check-format.sh              check the files listed in scripts/format-checked.txt, or every
#                                        tracked C++ file once that list is gone
#   scripts/check-format.sh --all        check every tracked C++ file (*.cpp, *.hpp, *.h)
#   scripts/check-format.sh --fix [--all]   reformat those files in place instead of checking them
#   scripts/check-format.sh FILE...      check these files
#
# Until the whole tree is reformatted, the test checks only the files already formatted, listed in
# scripts/format-checked.txt (every file there must stay formatted). To switch the check on for every
# file: `scripts/check-format.sh --fix --all && git rm scripts/format-checked.txt`.
#
# Formatting differs between clang-format versions: the reference is Debian 12's clang-format 14
# (scripts/install-deps.sh). CLANG_FORMAT=<path> picks another binary. Exit status: 0 formatted,
# 1 some file is not (each is named, with the lines clang-format would change), 2 usage error,
# 77 no clang-format (ctest reports the test as skipped).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
me="check-format"
list=scripts/format-checked.txt

clang_format=${CLANG_FORMAT:-}
if [[ -z $clang_format ]]; then
    for c in clang-format-14 clang-format; do
        if command -v "$c" >/dev/null 2>&1; then
            clang_format=$c
            break
        fi
    done
fi
if [[ -z $clang_format ]] || ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "$me: clang-format not found (apt-get install clang-format, or set CLANG_FORMAT)" >&2
    exit 77
fi

fix=0
all=0
files=()
for a in "$@"; do
    case $a in
        --fix) fix=1 ;;
        --all) all=1 ;;
        -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "$me: unknown option '$a' (try --help)" >&2; exit 2 ;;
        *) files+=("$a") ;;
    esac
done

if [[ ${#files[@]} -eq 0 ]]; then
    if [[ $all -eq 0 && -f $list ]]; then
        mapfile -t files < <(grep -v -e '^#' -e '^$' "$list")
    else
        mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
    fi
fi

if [[ $fix -eq 1 ]]; then
    "$clang_format" -i --style=file:.clang-format "${files[@]}"
    echo "$me: formatted ${#files[@]} file(s)"
    exit 0
fi

unformatted=0
diff_out=$(mktemp)
trap 'rm -f "$diff_out"' EXIT
for f in "${files[@]}"; do
    [[ -f $f ]] || { echo "$me: $f: no such file" >&2; unformatted=$((unformatted + 1)); continue; }
    if ! "$clang_format" --style=file:.clang-format "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - >"$diff_out" 2>&1; then
        echo "$me: $f is not formatted:"
        head -n 40 "$diff_out"
        unformatted=$((unformatted + 1))
    fi
done
if [[ $unformatted -gt 0 ]]; then
    echo "$me: $unformatted of ${#files[@]} file(s) not formatted; fix with: scripts/check-format.sh --fix FILE..."
    exit 1
fi
echo "$me: ${#files[@]} file(s) formatted"
