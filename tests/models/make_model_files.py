#!/usr/bin/env python3
"""Model files for the `run --model-file` tests (tests/support/model_files.h), made as a user makes
them: scripts/export_model.py on the factories below, plus the bad files a user could hand us.

    python make_model_files.py SOURCE_DIR OUT_DIR

Writes into OUT_DIR (then a file `done`):
  tiny.pt, tiny_v2.pt   TinyNet exported as "tiny_net" (v2: other weights, same name)
  other_name.pt         TinyNet exported as "other_net"
  traced.pt             a model only tracing can export (--allow-trace)
  no_metadata.pt        TinyNet saved by torch.jit.save alone, without tipbench's metadata
  wrong_width.pt        metadata says 10 classes, the model returns 7
  int_logits.pt         the forward returns integers
  grayscale.pt          metadata input 1,28,28
  custom_op.pt          calls an op this script defines; a C++ process lacks it
  newer_torch.pt        tiny.pt with its archive version raised past this LibTorch's
  not_torchscript.pt    a text file
  tv_resnet18.pt        torchvision's ResNet-18 as "tv_resnet18", only when torchvision imports
  tiny.pt2              TinyNet exported with --format pt2 as "tiny_pt2" (train and eval programs)
  tiny_pt2_ref.pt       its eager float64 reference: input, labels, eval logits, then one training
                        step's logits and gradients (dropout drawn after torch.manual_seed(123))
  vit.pt2, vit_ref.pt   a 2-layer torchvision ViT as "tiny_vit" (size arithmetic on the dynamic
                        batch, attention) and its reference, only when torchvision imports
  one_program.pt2       TinyNet by torch.export.save alone: one program, no eval graph
  newer_schema.pt2      tiny.pt2 with its graphs' schema version raised to 99.0
  custom_op.pt2         a program calling an op this script defines; a C++ process lacks it
  from_file.pt2         tiny.pt2 whose eval graph first maps victim.txt (aten::from_file, shared) and
                        fills it: the security review's trigger (a model file that writes a file)
  victim.txt            the file from_file.pt2 aims at, "untouched\n" as written here
  far_offset.pt2        tiny.pt2 whose first weight starts 1000 elements past its record's end
  huge_tensor.pt2       tiny.pt2 whose first weight claims 2^31 elements (stride 0) of an 864-byte record
Exit 0, or 1 when a step fails (its output is printed).
"""
import json
import os
import subprocess
import sys
import zipfile

import torch
from torch import nn

# The export test's fixture models (tests/scripts/export_fixtures.py): TinyNet has BatchNorm and
# dropout, so train and eval differ; Unscriptable only traces.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from export_fixtures import TinyNet, Unscriptable  # noqa: E402


class IntLogits(TinyNet):
    def forward(self, x):
        return self.fc(x.mean(dim=(2, 3)).repeat(1, 3)[:, :8]).round().long()


class Gray(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


def tiny_net():
    torch.manual_seed(0)
    return TinyNet()


def tiny_net_v2():
    torch.manual_seed(1)
    return TinyNet()


def unscriptable():
    torch.manual_seed(0)
    return Unscriptable()


def gray():
    torch.manual_seed(0)
    return Gray()


def tv_resnet18():
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18()


def tiny_vit():
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=10)


def eager_reference(factory, path, batch=4, size=32, classes=10):
    """What the .pt2 tests compare with: the eager model in float64, eval logits of the fresh model,
    then one training step (dropout drawn after torch.manual_seed(123)) and its gradients."""
    model = factory().double()
    torch.manual_seed(7)
    x = torch.randn(batch, 3, size, size, dtype=torch.float64)
    labels = torch.randint(classes, (batch,))
    with torch.no_grad():
        eval_logits = model.eval()(x)
    model.train()
    torch.manual_seed(123)
    logits = model(x)
    nn.functional.cross_entropy(logits, labels).backward()
    ref = {"input": x, "labels": labels, "eval_logits": eval_logits, "logits": logits.detach()}
    for name, p in model.named_parameters():
        ref["grad." + name] = p.grad
    torch.save(ref, path)


