"""scripts/export_model.py as a user runs it (a child process with the project's Python): a
scripted model round-trips with its metadata and trains, a tuple output is accepted, a model that
cannot be scripted is refused unless --allow-trace (then the warning is in the file), and bad input
is one line, exit 2, with nothing written and an existing file kept.

    .venv/bin/python tests/scripts/test_export_model.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "export_model.py")


def export(out, factory, *extra):
    args = [sys.executable, SCRIPT, f"export_fixtures:{factory}", "--input", "3,16,16", "--classes", "10",
            "-o", out, *extra]
    return subprocess.run(args, cwd=HERE, capture_output=True, text=True, timeout=300)


def load(path):
    import torch
    files = {"tipbench.json": ""}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.load(path, _extra_files=files)
    return module, json.loads(files["tipbench.json"])


class ExportModel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="export_model_")
        self.out = os.path.join(self.dir, "net.pt")

    def test_a_scripted_model_carries_its_metadata_and_trains(self):
        import torch
        r = export(self.out, "tiny_net", "--name", "tiny")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("wrote", r.stdout)
        module, meta = load(self.out)
        self.assertEqual(meta["how"], "script")
        self.assertEqual((meta["name"], meta["input"], meta["classes"]), ("tiny", [3, 16, 16], 10))
        self.assertEqual(meta["parameters"], sum(p.numel() for p in module.parameters()))
        self.assertNotIn("warning", meta)
        self.assertEqual(int(module.bn.num_batches_tracked), 0)  # the factory's state, not the checks'
        self.assertTrue(torch.equal(module.bn.running_mean, torch.zeros(8)))
        # Trainable as loaded: gradients reach every parameter, BatchNorm's statistics move in
        # train mode and stay in eval mode.
        module.train()
        before = module.bn.running_mean.clone()
        loss = torch.nn.functional.cross_entropy(module(torch.randn(4, 3, 16, 16)), torch.tensor([0, 1, 2, 3]))
        loss.backward()
        self.assertTrue(all(p.grad is not None for p in module.parameters()))
        self.assertFalse(torch.equal(before, module.bn.running_mean))
        module.eval()
        after_train = module.bn.running_mean.clone()
        module(torch.randn(4, 3, 16, 16))
        self.assertTrue(torch.equal(after_train, module.bn.running_mean))

    def test_a_tuple_output_is_accepted_with_the_logits_first(self):
        r = export(self.out, "tuple_net")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_model_that_cannot_be_scripted_needs_allow_trace(self):
        r = export(self.out, "unscriptable")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--allow-trace", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.out))
        r = export(self.out, "unscriptable", "--allow-trace")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, meta = load(self.out)
        self.assertEqual(meta["how"], "trace")
        self.assertIn("training flag", meta["warning"])
        self.assertIn("warning", r.stdout)

    def test_a_pt2_holds_a_train_and_an_eval_program_with_the_factorys_state(self):
        import torch
        from torch.export.pt2_archive._package import load_pt2
        out = os.path.join(self.dir, "net.pt2")
        r = export(out, "tiny_net", "--name", "tiny")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("train and eval programs", r.stdout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            contents = load_pt2(out)
        self.assertEqual(sorted(contents.exported_programs), ["eval", "train"])
        meta = json.loads(contents.extra_files["tipbench.json"])
        self.assertEqual((meta["how"], meta["name"], meta["input"]), ("export", "tiny", [3, 16, 16]))
        for program in contents.exported_programs.values():
            self.assertEqual(int(program.state_dict["bn.num_batches_tracked"]), 0)
        # The training flag is baked in: batch_norm's `training` argument is True in one graph only.
        flags = {mode: [n.args[5] for n in p.graph.nodes if n.target == torch.ops.aten.batch_norm.default]
                 for mode, p in contents.exported_programs.items()}
        self.assertEqual(flags, {"train": [True], "eval": [False]})
        # The batch size is dynamic.
        self.assertEqual(contents.exported_programs["train"].module()(torch.randn(5, 3, 16, 16)).shape, (5, 10))

    def test_a_model_torch_export_refuses_is_exit_two(self):
        r = export(os.path.join(self.dir, "net.pt2"), "fixed_batch")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot export the model in train mode with torch.export", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(os.listdir(self.dir), [])

    def test_bad_input_is_one_line_exit_two_and_keeps_an_existing_file(self):
        with open(self.out, "w") as f:
            f.write("existing")
        cases = {
            "wrong_width": "is (2, 7); want logits",
            "not_a_module": "not a torch.nn.Module",
            "no_such_factory": "no callable",
        }
        for factory, needle in cases.items():
            r = export(self.out, factory)
            self.assertEqual(r.returncode, 2, (factory, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        args = [sys.executable, SCRIPT, "no_such_module:f", "--input", "3,16", "--classes", "10", "-o", self.out]
        r = subprocess.run(args, cwd=HERE, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("C,H,W", r.stderr)
        with open(self.out) as f:
            self.assertEqual(f.read(), "existing")
        self.assertEqual(sorted(os.listdir(self.dir)), ["net.pt"])  # no temporary file left


if __name__ == "__main__":
    unittest.main()
