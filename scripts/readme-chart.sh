#!/usr/bin/env bash
# The README's picture: the per-tip speedup chart of a committed findings page, rendered to PNG by
# headless Chromium (Debian's `chromium`; scripts/bootstrap.sh --test installs it). The page is
# opened in a frame scrolled to its "Charts" heading, and the first HEIGHT pixels are kept: the
# chart Chart.js draws there, as a reader of the page sees it. Beside the PNG, OUT.source names
# the page and its SHA-256, so a test can tell a picture made from another version of the page.
#   scripts/readme-chart.sh [PAGE] [OUT]
# Defaults: the H100 findings page, docs/images/h100-findings.png. Regenerate it whenever the page
# is made again (`tipbench report --one-machine`). Exit: 0 written; 2 a page missing or no
# chromium; 4 Chromium wrote no PNG.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
page=${1:-results/findings/nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0/report.html}
out=${2:-$root/docs/images/h100-findings.png}
width=1200 height=530
cd "$root"
[[ -f $page ]] || { echo "readme-chart: $page: no such page" >&2; exit 2; }
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || { echo "readme-chart: no chromium on PATH (scripts/bootstrap.sh --test installs it)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
page_url="file://$(realpath "$page")"
# The frame's page and this wrapper are both file://: --allow-file-access-from-files lets the
# wrapper's script reach into the frame to scroll it.
cat > "$work/frame.html" <<HTML
<!doctype html><html><body style="margin:0;overflow:hidden">
<iframe id=f src="$page_url" style="border:0;width:${width}px;height:${height}px" scrolling=no></iframe>
<script>
document.getElementById('f').onload = function () {
  var d = this.contentDocument, w = this.contentWindow;
  var h = Array.from(d.querySelectorAll('h2')).find(function (e) { return e.textContent.indexOf('Charts') === 0; });
  if (h) w.scrollTo(0, h.getBoundingClientRect().top + w.scrollY - 8);
};
</script></body></html>
HTML
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files \
  --user-data-dir="$work/profile" --virtual-time-budget=8000 --window-size="$width,$height" \
  --screenshot="$work/chart.png" "file://$work/frame.html" > "$work/chromium.log" 2>&1 || true
if [[ ! -s $work/chart.png ]]; then
  echo "readme-chart: Chromium wrote no PNG; its log:" >&2
  tail -5 "$work/chromium.log" >&2
  exit 4
fi
mkdir -p "$(dirname "$out")"
cp "$work/chart.png" "$out.tmp" && mv "$out.tmp" "$out"
printf '%s  %s\n' "$(sha256sum "$page" | cut -d' ' -f1)" "$page" > "$out.source.tmp" && mv "$out.source.tmp" "$out.source"
echo "wrote $out (${width}x${height}) from $page"
