#!/usr/bin/env python3
"""Export a user's model for `tipbench run --model-file`: a TorchScript file or a torch.export archive.

    .venv/bin/python scripts/export_model.py MODULE:FACTORY --input 3,224,224 --classes 1000 -o net.pt
    .venv/bin/python scripts/export_model.py MODULE:FACTORY --input 3,224,224 --classes 1000 -o net.pt2

MODULE is imported (the current folder is on the path), FACTORY is called with no arguments and
must return a torch.nn.Module whose forward(images [N, C, H, W]) returns logits [N, K] (or a
tuple whose first element is them). The model is scripted (torch.jit.script) or, with --format
pt2 (the default for a .pt2 file), exported with torch.export.export twice, in train and in eval
mode (the export bakes the training flag in), with a dynamic batch size; its outputs are checked
against the eager model's in train and in eval mode, and the file carries in its extra file
"tipbench.json" the input shape, the class count, a name and how it was made.

A model that cannot be scripted is refused unless --allow-trace: tracing bakes the training flag
in (BatchNorm keeps updating its statistics after eval()), so a traced file records that warning.

Exit: 0 written; 2 bad input (import, not a module, cannot script, wrong outputs, scripted and
eager disagree), nothing written; 4 the file could not be written (an existing one is kept).
"""
import argparse
import contextlib
import importlib
import json
import os
import sys
import tempfile
import warnings

EXIT_OK, EXIT_USAGE, EXIT_WRITE = 0, 2, 4
METADATA_FILE = "tipbench.json"
TRACE_WARNING = ("traced, not scripted: the training flag is baked in, so BatchNorm and dropout behave in eval() "
                 "as they did when traced (train mode)")


class BadInput(Exception):
    """An input error: one line for the user, exit 2."""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="export_model.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("factory", metavar="MODULE:FACTORY", help="e.g. mypkg.models:build_net")
    p.add_argument("--input", required=True, metavar="C,H,W", help="one sample's shape, e.g. 3,224,224")
    p.add_argument("--classes", required=True, type=int, metavar="K", help="the logits' width")
    p.add_argument("-o", "--out", required=True, metavar="FILE", help="the file to write (FILE.pt or FILE.pt2)")
    p.add_argument("--format", choices=("script", "pt2"),
                   help="script: TorchScript (torch.jit.script); pt2: torch.export's train and eval programs "
                        "(default: pt2 for a FILE ending in .pt2, else script)")
    p.add_argument("--name", help="the model's name in results (default: FACTORY)")
    p.add_argument("--batch", type=int, default=2, help="batch of the output checks (default 2)")
    p.add_argument("--allow-trace", action="store_true",
                   help="trace a model that cannot be scripted, recording the warning in the file")
    return p.parse_args(argv)


def input_shape(text):
    try:
        shape = [int(x) for x in text.split(",")]
    except ValueError:
        raise BadInput(f"--input {text}: want C,H,W as whole numbers, e.g. 3,224,224") from None
    if len(shape) != 3 or min(shape) < 1:
        raise BadInput(f"--input {text}: want three positive sizes C,H,W")
    return shape


