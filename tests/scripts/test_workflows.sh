#!/usr/bin/env bash
# The GitHub Actions recipes in ci/github/ validate against GitHub's workflow schema
# (check-jsonschema's vendored copy), and the check does catch a broken workflow.
# Usage: test_workflows.sh SOURCE_DIR PYTHON
set -uo pipefail
src=$1 python=$2
check=$(dirname "$python")/check-jsonschema
[[ -x $check ]] || { echo "FAIL: $check missing (scripts/bootstrap.sh --test installs requirements-test.txt)"; exit 1; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
workflows=("$src"/ci/github/*.yml)
((${#workflows[@]} >= 3)) || { echo "FAIL: expected the gate, nightly and fleet workflows, found ${workflows[*]}"; exit 1; }
"$check" --builtin-schema vendor.github-workflows "${workflows[@]}" || { echo "FAIL: a workflow breaks the schema"; exit 1; }
# A step with neither `run` nor `uses` is refused: the check is not a no-op.
# The Build step's `run:` line (whatever it runs) becomes `shell:`, which alone is no step.
sed '/^      - name: Build$/{n;s/^        run: .*/        shell: bash/}' "$src/ci/github/tipbench-nightly.yml" >"$tmp/broken.yml"
cmp -s "$src/ci/github/tipbench-nightly.yml" "$tmp/broken.yml" && { echo "FAIL: the nightly has no Build step to break"; exit 1; }
if "$check" --builtin-schema vendor.github-workflows "$tmp/broken.yml" >/dev/null 2>&1; then
  echo "FAIL: a step with neither run nor uses passed the schema check"
  exit 1
fi
echo "PASS: ${#workflows[@]} workflows match GitHub's schema; a broken one is refused"
