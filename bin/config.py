"""python -m bin.config check|show|format|docs — validate, print, re-comment configs; write docs.

  check FILE [--set K=V ...]   validate; print errors (exit 2) or a summary and warnings
  show FILE [--set K=V ...]    print the validated config as commented YAML
  format FILE [FILE ...]       rewrite files with the canonical comment above every key
  docs [--out docs/config.md]  regenerate the config reference from the schema
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import add_common, run_main
from umoec.config.docs import render
from umoec.run.atomic import atomic_write_text

DOCS = Path(__file__).resolve().parents[1] / "docs" / "config.md"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.config", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("check", "show", "format", "docs"))
    p.add_argument("files", nargs="*", type=Path)
    p.add_argument("--out", type=Path, default=DOCS)
    add_common(p)
    a = p.parse_args(argv)
    if a.command == "docs":
        atomic_write_text(a.out, render())
        print(f"wrote {a.out}")
        return 0
    if not a.files:
        p.error(f"{a.command} needs a config FILE")
    for path in a.files:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        cfg = C.load(path, a.overrides)
        if a.command == "check":
            t = cfg.training
            print(f"{path}: ok (tier {cfg.tier}, {cfg.model.n_blocks} blocks x d_model "
                  f"{cfg.model.d_model}, {t.steps} steps of {t.batch_size}x{t.seq_len} bytes)")
            for w in C.warnings(cfg):
                print(f"  warning: {w.message}")
        elif a.command == "show":
            sys.stdout.write(C.dumps(cfg, C.leading_comment(text)))
        else:
            C.save(cfg, path, C.leading_comment(text))
            print(f"formatted {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "config"))
