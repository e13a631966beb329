"""Choosing a model (--model), refusing unusable ones, and `umc model list|info|import|remove|export`."""
import json

from tests.umoec.umc.conftest import TEXT, variant
from umoec.engine import modelfile as mf
from umoec.engine import store


def _user_dir(umc):
    return store.user_dir(umc.env)


def test_unknown_model_exits_2_naming_it_and_the_search_path(umc):
    umc.write("a.txt", TEXT[:100])
    r = umc("--model", "nosuch", "a.txt")
    assert r.rc == 2 and len(r.lines) == 1
    assert "'nosuch'" in r.err and str(_user_dir(umc)) in r.err and str(store.PACKAGE_DIR) in r.err
    assert not (umc.cwd / "a.txt.umc").exists()


def test_damaged_model_files_are_refused_by_name(umc):
    umc.write("a.txt", TEXT[:100])
    raw = bytearray(store.DEFAULT_FILE.read_bytes())
    raw[-5] ^= 1                                              # a weight byte
    umc.write("flipped.umm", bytes(raw))
    good_hash = store.resolve(None).hash.encode()
    umc.write("rehashed.umm", store.DEFAULT_FILE.read_bytes().replace(good_hash, b"0" * 64, 1))
    for name in ("flipped.umm", "rehashed.umm"):
        r = umc("--model", name, "a.txt")
        assert r.rc == 2 and name in r.err and "damaged" in r.err, r.err
    assert "the file records 000000000000" in r.err
    r = umc("model", "info", "flipped.umm")
    assert r.rc == 1 and "DAMAGED" in r.out.decode()


def test_decoding_needs_the_model_the_file_names(umc, tmp_path):
    other = variant("other", 0)
    mf.write(other, tmp_path / "models" / "other.umm")
    umc.write("a.txt", TEXT[:300])
    assert umc("-q", "--profile", "fast", "--model", str(tmp_path / "models" / "other.umm"),
               "a.txt").rc == 0
    (umc.cwd / "a.txt").rename(umc.cwd / "orig")
    r = umc("-d", "a.txt.umc")                               # not on the search path
    assert r.rc == 1 and "needs model other" in r.err and other.hash[:16] in r.err
    r = umc("-d", "--model", "default", "a.txt.umc")          # the wrong model
    assert r.rc == 1 and "written with model other" in r.err
    r = umc("-d", "a.txt.umc", env={"UMOEC_MODEL_PATH": str(tmp_path / "models")})
    assert r.rc == 0, r.err
    assert (umc.cwd / "a.txt").read_bytes() == TEXT[:300]


def test_a_name_two_models_share_is_ambiguous(umc):
    one, two = variant("twin", 0), variant("twin", 1)
    for m in (one, two):
        mf.write(m, _user_dir(umc) / f"twin-{m.short}.umm")
    umc.write("a.txt", TEXT[:100])
    r = umc("--model", "twin", "a.txt")
    assert r.rc == 2 and "ambiguous" in r.err
    assert one.short in r.err and two.short in r.err
    r = umc("-q", "--model", one.hash[:16], "a.txt")          # a hash prefix picks one
    assert r.rc == 0, r.err


def test_model_list_info_import_remove(umc, tmp_path, default_model):
    other = variant("other", 0)
    mf.write(other, tmp_path / "other.umm")
    r = umc("model", "list")
    assert r.rc == 0
    (line,) = [ln for ln in r.out.decode().splitlines() if default_model.short in ln]
    assert line.split()[:3] == ["*", default_model.name, default_model.short]
    assert line.split()[-2:] == ["shipped", str(store.DEFAULT_FILE)]

    r = umc("model", "import", str(tmp_path / "other.umm"), "--name", "mine")
    assert r.rc == 0, r.err
    stored = _user_dir(umc) / f"mine-{other.short}.umm"
    assert stored.is_file() and mf.read(stored).hash == other.hash
    rows = json.loads(umc("model", "list", "--json").out)
    assert {"name": "mine", "hash": other.hash, "where": "user", "default": False,
            "path": str(stored), "bytes": stored.stat().st_size} in rows

    info = json.loads(umc("model", "info", "mine", "--json").out)
    assert info["hash"] == other.hash and info["info"] == default_model.info
    assert info["check"] == "content hash verified" and info["engine"] == str(other.engine)
    fields = dict(ln.split(None, 1) for ln in umc("model", "info", "default").out.decode()
                  .splitlines())
    assert fields["hash"] == default_model.hash and fields["path"] == str(store.DEFAULT_FILE)
    assert fields["name"] == f"{default_model.name}  (the default model)"
    for key in ("engine", "params", "source.step", "corpus.dataset"):
        assert key in fields, (key, fields)

    r = umc("model", "remove", "mine")
    assert r.rc == 0 and not stored.exists()
    r = umc("model", "remove", "mine")
    assert r.rc == 2 and "'mine'" in r.err
    r = umc("model", "remove", "default")                    # shipped: never removed
    assert r.rc == 2 and "only models there can be removed" in r.err
    assert store.DEFAULT_FILE.is_file()
    r = umc("model", "import", "nosuch.umm")
    assert r.rc == 2 and "nosuch.umm" in r.err


