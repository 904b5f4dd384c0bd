#!/usr/bin/env bash
# ci/model-gate.sh as a team runs it: a git repository holding a model, a base commit and a head
# commit that changes it; the script exports both and gates head vs base with the real binary.
#   test_model_gate.sh TIPBENCH_SOURCE_DIR TIPBENCH_BINARY PYTHON
set -euo pipefail
src=$1 bin=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cd "$work"
git init -q -b main repo && cd repo
git config user.email t@example.com && git config user.name test
cat > net.py <<'PY'
import torch
from torch import nn

def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
PY
git add net.py && git commit -qm base
git checkout -qb head
sed -i 's/nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)/nn.Conv2d(3, 8, 5, padding=2), nn.BatchNorm2d(8)/' net.py
git commit -qam head

gate=("$src/ci/model-gate.sh" --factory net:build --input 3,32,32 --classes 10 --base-ref main --out out
      --tipbench "$bin" --python "$python")
set +e
"${gate[@]}" -- --suite zero_grad --blocks 3 > log.txt 2>&1
code=$?
set -e
[[ $code == 0 || $code == 1 || $code == 3 ]] || { cat log.txt; fail "a verdict was expected, got exit $code"; }
for f in out/base.pt out/head.pt out/gate.md out/gate.json out/session/base.json out/session/head.json; do
  [[ -s $f ]] || { cat log.txt; fail "$f was not written"; }
done
cmp -s out/base.pt out/head.pt && fail "the base and head exports are the same file"
grep -q 'model:model' out/session/head.json || fail "the cases are not named after --name's default 'model'"

# The same with torch.export archives: two .pt2 files.
set +e
"${gate[@]}" --format pt2 --out out2 -- --suite zero_grad --blocks 3 > log_pt2.txt 2>&1
code2=$?
set -e
[[ $code2 == 0 || $code2 == 1 || $code2 == 3 ]] || { cat log_pt2.txt; fail "--format pt2: a verdict was expected, got exit $code2"; }
[[ -s out2/base.pt2 && -s out2/head.pt2 ]] || { cat log_pt2.txt; fail "--format pt2 wrote no .pt2 files"; }
grep -q '"format": *"pt2"' out2/session/head.json || fail "the head run did not train the .pt2"

# Bad input: a flag missing, a head that does not export. Exit 2 each.
set +e
"$src/ci/model-gate.sh" --factory net:build --input 3,32,32 --tipbench "$bin" > log2.txt 2>&1
[[ $? == 2 ]] || { cat log2.txt; fail "a missing --classes should exit 2"; }
echo 'raise SystemExit("broken")' >> net.py && git commit -qam broken
"${gate[@]}" -- --suite zero_grad --blocks 3 > log3.txt 2>&1
[[ $? == 2 ]] || { cat log3.txt; fail "a head that does not export should exit 2"; }
grep -q "the head model does not export" log3.txt || { cat log3.txt; fail "the reason is not said"; }
echo "ok: model-gate.sh exit $code, bad input exit 2"