def load_factory(spec):
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise BadInput(f"{spec}: want MODULE:FACTORY, e.g. mypkg.models:build_net")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # the user's module: any error is theirs to fix
        raise BadInput(f"cannot import {module_name}: {type(e).__name__}: {first_line(e)}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise BadInput(f"{module_name} has no callable {attr}")
    return factory


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def logits_of(output):
    return output[0] if isinstance(output, (tuple, list)) else output


def check_outputs(torch, eager, exported, x, classes, how):
    """Eager and exported outputs agree in train and eval mode, with the right shape."""
    for mode in ("train", "eval"):
        getattr(eager, mode)()
        getattr(exported, mode)()
        check_agreement(torch, eager, exported, x, classes, mode, f"the {how} model")


def check_agreement(torch, eager, exported, x, classes, mode, what):
    """One forward of each on x (both already in `mode`): logits of the right shape, and equal."""
    with torch.no_grad():
        torch.manual_seed(0)  # the same dropout draws on both sides
        want = logits_of(eager(x))
        torch.manual_seed(0)
        got = logits_of(exported(x))
    check_logits(torch, want, x, classes, mode)
    try:
        torch.testing.assert_close(got, want)
    except AssertionError as e:
        raise BadInput(f"{what} and the eager model disagree in {mode} mode: {first_line(e)}") from None


def export(args):
    shape = input_shape(args.input)
    if args.classes < 1:
        raise BadInput(f"--classes {args.classes}: want a positive count")
    if args.batch < 2:
        raise BadInput("--batch must be at least 2 (BatchNorm in train mode needs more than one sample)")
    import torch  # late: --help and argument errors need no torch

    factory = load_factory(args.factory)
    try:
        model = factory()
    except Exception as e:
        raise BadInput(f"{args.factory}() raised {type(e).__name__}: {first_line(e)}") from None
    if not isinstance(model, torch.nn.Module):
        raise BadInput(f"{args.factory}() returned {type(model).__name__}, not a torch.nn.Module")

    torch.manual_seed(0)
    x = torch.randn(args.batch, *shape)
    name = args.name or args.factory.partition(":")[2]
    # The checks run the model in train mode, which moves BatchNorm's statistics in the tensors the
    # exported module shares with it: the file gets the factory's state, taken here.
    factory_state = {k: v.clone() for k, v in model.state_dict().items()}
    if (args.format or ("pt2" if args.out.endswith(".pt2") else "script")) == "pt2":
        programs = export_programs(torch, model, x, args.classes)
        for program in programs.values():
            restore(torch, program.state_dict, factory_state)
        metadata = file_metadata(torch, args, name, shape, model, "export")
        write_atomically(args.out, lambda tmp: save_programs(torch, programs, metadata, tmp))
        print(f"wrote {args.out}: {name} (exported: train and eval programs), input {shape}, {args.classes} classes, "
              f"{metadata['parameters']:,} parameters")
        return
    how, warning = "script", None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch 2.11 deprecates TorchScript
        try:
            exported = torch.jit.script(model)
        except Exception as e:
            if not args.allow_trace:
                raise BadInput(f"cannot script the model ({type(e).__name__}: {first_line(e)}); fix it for "
                               "torch.jit.script, or pass --allow-trace (tracing bakes the training flag in)") from None
            model.train()
            exported = torch.jit.trace(model, (x,), check_trace=False)
            how, warning = "trace", TRACE_WARNING
    if how == "script":
        check_outputs(torch, model, exported, x, args.classes, how)
    else:  # a traced model runs as traced whatever its mode: compare it in the mode it was traced in
        model.train()
        with torch.no_grad():
            torch.manual_seed(0)
            want = logits_of(model(x))
            torch.manual_seed(0)
            got = logits_of(exported(x))
        if want.dim() != 2 or want.shape != (x.shape[0], args.classes):
            raise BadInput(f"the model's output is {tuple(want.shape)}; want logits [{x.shape[0]}, {args.classes}]")
        torch.testing.assert_close(got, want)

    restore(torch, exported.state_dict(), factory_state)
    metadata = file_metadata(torch, args, name, shape, model, how)
    if warning:
        metadata["warning"] = warning
    write_atomically(args.out, lambda tmp: save_script(torch, exported, metadata, tmp))
    print(f"wrote {args.out}: {metadata['name']} ({how}ed), input {shape}, {args.classes} classes, "
          f"{metadata['parameters']:,} parameters" + (f"; warning: {warning}" if warning else ""))


def restore(torch, state, saved):
    """Copies the saved values into the tensors of `state` in place (where the file reads them)."""
    with torch.no_grad():
        for key, value in saved.items():
            if key in state:
                state[key].copy_(value)


def file_metadata(torch, args, name, shape, model, how):
    return {
        "format": "tipbench model file 1",
        "name": name,
        "input": shape,
        "classes": args.classes,
        "how": how,
        "factory": args.factory,
        "torch_version": torch.__version__,
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def export_programs(torch, model, x, classes):
    """torch.export's training IR in train and in eval mode, the batch size dynamic (the harness
    trains at many batch sizes), height and width too where the model allows it (Dim.AUTO: the
    preallocate suite grows its inputs), each checked against the eager model in its mode."""
    dims = {0: torch.export.Dim("batch", min=1), 2: torch.export.Dim.AUTO, 3: torch.export.Dim.AUTO}
    programs = {}
    for mode in ("train", "eval"):
        getattr(model, mode)()
        try:
            programs[mode] = torch.export.export(model, (x,), dynamic_shapes=(dims,))
        except Exception as e:
            raise BadInput(f"cannot export the model in {mode} mode with torch.export ({type(e).__name__}: "
                           f"{first_line(e)}); fix it for torch.export.export with a dynamic batch size, "
                           "or export TorchScript (-o FILE.pt)") from None
    for mode, program in programs.items():
        module = program.module()
        for batch_size in (x.shape[0], x.shape[0] + 1):  # the batch size is dynamic: another one runs too
            xb = torch.randn(batch_size, *x.shape[1:], generator=torch.Generator().manual_seed(batch_size))
            getattr(model, mode)()  # the program's mode is its own: baked in at export
            check_agreement(torch, model, module, xb, classes, mode, f"the exported program at batch {batch_size}")
    return programs


def check_logits(torch, want, x, classes, mode):
    if not isinstance(want, torch.Tensor) or want.dim() != 2 or want.shape != (x.shape[0], classes):
        shape = tuple(want.shape) if isinstance(want, torch.Tensor) else type(want).__name__
        raise BadInput(f"the model's output in {mode} mode is {shape}; want logits [N, K] = "
                       f"[{x.shape[0]}, {classes}] (or a tuple whose first element is them)")
    if not want.is_floating_point():
        raise BadInput(f"the model's logits are {want.dtype}; want a floating-point type")


def save_script(torch, module, metadata, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(module, path, _extra_files={METADATA_FILE: json.dumps(metadata, indent=1)})


def save_programs(torch, programs, metadata, path):
    # torch.export.save writes one program through package_pt2; two need it directly (the archive
    # layout models/src/exported_archive.cpp reads).
    from torch.export.pt2_archive._package import package_pt2
    package_pt2(path, exported_programs=programs, extra_files={METADATA_FILE: json.dumps(metadata, indent=1)})


def write_atomically(path, save):
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=os.path.splitext(path)[1] or ".pt", dir=folder)
        os.close(fd)
    except OSError as e:
        raise OSError(f"cannot write {path}: {e.strerror}") from None
    try:
        save(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the model from the team's CI user
        os.replace(tmp, path)
    except Exception:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        export(args)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"error: {first_line(e)}", file=sys.stderr)
        return EXIT_WRITE
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
