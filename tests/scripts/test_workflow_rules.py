"""The security rules of the GitHub Actions recipes in ci/github/ (issue 48; the review's findings 2,
5 and 11), which GitHub's schema (Workflows.MatchGitHubSchema) does not see:
  - no `${{ ... }}` inside a `run:` script: an expression is pasted into the script before the
    shell parses it, so a branch name or an output can inject commands; values come via `env:`;
  - every `uses:` is `owner/repo@<40-hex commit SHA>` with its tag in a trailing comment;
  - no workflow- or job-level `env:` carries a secret, a secret reaches only the steps named
    ingest, detect or report (never a Build), and the PR gate references no secret at all;
  - every job runs on exactly one runner pool (a `tipbench-*` label), and the PR gate's pool is
    shared with no job of the nightly or the fleet: PR code never runs on a runner that a
    secret-bearing job uses next (ccache's config and objects persist in $HOME);
  - the nightly's SQLite fallback store is outside the workspace (actions/checkout's clean deletes
    it there): no `results/history.db`, and every step that runs `tipbench history` defaults
    TIPBENCH_HISTORY_STORE to a path under $HOME or $RUNNER_TOOL_CACHE (or fails when it is unset).
Every broken rule is named, then exit 1.
Usage: test_workflow_rules.py SOURCE_DIR"""
import pathlib
import re
import sys

import yaml

GATE, NIGHTLY, FLEET = "tipbench-gate.yml", "tipbench-nightly.yml", "tipbench-fleet.yml"
SHA_PIN = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$")
SECRET_STEP = re.compile(r"ingest|detect|report", re.IGNORECASE)
STORE_DEFAULT = re.compile(
    r'TIPBENCH_HISTORY_STORE="?\$\{TIPBENCH_HISTORY_STORE:-'
    r"(\$HOME|\$\{HOME\}|\$RUNNER_TOOL_CACHE|\$\{RUNNER_TOOL_CACHE\})/[^}]+\}"
    r"|\$\{TIPBENCH_HISTORY_STORE:\?")

problems = []


def problem(workflow, message):
    problems.append(f"{workflow}: {message}")


def steps_of(job):
    return job.get("steps") or []


def step_label(step, index):
    return step.get("name") or step.get("uses") or f"step {index + 1}"


def mentions_secret(value):
    return "secrets." in yaml.safe_dump(value) if value else False


def check_run_scripts(name, workflow):
    for job_id, job in workflow["jobs"].items():
        for i, step in enumerate(steps_of(job)):
            if "${{" in str(step.get("run", "")):
                problem(name, f"job {job_id}, {step_label(step, i)!r}: `${{{{ ... }}}}` inside `run:` "
                              "(pass the value through `env:` and use \"$VAR\")")


def check_pins(name, text):
    for number, line in enumerate(text.splitlines(), 1):
        m = USES_LINE.match(line)
        if not m:
            continue
        ref, rest = m.group(1).strip("'\""), m.group(2)
        if ref.startswith("./") or ref.startswith("docker://"):
            problem(name, f"line {number}: `uses: {ref}`: only owner/repo@SHA actions are expected here")
        elif not SHA_PIN.match(ref):
            problem(name, f"line {number}: `uses: {ref}` is not pinned by a 40-hex commit SHA")
        elif not re.match(r"^\s+#\s*v\d", rest):
            problem(name, f"line {number}: `uses: {ref}` has no `# vX.Y.Z` comment naming its tag")


def check_secrets(name, workflow):
    if mentions_secret(workflow.get("env")):
        problem(name, "the workflow-level env carries a secret")
    for job_id, job in workflow["jobs"].items():
        if mentions_secret(job.get("env")):
            problem(name, f"job {job_id}: its job-level env carries a secret (the build would see it)")
        if mentions_secret(job.get("secrets")) or job.get("secrets") == "inherit":
            problem(name, f"job {job_id}: passes secrets to a reusable workflow")
        for i, step in enumerate(steps_of(job)):
            label = step_label(step, i)
            if not mentions_secret({k: step.get(k) for k in ("env", "with", "run", "if")}):
                continue
            if name == GATE:
                problem(name, f"job {job_id}, {label!r}: the PR gate references a secret")
            elif not SECRET_STEP.search(step.get("name", "")) or "build" in step.get("name", "").lower():
                problem(name, f"job {job_id}, {label!r}: a secret in a step not named ingest/detect/report")


def runner_labels(job):
    """Every label set the job can ask for (a matrix label expanded to each of its values)."""
    runs_on = job.get("runs-on")
    if isinstance(runs_on, dict):
        runs_on = runs_on.get("labels", []) + ([runs_on["group"]] if "group" in runs_on else [])
    if isinstance(runs_on, str):
        runs_on = [runs_on]
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    sets = [[]]
    for label in runs_on or []:
        m = re.fullmatch(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}", str(label))
        values = matrix.get(m.group(1), []) if m else [label]
        if m and not isinstance(values, list):
            values = [values]
        sets = [s + [str(v)] for s in sets for v in values]
    return sets


