#!/usr/bin/env bash
# Checks that C++ files are formatted as .clang-format says (the ctest test format.check runs it).
#
#   scripts/check-format.sh              check every C++ file of the repository (*.cpp, *.hpp, *.h)
#   scripts/check-format.sh FILE...      check these files
#   scripts/check-format.sh --fix [FILE...]   reformat those files in place instead of checking them
#
# Every file is formatted; the test keeps it so. Before committing: scripts/check-format.sh --fix.
#
# Formatting differs between clang-format versions: the reference is Debian 12's clang-format 14
# (scripts/install-deps.sh). CLANG_FORMAT=<path> picks another binary. Exit status: 0 formatted,
# 1 some file is not (each is named, with the lines clang-format would change), 2 usage error,
# 77 no clang-format (ctest reports the test as skipped).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
me="check-format"

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
files=()
for a in "$@"; do
    case $a in
        --fix) fix=1 ;;
        -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) echo "$me: unknown option '$a' (try --help)" >&2; exit 2 ;;
        *) files+=("$a") ;;
    esac
done

if [[ ${#files[@]} -eq 0 ]]; then
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
    else   # an unpacked archive: every C++ file outside build directories
        mapfile -t files < <(find . -path './build*' -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
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
