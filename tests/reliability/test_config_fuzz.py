"""Config fuzzing: any YAML or any nested structure ends in a Config or a ConfigError — never
another exception. UMOEC_FUZZ_EXAMPLES raises the case count for nightly runs."""
import math
import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from umoec import config as C

EXAMPLES = int(os.environ.get("UMOEC_FUZZ_EXAMPLES", "300"))
KEYS = [f.key for f in C.all_fields()]
SECTIONS = sorted({k.split(".")[0] for k in KEYS})

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["1e400", "nan", "-inf", "0x10", "4,7", "", "true", "[1,2]", "S" * 300]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10)


@st.composite
def configs(draw):
    """Mostly-valid nested dicts: real sections and keys with hostile values, plus junk keys."""
    out: dict = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=8)):
        node = out
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[last] = draw(values)
    if draw(st.booleans()):
        out[draw(st.sampled_from(SECTIONS + ["bogus"]))] = draw(values)
    return out


def check(data):
    try:
        cfg = C.build(data, "fuzz.yaml")
    except C.ConfigError as exc:
        assert exc.issues and all(i.message for i in exc.issues)
        assert "Traceback" not in str(exc)
        return
    for f in C.all_fields():  # whatever passed is inside the schema's ranges
        v = C.get_value(cfg, f.key)
        if f.kind in ("int", "float") and not f.spec.choices:
            assert f.spec.lo <= v <= f.spec.hi and math.isfinite(v), f.key


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_structured_configs_never_escape_config_error(data):
    check(data)


@settings(max_examples=EXAMPLES, deadline=None)
@given(values)
def test_arbitrary_documents_never_escape_config_error(data):
    check(data)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_yaml_text_never_escapes_config_error(text):
    try:
        C.loads(text, "fuzz.yaml")
    except C.ConfigError:
        pass


def test_known_nasty_documents():
    for text in ["a: &x [*x]", "!!python/object:os.system {}", "model: {d_model: .nan}",
                 "? [1]\n: 2", "model:\n  d_model: 1e999999", "\x00", "{" * 500]:
        try:
            C.loads(text, "nasty.yaml")
        except C.ConfigError:
            pass
    assert yaml.safe_load("a: 1") == {"a": 1}