def replace_in_archive(src, dst, edit):
    """A copy of a zip with edit(name, bytes) applied to every record."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            zout.writestr(item, edit(item.filename, zin.read(item.filename)))


def raise_schema_version(name, data):
    if not name.endswith((".json",)) or "/models/" not in name:
        return data
    model = json.loads(data)
    model["schema_version"] = {"major": 99, "minor": 0}
    return json.dumps(model).encode()


def add_file_writer(victim):
    """An edit putting from_file(victim, shared) and fill_ first in the eval graph."""
    def edit(name, data):
        if not name.endswith("/models/eval.json"):
            return data
        model = json.loads(data)
        arg = lambda name, value: {"name": name, "arg": value, "kind": 1}
        model["graph_module"]["graph"]["nodes"][:0] = [
            {"target": "torch.ops.aten.from_file.default",
             "inputs": [arg("filename", {"as_string": victim}), arg("shared", {"as_bool": True}),
                        arg("size", {"as_int": 4})],
             "outputs": [{"as_tensor": {"name": "mapped"}}], "metadata": {}},
            {"target": "torch.ops.aten.fill_.Scalar",
             "inputs": [arg("self", {"as_tensor": {"name": "mapped"}}), arg("value", {"as_float": 66.0})],
             "outputs": [{"as_tensor": {"name": "filled"}}], "metadata": {}}]
        return json.dumps(model).encode()
    return edit


def edit_first_weight(meta_edit):
    """An edit of the first weight's tensor_meta in both programs' weights configs."""
    def edit(name, data):
        if not name.endswith("_weights_config.json"):
            return data
        config = json.loads(data)
        meta_edit(next(iter(config["config"].values()))["tensor_meta"])
        return json.dumps(config).encode()
    return edit


def far_offset(meta):
    meta["storage_offset"] = {"as_int": 1000}


def huge_tensor(meta):
    meta["sizes"] = [{"as_int": 2 ** 31}]
    meta["strides"] = [{"as_int": 0}]


def export(source_dir, out_dir, factory, out, *args):
    cmd = [sys.executable, os.path.join(source_dir, "scripts", "export_model.py"), f"make_model_files:{factory}",
           "-o", os.path.join(out_dir, out), *args]
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run(cmd, cwd=here, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}{done.stderr}")


def save(module, path, metadata=None):
    extra = {"tipbench.json": json.dumps(metadata)} if metadata else {}
    torch.jit.save(torch.jit.script(module), path, _extra_files=extra)


def metadata(name, shape, classes):
    return {"format": "tipbench model file 1", "name": name, "input": shape, "classes": classes, "how": "script",
            "factory": "make_model_files", "torch_version": torch.__version__, "parameters": 0}


def raise_archive_version(src, dst):
    """A copy of a TorchScript zip whose `version` record is far past any LibTorch's."""
    replace_in_archive(src, dst, lambda name, data: b"1000\n" if name.endswith(("/version", "/.data/version")) else data)


def main(source_dir, out_dir):
    import warnings
    warnings.simplefilter("ignore")  # TorchScript's deprecation warnings
    os.makedirs(out_dir, exist_ok=True)
    j = lambda name: os.path.join(out_dir, name)
    export(source_dir, out_dir, "tiny_net", "tiny.pt", "--input", "3,32,32", "--classes", "10", "--name", "tiny_net")
    export(source_dir, out_dir, "tiny_net_v2", "tiny_v2.pt", "--input", "3,32,32", "--classes", "10",
           "--name", "tiny_net")
    export(source_dir, out_dir, "tiny_net", "other_name.pt", "--input", "3,32,32", "--classes", "10",
           "--name", "other_net")
    export(source_dir, out_dir, "unscriptable", "traced.pt", "--input", "3,32,32", "--classes", "10",
           "--name", "traced_net", "--allow-trace")
    save(tiny_net(), j("no_metadata.pt"))
    save(TinyNet(classes=7), j("wrong_width.pt"), metadata("wrong_width", [3, 32, 32], 10))
    save(IntLogits(), j("int_logits.pt"), metadata("int_logits", [3, 32, 32], 10))
    save(gray(), j("grayscale.pt"), metadata("grayscale", [1, 28, 28], 10))

    torch.library.define("tipbench_test::twice", "(Tensor x) -> Tensor")
    torch.library.impl("tipbench_test::twice", "CompositeExplicitAutograd")(lambda x: x * 2)

    class CustomOp(TinyNet):
        def forward(self, x):
            x = torch.relu(self.bn(self.conv(x)))
            return torch.ops.tipbench_test.twice(self.fc(self.drop(x.mean(dim=(2, 3)))))

    save(CustomOp(), j("custom_op.pt"), metadata("custom_op", [3, 32, 32], 10))
    raise_archive_version(j("tiny.pt"), j("newer_torch.pt"))

    export(source_dir, out_dir, "tiny_net", "tiny.pt2", "--input", "3,32,32", "--classes", "10", "--name", "tiny_pt2")
    eager_reference(tiny_net, j("tiny_pt2_ref.pt"))
    x = torch.randn(2, 3, 32, 32)
    torch.export.save(torch.export.export(tiny_net().train(), (x,)), j("one_program.pt2"))
    replace_in_archive(j("tiny.pt2"), j("newer_schema.pt2"), raise_schema_version)
    torch.library.register_fake("tipbench_test::twice")(lambda x: torch.empty_like(x))
    from torch.export.pt2_archive._package import package_pt2
    custom = CustomOp()
    package_pt2(j("custom_op.pt2"), exported_programs={mode: torch.export.export(getattr(custom, mode)(), (x,))
                                                       for mode in ("train", "eval")},
                extra_files={"tipbench.json": json.dumps(metadata("custom_op_pt2", [3, 32, 32], 10))})
    with open(j("victim.txt"), "w") as f:
        f.write("untouched\n")
    replace_in_archive(j("tiny.pt2"), j("from_file.pt2"), add_file_writer(os.path.abspath(j("victim.txt"))))
    replace_in_archive(j("tiny.pt2"), j("far_offset.pt2"), edit_first_weight(far_offset))
    replace_in_archive(j("tiny.pt2"), j("huge_tensor.pt2"), edit_first_weight(huge_tensor))
    with open(j("not_torchscript.pt"), "w") as f:
        f.write("this is not a TorchScript file\n")
    try:
        import torchvision  # noqa: F401
    except ImportError:
        pass
    else:
        export(source_dir, out_dir, "tv_resnet18", "tv_resnet18.pt", "--input", "3,224,224", "--classes", "1000",
               "--name", "tv_resnet18")
        export(source_dir, out_dir, "tiny_vit", "vit.pt2", "--input", "3,32,32", "--classes", "10", "--name", "tiny_vit")
        eager_reference(tiny_vit, j("vit_ref.pt"), batch=3)
    open(j("done"), "w").close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
