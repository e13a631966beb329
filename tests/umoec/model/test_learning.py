"""The model learns: a few dozen optimizer steps on a repetitive byte stream cut the loss."""
import torch

from tests.umoec.model.helpers import tiny_model

TEXT = b"the quick brown fox jumps over the lazy dog. " * 40


def batches(batch: int, length: int, steps: int):
    data = torch.tensor(list(TEXT), dtype=torch.long)
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - length - 1, (batch,), generator=gen)
        idx = starts[:, None] + torch.arange(length + 1)
        chunk = data[idx]
        yield chunk[:, :-1], chunk[:, 1:]


def test_training_drives_loss_down():
    model = tiny_model("tier1_micro")
    model.train()
    muon, decay, no_decay = model.param_groups()
    opts = [torch.optim.Muon(muon, lr=0.02, momentum=0.95, nesterov=True),
            torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                               {"params": no_decay, "weight_decay": 0.0}], lr=1e-2,
                              betas=(0.9, 0.95))]
    losses = []
    for x, y in batches(8, 64, 40):
        out = model(x, targets=y)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for opt in opts:
            opt.step()
            opt.zero_grad(set_to_none=True)
        model.update_balancing_bias(out)
        losses.append(out.head_losses["final"].item())
    first, last = sum(losses[:3]) / 3, sum(losses[-3:]) / 3
    assert first > 4.5                      # about ln 256 at the start
    assert last < 0.5 * first, losses       # and clearly learning
    model.eval()                            # the codec's rules (MoD threshold, exits, cascade)
    x, y = next(batches(4, 64, 1))
    assert model(x, targets=y).head_losses["final"].item() < 0.6 * first
