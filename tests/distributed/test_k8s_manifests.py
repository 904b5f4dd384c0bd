"""ci/k8s/*.yaml against Kubernetes' own schemas (kubernetes-validate, strict: no unknown field),
and the DDP contract of the Indexed Job: every pod at once, torchrun's node rank from the
completion index, rank 0's pod named through the headless Service, one rank per GPU, a Kueue
queue. A broken copy is refused, so the check is no no-op. No cluster: these files have not run
on a live one (docs/distributed.md).
Usage: test_k8s_manifests.py SOURCE_DIR"""
import copy
import pathlib
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


def main():
    source = pathlib.Path(sys.argv[1])
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
        print(f"PASS: {path.name}: {len(documents)} documents match Kubernetes {KUBERNETES}'s schemas; the DDP "
              "contract holds; broken copies are refused")


if __name__ == "__main__":
    main()
