"""ci/k8s/*.yaml against Kubernetes' own schemas (kubernetes-validate, strict: no unknown field),
and the DDP contract of the Indexed Job: every pod at once, torchrun's node rank from the
completion index, rank 0's pod named through the headless Service, one rank per GPU, a Kueue
queue. Then the hardening (issue 48): the Job's pods run as the image's non-root user with no
privilege escalation, no capability, RuntimeDefault seccomp and a read-only root filesystem (the
paths they write on volumes); the image is a release tag or a digest, never :latest; a
NetworkPolicy lets only the Job's own pods reach the rendezvous port. And ci/container/Containerfile:
a non-root USER whose UID the Job names, the base image by digest (NAME@sha256:..., or an ARG the
build refuses without one), pip with --require-hashes from a lock holding every requirements.txt
pin. Broken copies are refused, so the checks are no no-ops. No cluster and no image build: these
files have not run (docs/distributed.md).
Usage: test_k8s_manifests.py SOURCE_DIR"""
import copy
import pathlib
import re
import sys

import kubernetes_validate
import yaml

KUBERNETES = "1.33.0"  # a release current clusters run; the package bundles its schemas


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def schema_errors(document):
    try:
        kubernetes_validate.validate(document, KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as e:
        return str(e).splitlines()[0]
    return None


def flag(args, name):
    for a in args:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    fail(f"torchrun has no --{name}=... in {args}")


def check_ddp_contract(documents):
    services = [d for d in documents if d["kind"] == "Service"]
    jobs = [d for d in documents if d["kind"] == "Job"]
    if len(services) != 1 or len(jobs) != 1:
        fail(f"expected one Service and one Job, got {[d['kind'] for d in documents]}")
    service, job = services[0], jobs[0]
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    if spec.get("completionMode") != "Indexed":
        fail("the Job is not Indexed: the pods would have no node rank")
    if spec["completions"] != spec["parallelism"]:
        fail("completions != parallelism: DDP needs every node at once")
    if service["spec"].get("clusterIP") != "None" or pod.get("subdomain") != service["metadata"]["name"]:
        fail("rank 0's pod is not named through a headless Service of the pods' subdomain")
    if "kueue.x-k8s.io/queue-name" not in job["metadata"].get("labels", {}) or not spec.get("suspend"):
        fail("no Kueue queue label, or the Job does not start suspended for Kueue to admit")
    container = pod["containers"][0]
    args = container["args"]
    if container["command"] != ["torchrun"]:
        fail(f"the pods do not run torchrun: {container['command']}")
    if flag(args, "node-rank") != "$(JOB_COMPLETION_INDEX)":
        fail("torchrun's node rank is not the completion index")
    if int(flag(args, "nnodes")) != spec["completions"]:
        fail("torchrun's --nnodes differs from the Job's completions")
    master = f"{job['metadata']['name']}-0.{service['metadata']['name']}"
    if flag(args, "master-addr") != master:
        fail(f"--master-addr is not pod 0 ({master})")
    gpus = int(container["resources"]["limits"]["nvidia.com/gpu"])
    if int(flag(args, "nproc-per-node")) != gpus:
        fail(f"--nproc-per-node {flag(args, 'nproc-per-node')} with {gpus} GPUs per pod: NCCL needs one GPU per rank")
    if "--suite=data_parallel" not in args:
        fail("the pods do not run the data_parallel suite")
    env = {e["name"]: e for e in container["env"]}
    if "job-completion-index" not in env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]:
        fail("JOB_COMPLETION_INDEX does not come from the pod's completion-index annotation")


def pod_labels(job):
    """The labels every pod of the Job carries: its template's and the Job controller's."""
    name = job["metadata"]["name"]
    labels = dict(job["spec"]["template"].get("metadata", {}).get("labels", {}))
    labels.update({"job-name": name, "batch.kubernetes.io/job-name": name})
    return labels


def selects_job_pods(selector, job):
    """A podSelector that names labels and matches only what the Job's pods carry."""
    match = (selector or {}).get("matchLabels") or {}
    if not match or (selector or {}).get("matchExpressions"):
        return False
    labels = pod_labels(job)
    return all(labels.get(k) == v for k, v in match.items())


def image_problem(image, version):
    """None for a pinned image: a digest, or a tag that is this release's version."""
    if re.search(r"@sha256:[0-9a-f]{64}$", image):
        return None
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return f"image {image!r} has no tag: it means :latest"
    if tag == "latest":
        return f"image {image!r} is :latest, which moves under the Job"
    if tag != version:
        return f"image {image!r}: the tag is not the release's version {version} (CMakeLists.txt)"
    return None


