#!/usr/bin/env bash
# The README's picture is the committed findings page's chart (scripts/readme-chart.sh): its
# .source names that page with the SHA-256 the page has now (a page made again without a new
# picture fails here), and the script, run again into a scratch folder, draws a PNG of the same
# size from the same page. Skipped (77) without chromium.
#   tests/scripts/test_readme_chart.sh SOURCE_DIR
set -euo pipefail
root=$1
cd "$root"
committed=docs/images/h100-findings.png
read -r sha page < "$committed.source"
[[ $(sha256sum "$page" | cut -d' ' -f1) == "$sha" ]] || {
  echo "FAIL: $committed was drawn from another version of $page: run scripts/readme-chart.sh" >&2
  exit 1
}
grep -q "](${committed})" README.md || { echo "FAIL: README.md does not show $committed" >&2; exit 1; }
command -v chromium > /dev/null || command -v chromium-browser > /dev/null || {
  echo "skipped: no chromium (scripts/bootstrap.sh --test installs it)"
  exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/readme-chart.sh "$page" "$work/chart.png"
cmp -s "$committed.source" "$work/chart.png.source" || { echo "FAIL: another source line" >&2; exit 1; }
# A PNG's IHDR: width and height, big-endian, at bytes 16..23.
size() { od -An -tx1 -j16 -N8 "$1" | tr -d ' \n'; }
[[ $(head -c 8 "$work/chart.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || {
  echo "FAIL: not a PNG" >&2
  exit 1
}
[[ $(size "$work/chart.png") == "$(size "$committed")" ]] || {
  echo "FAIL: the drawn picture's size $(size "$work/chart.png") is not the committed one's $(size "$committed")" >&2
  exit 1
}
# Drawn, not blank: Chart.js's bars and labels make a PNG of tens of kilobytes (83 KB committed).
(($(stat -c %s "$work/chart.png") > 20000)) || { echo "FAIL: a near-empty picture" >&2; exit 1; }
echo "ok: $committed is $page's chart ($sha)"
