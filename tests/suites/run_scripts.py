"""Runs Python scripts as `python SCRIPT ARGS...` would, each in its own process, importing torch
once: a forked child per script (its own settings, threads and output), so a test of many recipe
scripts pays torch's import once instead of once per script (tests/suites/test_recipe.cpp).

  python run_scripts.py ARGS_FILE SCRIPT...

ARGS_FILE holds the arguments every script gets, one per line. For each SCRIPT it writes
SCRIPT.out, SCRIPT.err and SCRIPT.code (the exit status, as the process would have had it).
Exit: 0 when every script ran (whatever their codes), 2 on bad arguments.
"""
import os
import runpy
import sys
import traceback

import torch  # noqa: F401  (imported once, before the forks: the point of this runner)


def warm_inductor():
    """Before the forks too: Inductor's check of the CPU's vector ISAs (a Python process per ISA,
    about 16 s on 2 cores, cached per process), which every script that calls torch.compile would
    otherwise pay again."""
    try:
        from torch._inductor import cpu_vec_isa

        cpu_vec_isa.valid_vec_isa_list()
    except Exception:  # a torch without Inductor: the scripts then find out for themselves
        pass


def run_one(script, args):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            with open(script + ".out", "w") as out, open(script + ".err", "w") as err:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = os.fdopen(1, "w", buffering=1)
                sys.stderr = os.fdopen(2, "w", buffering=1)
                sys.argv = [script] + args
                try:
                    runpy.run_path(script, run_name="__main__")
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                except BaseException:
                    traceback.print_exc()
                    code = 1
                sys.stdout.flush()
                sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(script + ".code", "w") as f:
        f.write(f"{code if code >= 0 else 128 - code}\n")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        args = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    if any("torch.compile" in open(script).read() for script in sys.argv[2:]):
        warm_inductor()
    for script in sys.argv[2:]:
        run_one(script, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
