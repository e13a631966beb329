"""Run every benchmark module in bench/ (or the ones named on the command line)."""
import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    names = argv or sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                           if m.name.startswith("bench_"))
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        importlib.import_module(f"bench.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
