#!/usr/bin/env bash
# Reruns every quantitative result of the seed papers that pipescope can express, on virtual
# workers (tiny/small sizes; pipe-fib-256 large), and writes the table docs/papers.md quotes: the
# paper's figure, pipescope's, whether they agree in shape, and the command. The experiments live
# in scripts/papers.py; this wrapper only finds (or builds) the CLI.
#
#   scripts/papers.sh                  every experiment (about 2.5 minutes of CPU; 5-9 minutes of
#                                      wall time on a loaded 2-core machine)
#   scripts/papers.sh --quick          size tiny, one serial run each (a smoke check of the plumbing)
#   scripts/papers.sh --out FILE       write the table elsewhere (default papers-results.md)
#   scripts/papers.sh --only ID,ID     just these experiments (scripts/papers.py --list names them)
#   scripts/papers.sh --work DIR       keep the sweeps (traces, scale.json) in DIR for `pipescope stats`
#
# Relative paths are taken from the current directory. Environment: PIPESCOPE_CLI=path uses that CLI
# instead of build/cli/pipescope (which is built with `cmake --build build` when it is missing;
# configure build/ first, e.g. with scripts/test.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
me="papers.sh"
case "${1:-}" in
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
cli="${PIPESCOPE_CLI:-$root/build/cli/pipescope}"
if [[ ! -x "$cli" ]]; then
    [[ -z "${PIPESCOPE_CLI:-}" ]] || { echo "$me: ERROR: PIPESCOPE_CLI=$cli is not an executable" >&2; exit 2; }
    [[ -f "$root/build/CMakeCache.txt" ]] || { echo "$me: ERROR: no build/ (configure it first: scripts/test.sh)" >&2; exit 2; }
    cmake --build "$root/build" --target pipescope_cli
fi
exec python3 "$root/scripts/papers.py" --cli "$cli" "$@"
