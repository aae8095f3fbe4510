#!/bin/sh
# under-xvfb.sh XVFB_RUN SCREEN COMMAND [ARGS...]
# Runs COMMAND under `XVFB_RUN -a -s SCREEN` and exits with COMMAND's own status.
# Why not xvfb-run alone: after the command has ended, xvfb-run removes its temporary directory and,
# if that fails, exits 5 ("problem while cleaning up temporary directory") whatever the command
# returned. CI saw it once on a loaded machine, on a viewer run that had done what was asked; a test
# must judge the viewer, not xvfb-run's cleanup. The command's status is written from inside the
# X session to a file, and read back here.
set -u
xvfb_run=$1
screen=$2
shift 2
status_file=$(mktemp) || exit 1
"$xvfb_run" -a -s "$screen" sh -c '"$@"; s=$?; echo $s > "$0"; exit $s' "$status_file" "$@"
rc=$?
status=$(cat "$status_file")
rm -f "$status_file"
if [ -z "$status" ]; then
    exit "$rc"   # the command never ran (Xvfb did not start): xvfb-run's own failure
fi
if [ "$rc" -ne "$status" ]; then
    echo "under-xvfb.sh: xvfb-run exited $rc after the command exited $status; the command's status is kept" >&2
fi
exit "$status"
