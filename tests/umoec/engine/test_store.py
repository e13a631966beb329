"""The model search path: lookup by name, hash prefix and path; ambiguity; import/remove."""
import shutil

import pytest

from umoec.engine import modelfile as mf
from umoec.engine import store


@pytest.fixture
def env(tmp_path, tiny_model):
    runs = tmp_path / "runs"
    (runs / "r1" / "models").mkdir(parents=True)
    mf.write(tiny_model, runs / "r1" / "models" / "step000024.umm")
    return {"XDG_DATA_HOME": str(tmp_path / "xdg"), "UMOEC_RUNS_DIR": str(runs),
            "UMOEC_MODEL_PATH": str(tmp_path / "extra"), "HOME": str(tmp_path)}


def test_search_path_order_and_lookups(env, tiny_model, tmp_path):
    kinds = [k for k, _ in store.search_path(env)]
    assert kinds[:3] == ["shipped", "user", "path"] and kinds[-1] == "runs"
    e = store.resolve("tiny", env)
    assert e.hash == tiny_model.hash and e.where == "runs"
    assert store.resolve(tiny_model.hash[:8], env).path == e.path
    assert store.find_hash(tiny_model.hash, "tiny", env).path == e.path
    assert store.resolve(str(e.path), env).where == "file"
    assert store.resolve(None, env).where == "shipped" == store.resolve("default", env).where


def test_missing_models_name_what_and_where(env):
    with pytest.raises(store.ModelNotFound, match=r"no model named or hashed 'nope'.*runs"):
        store.resolve("nope", env)
    with pytest.raises(store.ModelNotFound, match=r"model big .hash 0123456789abcdef.*umc model "
                                                  "import"):
        store.find_hash("0123456789abcdef" * 4, "big", env)


def test_two_models_with_one_name_are_ambiguous(env, tiny_model, tmp_path):
    t = dict(tiny_model.tensors)
    t["heads.final_norm"] = t["heads.final_norm"] + 1
    other = mf.make("tiny", tiny_model.config, t)
    (tmp_path / "extra").mkdir()
    mf.write(other, tmp_path / "extra" / "other.umm")
    with pytest.raises(store.AmbiguousModel, match=f"{other.hash[:12]}.*{tiny_model.hash[:12]}|"
                                                   f"{tiny_model.hash[:12]}.*{other.hash[:12]}"):
        store.resolve("tiny", env)
    assert store.resolve(other.hash[:10], env).path.name == "other.umm"


def test_import_then_remove_only_from_the_user_store(env, tiny_model, tmp_path):
    src = next(p for p in (tmp_path / "runs").rglob("*.umm"))
    e = store.import_file(src, env, name="renamed")
    assert e.where == "user" and e.name == "renamed" and e.hash == tiny_model.hash
    assert store.resolve("renamed", env).path == e.path
    assert store.remove("renamed", env) == [e.path] and not e.path.exists()
    with pytest.raises(store.ModelNotFound, match="only models there can be removed"):
        store.remove("tiny", env)


def test_a_damaged_copy_does_not_hide_a_good_one(env, tiny_model, tmp_path):
    good = next(p for p in (tmp_path / "runs").rglob("*.umm"))
    (tmp_path / "extra").mkdir()
    bad = tmp_path / "extra" / "bad.umm"
    shutil.copy(good, bad)
    raw = bytearray(bad.read_bytes())
    raw[-5] ^= 1
    bad.write_bytes(bytes(raw))
    first = store.find_hash(tiny_model.hash, "tiny", env)
    assert first.path == bad                                   # the path entry comes first...
    assert store.load(first, env).path == good                 # ...but the good copy loads