def security_problems(documents, image_uid, version):
    """What breaks the Job's hardening, [] when it holds."""
    problems = []
    job = next(d for d in documents if d["kind"] == "Job")
    pod = job["spec"]["template"]["spec"]
    pod_sc = pod.get("securityContext") or {}
    for container in pod.get("containers", []) + pod.get("initContainers", []):
        name = container["name"]
        sc = container.get("securityContext") or {}
        merged = {**pod_sc, **sc}
        if merged.get("runAsNonRoot") is not True:
            problems.append(f"{name}: runAsNonRoot is not true")
        if merged.get("runAsUser") != image_uid:
            problems.append(f"{name}: runAsUser {merged.get('runAsUser')} is not the image's user {image_uid}")
        if (merged.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problems.append(f"{name}: no seccompProfile RuntimeDefault")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation is not false")
        if sc.get("privileged"):
            problems.append(f"{name}: privileged")
        if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []) or (sc.get("capabilities") or {}).get("add"):
            problems.append(f"{name}: capabilities do not drop ALL (or add some)")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{name}: readOnlyRootFilesystem is not true")
        mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
        outs = [a.split("=", 1)[1] for a in container.get("args", []) if a.startswith("--out=")]
        for path in ["/tmp"] + [str(pathlib.PurePosixPath(o).parent) for o in outs]:
            if path not in mounts:
                problems.append(f"{name}: {path} is written but is no volume (a read-only root filesystem needs one)")
        problem = image_problem(container["image"], version)
        if problem:
            problems.append(f"{name}: {problem}")
    port = 29500
    for c in pod["containers"]:
        for a in c.get("args", []):
            if a.startswith("--master-port="):
                port = int(a.split("=", 1)[1])
    policies = [d for d in documents if d["kind"] == "NetworkPolicy"
                and selects_job_pods(d["spec"].get("podSelector"), job)]
    if not policies:
        problems.append("no NetworkPolicy selects the Job's pods: their rendezvous port is open to every pod")
    for policy in policies:
        spec = policy["spec"]
        if "Ingress" not in spec.get("policyTypes", []):
            problems.append(f"NetworkPolicy {policy['metadata']['name']}: no Ingress in policyTypes")
        admits_port = False
        for rule in spec.get("ingress", []):
            peers = rule.get("from") or []
            if not peers or not all(set(p) == {"podSelector"} and selects_job_pods(p["podSelector"], job)
                                    for p in peers):
                problems.append(f"NetworkPolicy {policy['metadata']['name']}: an ingress rule admits peers "
                                "other than the Job's pods")
            ports = rule.get("ports")
            if not ports or any(p.get("port") in (port, "rendezvous") for p in ports):
                admits_port = True
        if not admits_port:
            problems.append(f"NetworkPolicy {policy['metadata']['name']}: the ranks cannot reach port {port}")
    return problems


def instructions(containerfile):
    """(INSTRUCTION, arguments) of a Containerfile, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for line in containerfile.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    if current:
        joined.append(current)
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
            for line in (j.strip() for j in joined)]


def requirement_pins(text):
    """{normalized name: version} of the `name==version` lines (extras and hash options dropped)."""
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)(\[[^]]*\])?==([^ ;\\]+)", line.strip())
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3)
    return pins


def containerfile_problems(containerfile, source):
    """What breaks the image's hardening; (problems, the UID the image runs as)."""
    problems, steps = [], instructions(containerfile)
    args_before_from = {}
    for i, (op, rest) in enumerate(steps):
        if op == "ARG":
            args_before_from.setdefault(rest.split("=", 1)[0], (i, rest))
        if op != "FROM":
            continue
        image = rest.split()[0]
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", image)
        if m:
            arg = m.group(1)
            _, declared = args_before_from.get(arg, (None, ""))
            if "=" in declared and not re.search(r"@sha256:[0-9a-f]{64}$", declared):
                problems.append(f"FROM ${arg}: its default {declared.split('=', 1)[1]!r} has no digest")
            checked = any(o == "RUN" and f"${arg}" in r.replace("{", "").replace("}", "") and "@sha256:" in r
                          and "exit 1" in r for o, r in steps[i + 1:])
            if not checked:
                problems.append(f"FROM ${arg}: no RUN after it refuses a {arg} without @sha256:")
        elif not re.search(r"@sha256:[0-9a-f]{64}$", image):
            problems.append(f"FROM {image}: the base image is not pinned by digest")
    users = [rest.strip() for op, rest in steps if op == "USER"]
    uid = None
    if not users:
        problems.append("no USER: the image runs as root")
    else:
        user = users[-1].split(":")[0]
        if user in ("root", "0"):
            problems.append(f"USER {users[-1]}: root")
        elif user.isdigit():
            uid = int(user)
        else:
            m = re.search(rf"useradd\b[^&;]*--uid\s+(\d+)[^&;]*\s{re.escape(user)}\b", containerfile)
            uid = int(m.group(1)) if m else None
            if uid is None:
                problems.append(f"USER {user}: no `useradd --uid N {user}` gives it a fixed UID")
        last_user = max(i for i, (op, _) in enumerate(steps) if op == "USER")
        if any(op in ("ENTRYPOINT", "CMD") for op, _ in steps[:last_user]):
            problems.append("USER comes after ENTRYPOINT/CMD")
    installs = [rest for op, rest in steps if op == "RUN" and re.search(r"pip3?\b[^&;|]*\binstall\b", rest)]
    if not installs:
        problems.append("no pip install")
    for rest in installs:
        if "--require-hashes" not in rest:
            problems.append(f"pip install without --require-hashes: {' '.join(rest.split())[:120]}")
    copied = {pathlib.PurePosixPath(r.split()[-1]).name: r.split()[0] for op, r in steps if op == "COPY"}
    for rest in installs:
        for target in re.findall(r"-r\s+(\S+)", rest):
            lock = copied.get(pathlib.PurePosixPath(target).name)
            if lock is None or not (source / lock).is_file():
                problems.append(f"pip -r {target}: not a file COPY'd from the checkout")
                continue
            text = (source / lock).read_text()
            blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
            unhashed = [b.split()[0] for b in blocks if re.match(r"[A-Za-z0-9]", b) and "--hash=sha256:" not in b]
            if unhashed:
                problems.append(f"{lock}: no hash for {unhashed}")
            locked = requirement_pins(text)
            for name, version in requirement_pins((source / "requirements.txt").read_text()).items():
                if locked.get(name) != version:
                    problems.append(f"{lock}: {name} is {locked.get(name)}, requirements.txt pins {version} "
                                    "(regenerate the lock: the command is at its top)")
    return problems, uid


