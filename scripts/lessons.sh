#!/usr/bin/env bash
# Runs the lessons (all, or the ones named) headless with the plain build (build/), prints each
# story, and copies the step screenshots into docs/lessons/screenshots/NAME/ for the lesson pages.
#
#   scripts/lessons.sh                     every lesson, P=2, size small
#   scripts/lessons.sh imbalance footprint just these
#   WORKERS=4 SIZE=large scripts/lessons.sh
#
# Needs a build (scripts/demo.sh or scripts/test.sh makes one) and xvfb-run for the screenshots;
# pngquant, if installed, shrinks them (apt-get install pngquant).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
cli=build/cli/pipescope
[[ -x "$cli" ]] || { echo "lessons.sh: $cli not built (run scripts/test.sh or scripts/demo.sh first)" >&2; exit 1; }

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    mapfile -t names < <("$cli" lesson --list | awk '/^  [a-z]/ {print $1}')
fi

for name in "${names[@]}"; do
    out="out/lessons/$name"
    rm -rf "$out"
    # No DISPLAY: the lesson writes one screenshot per step (under xvfb-run) instead of opening a window.
    env -u DISPLAY -u WAYLAND_DISPLAY "$cli" lesson "$name" --workers "${WORKERS:-2}" --size "${SIZE:-small}" --out "$out"
    if [[ -d "$out/screenshots" ]]; then
        rm -rf "docs/lessons/screenshots/$name"
        mkdir -p "docs/lessons/screenshots/$name"
        cp "$out"/screenshots/step-*.png "docs/lessons/screenshots/$name/"
        # A 256-colour palette makes each page's images ~4x smaller; the views have few colours.
        if command -v pngquant >/dev/null; then
            pngquant --quality=60-85 --speed 1 -f --ext .png "docs/lessons/screenshots/$name"/step-*.png
        fi
    fi
done