def test_model_export_of_a_run_and_of_a_checkpoint(umc, tiny_run, tmp_path):
    r = umc("model", "export", str(tiny_run), "--name", "tiny-x", "--description", "for a test")
    assert r.rc == 0, r.err
    (stored,) = _user_dir(umc).glob("tiny-x-*.umm")
    info = json.loads(umc("model", "info", "tiny-x", "--json").out)
    assert info["info"]["description"] == "for a test" and info["info"]["source"]["step"] == 4
    assert info["path"] == str(stored)

    ckpt = tiny_run / "checkpoints" / "step000004.pt"
    assert umc("model", "export", str(ckpt), "-o", "t.umm").rc == 0
    assert mf.read(umc.cwd / "t.umm").hash == info["hash"]      # exporting is deterministic
    r = umc("model", "export", str(ckpt), "-o", "t.umm")
    assert r.rc == 1 and "already exists" in r.err
    (tmp_path / "empty").mkdir()
    r = umc("model", "export", str(tmp_path / "empty"))
    assert r.rc == 2 and "no checkpoints" in r.err

    umc.write("a.txt", TEXT[:200])                             # the exported model codes
    assert umc("-q", "--model", "t.umm", "a.txt").rc == 0
    (umc.cwd / "a.txt").unlink()
    assert umc("-q", "-d", "a.txt.umc").rc == 0                 # found in the user store by hash
    assert (umc.cwd / "a.txt").read_bytes() == TEXT[:200]


def test_model_prime_stores_a_primed_copy_that_codes_and_decodes(umc, default_model):
    umc.write("p1.py", TEXT[:900])
    umc.write("p2.py", TEXT[900:])
    r = umc("model", "prime", "default", "p1.py", "p2.py", "--max-bytes", "1200", "--name", "py")
    assert r.rc == 0, r.err
    assert "1,200 bytes of 2 file(s)" in r.out.decode()
    info = json.loads(umc("model", "info", "py", "--json").out)
    assert info["info"]["primer"]["bytes"] == 1200 and info["hash"] != default_model.hash
    umc.write("a.txt", TEXT[200:700])                          # text the primer holds
    assert umc("-q", "--profile", "fast", "a.txt", "-o", "plain.umc").rc == 0
    assert umc("-q", "--profile", "fast", "--model", "py", "a.txt", "-o", "primed.umc").rc == 0
    assert (umc.cwd / "primed.umc").stat().st_size < 0.8 * (umc.cwd / "plain.umc").stat().st_size
    r = umc("-d", "-c", "primed.umc")                          # the primed model, found by hash
    assert r.rc == 0 and r.out == TEXT[200:700], r.err
    r = umc("-d", "-c", "--model", "default", "primed.umc")
    assert r.rc == 1 and "written with model py" in r.err
    # the cm profile: the primer without the network, and the file then needs the model
    assert umc("-q", "--profile", "cm", "a.txt", "-o", "free.umc").rc == 0
    assert umc("-q", "--profile", "cm", "--model", "py", "a.txt", "-o", "cmp.umc").rc == 0
    assert (umc.cwd / "cmp.umc").stat().st_size < 0.8 * (umc.cwd / "free.umc").stat().st_size
    r = umc("-d", "-c", "cmp.umc")
    assert r.rc == 0 and r.out == TEXT[200:700], r.err
    r = umc("-d", "-c", "--model", "default", "cmp.umc")
    assert r.rc == 1 and "written with model py" in r.err

    assert umc("model", "prime", "default", "p1.py", "-o", "out.umm").rc == 0
    r = umc("model", "prime", "default", "p1.py", "-o", "out.umm")
    assert r.rc == 1 and "already exists" in r.err
    r = umc("model", "prime", "default", ".")
    assert r.rc == 2 and "is a folder" in r.err
    umc.write("empty.txt", b"")
    r = umc("model", "prime", "default", "empty.txt")
    assert r.rc == 2 and "empty" in r.err
    r = umc("model", "prime", "default", "p1.py", "--max-bytes", "0")
    assert r.rc == 2 and "--max-bytes" in r.err
    r = umc("model", "prime", "default", "nosuch.txt")
    assert r.rc != 0 and "nosuch.txt" in r.err