def pools(name, workflow):
    """The pool labels (tipbench-*) of every job; each job must name exactly one."""
    found = set()
    for job_id, job in workflow["jobs"].items():
        for labels in runner_labels(job):
            pool = {label for label in labels if label.startswith("tipbench-")}
            if "self-hosted" in labels and len(pool) != 1:
                problem(name, f"job {job_id}: runs-on {labels} names {len(pool)} runner pools "
                              "(a tipbench-* label); exactly one is needed")
            found |= pool
    return found


def check_nightly_store(workflow, text):
    if "results/history.db" in text:
        problem(NIGHTLY, "names results/history.db: in the workspace, which actions/checkout cleans every night")
    for job_id, job in workflow["jobs"].items():
        for i, step in enumerate(steps_of(job)):
            run = str(step.get("run", ""))
            if not re.search(r"tipbench history\b", run) or "--store" in run:
                continue
            if "TIPBENCH_HISTORY_STORE" not in (step.get("env") or {}) or not STORE_DEFAULT.search(run):
                problem(NIGHTLY, f"job {job_id}, {step_label(step, i)!r}: without the secret, `tipbench history` "
                                 "falls back to results/history.db in the workspace; default "
                                 "TIPBENCH_HISTORY_STORE to a file under $HOME (or fail when unset)")


def violations(texts):
    """Every broken rule in the gate, nightly and fleet workflows given as {file name: text}."""
    problems.clear()
    for name in (GATE, NIGHTLY, FLEET):
        if name not in texts:
            problem(name, "missing from ci/github/")
    workflows = {name: yaml.safe_load(text) for name, text in texts.items()}
    for name, workflow in workflows.items():
        check_run_scripts(name, workflow)
        check_pins(name, texts[name])
        check_secrets(name, workflow)
    pool = {name: pools(name, w) for name, w in workflows.items()}
    trusted = pool.get(NIGHTLY, set()) | pool.get(FLEET, set())
    if GATE in pool:
        if not pool[GATE]:
            problem(GATE, "the PR gate names no runner pool of its own (a tipbench-* label)")
        shared = pool[GATE] & trusted
        if shared:
            problem(GATE, f"the PR gate's runner pool {sorted(shared)} also runs the nightly's or the fleet's "
                          "secret-bearing jobs")
    if NIGHTLY in workflows:
        check_nightly_store(workflows[NIGHTLY], texts[NIGHTLY])
    return list(problems), pool.get(GATE, set()), trusted


# Each rule catches its breach: (file, text replaced, replacement, words of the expected complaint).
BREACHES = [
    (GATE, '"origin/$BASE_REF"', '"origin/${{ github.base_ref }}"', "inside `run:`"),
    (GATE, "tipbench-pr]", "tipbench-trusted]", "also runs"),
    (NIGHTLY, "    env:\n      RUN_JSON:",
     "    env:\n      TIPBENCH_HISTORY_STORE: ${{ secrets.TIPBENCH_HISTORY_STORE }}\n      RUN_JSON:", "job-level env"),
    (NIGHTLY, "$HOME/.local/share/tipbench/history.db", "results/history.db", "results/history.db"),
    (FLEET, "- name: Ingest into the history store", "- name: Publish", "not named ingest"),
]


def main():
    source = pathlib.Path(sys.argv[1])
    folder = source / "ci" / "github"
    texts = {name: (folder / name).read_text() for name in (GATE, NIGHTLY, FLEET) if (folder / name).is_file()}
    found, gate_pool, trusted = violations(texts)
    for p in found:
        print(f"FAIL: {p}")
    if found:
        sys.exit(1)
    # A pinned action turned back into a tag is refused too (the first `uses:` of the gate).
    first_pin = re.search(r"@[0-9a-f]{40} # (v[0-9.]+)", texts[GATE])
    breaches = BREACHES + ([(GATE, first_pin.group(0), "@" + first_pin.group(1), "not pinned")] if first_pin else [])
    for name, old, new, complaint in breaches:
        if old not in texts[name]:
            print(f"FAIL: {name} has no {old!r} to break: update BREACHES with the workflow")
            sys.exit(1)
        broken = dict(texts, **{name: texts[name].replace(old, new, 1)})
        if not any(complaint in p for p in violations(broken)[0]):
            print(f"FAIL: {name} with {old!r} -> {new!r} passed the rules (expected: {complaint})")
            sys.exit(1)
    print(f"PASS: {len(texts)} workflows: no expression in a run script, every action pinned by SHA, "
          f"secrets only in ingest/detect/report steps, the PR pool {sorted(gate_pool)} apart from "
          f"{sorted(trusted)}, the nightly's store outside the workspace; {len(breaches)} broken copies refused")


if __name__ == "__main__":
    main()
