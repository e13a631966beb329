"""Trainer-test helpers: a tiny config (the dataset is the session-wide `small_data` fixture)."""

# A tiny member of the tier1 family: every component on, seconds per run on 2 cores.
TINY = ["model.d_model=32", "model.n_blocks=3", "model.d_state=4", "model.context_len=64",
        "moe.n_routed=4", "moe.d_ff=32", "training.seq_len=64", "training.batch_size=4",
        "training.warmup_steps=2", "cascade.d_hidden=8", "logging.log_every=2",
        "logging.eval_every=6", "logging.save_every=4"]


def tiny_args(data, steps: int, *extra: str) -> list[str]:
    sets = TINY + [f"training.steps={steps}", f"data.path={data}", *extra]
    return ["--config", "configs/tier1_micro.yaml", "--quiet"] + [a for s in sets for a in ("--set", s)]
