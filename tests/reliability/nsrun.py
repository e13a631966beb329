"""Run a command inside a private mount namespace with a small or read-only folder (tests only).

    unshare -m --propagation private -- python -m tests.reliability.nsrun OPTIONS -- CMD ...

--tmpfs DIR SIZE     mount a tmpfs of SIZE (e.g. 2m) on DIR: writes past it fail with ENOSPC
--ro DIR             bind DIR on itself read-only before CMD starts: writes fail with EROFS
--ro-when PATH DIR   bind DIR on itself, start CMD, remount it read-only once PATH exists
                     (a disk that turns read-only mid-run, as ext4's errors=remount-ro does)
--copy-out DIR DEST  after CMD ends, copy DIR (e.g. the tmpfs, invisible outside) to DEST
--probe              check that mounting works here; exit 0 if so

The mounts vanish with the namespace; nothing outside it changes. Exit status: CMD's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True)


def bind_ro(folder: str) -> None:
    mount("--bind", folder, folder)
    mount("-o", "remount,bind,ro", folder)


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        argv, cmd = argv[:cut], argv[cut + 1:]
    else:
        cmd = []
    p = argparse.ArgumentParser()
    p.add_argument("--probe", action="store_true")
    p.add_argument("--tmpfs", nargs=2, metavar=("DIR", "SIZE"))
    p.add_argument("--ro")
    p.add_argument("--ro-when", nargs=2, metavar=("PATH", "DIR"))
    p.add_argument("--copy-out", nargs=2, metavar=("DIR", "DEST"))
    a = p.parse_args(argv)
    if a.probe:
        d = tempfile.mkdtemp()
        try:
            mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", d)
            with open(os.path.join(d, "x"), "w") as fh:
                fh.write("x")
            mount("-o", "remount,ro", d)
            try:
                open(os.path.join(d, "y"), "w").close()
            except OSError:
                return 0
            print("nsrun: a read-only remount still accepted a write", file=sys.stderr)
            return 1
        finally:
            subprocess.run(["umount", d], capture_output=True)
            os.rmdir(d)
    if a.tmpfs:
        os.makedirs(a.tmpfs[0], exist_ok=True)
        mount("-t", "tmpfs", "-o", f"size={a.tmpfs[1]},mode=0755", "tmpfs", a.tmpfs[0])
    if a.ro:
        bind_ro(a.ro)
    if a.ro_when:
        mount("--bind", a.ro_when[1], a.ro_when[1])
    proc = subprocess.Popen(cmd)
    if a.ro_when:
        while proc.poll() is None and not os.path.exists(a.ro_when[0]):
            time.sleep(0.005)
        mount("-o", "remount,bind,ro", a.ro_when[1])
        print(f"nsrun: {a.ro_when[1]} is read-only now", file=sys.stderr, flush=True)
    code = proc.wait()
    if a.copy_out:
        shutil.copytree(a.copy_out[0], a.copy_out[1], symlinks=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
