"""tipbench's Python worker: training steps that exist only in Python (torch.compile), and
Python eager beside tipbench's C++ step, run for the C++ harness over a pipe (docs/python-worker.md).

The harness starts `python -m tipbench_worker` with this folder's parent on PYTHONPATH and drives
it with one JSON object per line on stdin; the worker answers each with one JSON line on its
original stdout (everything else it or a library prints goes to stderr, the worker's log).
"""

PROTOCOL = 2  # 2: the set_aside op
