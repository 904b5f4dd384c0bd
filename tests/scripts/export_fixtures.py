"""Models for tests/scripts/test_export_model.py: factories as a user's module would hold them."""
import torch
from torch import nn


class TinyNet(nn.Module):
    """A CNN with BatchNorm and dropout: train and eval differ, so both modes are checked."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(self.drop(x.mean(dim=(2, 3))))


class TupleNet(TinyNet):
    """Returns (logits, features): the logits come first."""

    def forward(self, x):
        features = torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3))
        return self.fc(features), features


class Unscriptable(TinyNet):
    """Python the TorchScript compiler refuses (a generator expression), traceable all the same."""

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(sum(t for t in [x.mean(dim=(2, 3))]))


class FixedBatch(TinyNet):
    """Reshapes to its example's batch of 2: torch.export cannot keep the batch size dynamic."""

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3)).reshape(2, 8))


def tiny_net():
    return TinyNet()


def tuple_net():
    return TupleNet()


def unscriptable():
    return Unscriptable()


def fixed_batch():
    return FixedBatch()


def wrong_width():
    return TinyNet(classes=7)


def not_a_module():
    return 42