def project_version(source):
    m = re.search(r"project\(\s*tipbench\s+VERSION\s+([0-9.]+)", (source / "CMakeLists.txt").read_text())
    return m.group(1) if m else None


def main():
    source = pathlib.Path(sys.argv[1])
    containerfile = (source / "ci" / "container" / "Containerfile").read_text()
    problems, image_uid = containerfile_problems(containerfile, source)
    for p in problems:
        print(f"FAIL: Containerfile: {p}")
    # Each image rule catches its breach.
    for old, new in [("USER 10001:10001", "USER root"), ("--require-hashes ", ""),
                     ("FROM ${BASE_IMAGE}", "FROM docker.io/library/ubuntu:24.04")]:
        if old not in containerfile:
            if not problems:
                fail(f"the Containerfile has no {old!r} to break: update this test with it")
            continue
        if not containerfile_problems(containerfile.replace(old, new), source)[0]:
            fail(f"a Containerfile with {old!r} -> {new!r} passed the checks")
    version = project_version(source)
    files = sorted((source / "ci" / "k8s").glob("*.yaml"))
    if not files:
        fail("no manifests in ci/k8s/")
    for path in files:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
        for d in documents:
            error = schema_errors(d)
            if error:
                fail(f"{path.name}: {d['kind']} {d['metadata']['name']}: {error}")
        check_ddp_contract(documents)
        broken = copy.deepcopy(next(d for d in documents if d["kind"] == "Job"))
        broken["spec"]["template"]["spec"]["containers"][0]["resource"] = {}  # a typo'd field
        if schema_errors(broken) is None:
            fail("a Job with an unknown field passed the schema check")
        broken = copy.deepcopy(next(d for d in documents if d["kind"] == "Job"))
        broken["spec"]["completions"] = "two"
        if schema_errors(broken) is None:
            fail("a Job with completions: 'two' passed the schema check")
        found = security_problems(documents, image_uid, version)
        for p in found:
            print(f"FAIL: {path.name}: {p}")
        problems += found
        if not found:
            job_at = next(i for i, d in enumerate(documents) if d["kind"] == "Job")
            policy_at = next(i for i, d in enumerate(documents) if d["kind"] == "NetworkPolicy")

            def breach(where, change):
                broken = copy.deepcopy(documents)
                change(broken[where])
                if not security_problems(broken, image_uid, version):
                    fail(f"{path.name}: a broken copy ({change.__doc__}) passed the hardening checks")

            def pod(d):
                return d["spec"]["template"]["spec"]

            def latest(d):
                "image :latest"
                pod(d)["containers"][0]["image"] = pod(d)["containers"][0]["image"].rsplit(":", 1)[0] + ":latest"

            def root(d):
                "runAsNonRoot false"
                pod(d)["securityContext"]["runAsNonRoot"] = False

            def writable(d):
                "a writable root filesystem"
                pod(d)["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = False

            def escalate(d):
                "allowPrivilegeEscalation dropped"
                pod(d)["containers"][0]["securityContext"].pop("allowPrivilegeEscalation")

            def open_to_all(d):
                "an ingress rule from any pod"
                d["spec"]["ingress"].append({"ports": [{"port": 29500}]})

            def other_pods(d):
                "a policy selecting other pods"
                d["spec"]["podSelector"] = {"matchLabels": {"app": "something-else"}}

            for where, change in [(job_at, latest), (job_at, root), (job_at, writable), (job_at, escalate),
                                  (policy_at, open_to_all), (policy_at, other_pods)]:
                breach(where, change)
            print(f"PASS: {path.name}: {len(documents)} documents match Kubernetes {KUBERNETES}'s schemas; the DDP "
                  "contract holds; non-root, read-only, no capability, seccomp, a pinned image, 29500 only from "
                  "the Job's pods; broken copies are refused")
    if problems:
        sys.exit(1)
    print(f"PASS: Containerfile: USER {image_uid} (not root), the base by digest, pip --require-hashes from a lock "
          "holding requirements.txt's pins; broken copies are refused")


if __name__ == "__main__":
    main()
