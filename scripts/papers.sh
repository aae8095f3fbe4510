#!/usr/bin/env bash
# Reruns every quantitative result of the seed papers that pipescope can express, on virtual
# workers (tiny/small sizes; pipe-fib-256 large), and writes the table docs/papers.md quotes: the
# paper's figure, pipescope's, whether they agree in shape, and the command. The experiments live
# in scripts/papers.py; this wrapper finds (or builds) the CLI and calibrates a new machine.
#
#   scripts/papers.sh                  every experiment (about 2.5 minutes of CPU; 5-9 minutes of
#                                      wall time on a loaded 2-core machine), after calibrating the
#                                      machine if it has no calibration yet (pipescope calibrate)
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
    -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
cli="${PIPESCOPE_CLI:-$root/build/cli/pipescope}"
if [[ ! -x "$cli" ]]; then
    [[ -z "${PIPESCOPE_CLI:-}" ]] || { echo "$me: ERROR: PIPESCOPE_CLI=$cli is not an executable" >&2; exit 2; }
    [[ -f "$root/build/CMakeCache.txt" ]] || { echo "$me: ERROR: no build/ (configure it first: scripts/test.sh)" >&2; exit 2; }
    cmake --build "$root/build" --target pipescope_cli
fi
# The virtual machine's costs come from `pipescope calibrate` (docs/virtual.md, "The cost model"):
# without a calibration the CLI falls back on built-in costs, which are no measurement of this
# machine (a failed steal 60 ns against 0.3 ns measured here: pipe-fib-256 on 16 virtual workers came
# out at 4.5x with them and 10.9x calibrated). So a machine with no calibration is calibrated first
# (about 20 s), where `pipescope run --virtual` looks for it; --quick, a smoke check, skips that.
config="${XDG_CONFIG_HOME:-${HOME:-}/.config}/pipescope/calibration.json"
quick=0
for a in "$@"; do [[ "$a" == --quick ]] && quick=1; done
if [[ $quick == 0 && ! -f "$config" ]]; then
    echo "$me: this machine has no calibration ($config): running 'pipescope calibrate' first" >&2
    "$cli" calibrate >&2 || { echo "$me: ERROR: pipescope calibrate failed" >&2; exit 1; }
fi
exec python3 "$root/scripts/papers.py" --cli "$cli" "$@"
