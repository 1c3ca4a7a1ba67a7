"""raylake.config: one context; TOML overrides (raylake --config) with one-line errors."""
import dataclasses
import subprocess
import sys

import pytest

from raylake.config import IntentConfig, RaylakeContext, load_config
from raylake.errors import RaylakeError


def test_every_default_has_its_reason():
    # a field's comment is its reason: the source line of every field of every section has one
    import inspect

    import raylake.config as C

    src = inspect.getsource(C)
    for section in dataclasses.fields(RaylakeContext):
        for f in dataclasses.fields(section.default_factory()):
            line = next((ln for ln in src.splitlines() if ln.strip().startswith(f"{f.name}:")), None)
            assert line is not None, f.name
            above = src.splitlines()[src.splitlines().index(line) - 1].strip()
            assert "#" in line or above.startswith("#"), f"{section.name}.{f.name} has no reason"


def test_toml_overrides_sections_and_keeps_the_rest(tmp_path):
    p = tmp_path / "raylake.toml"
    p.write_text("[search]\nbudget = 15\n[intent]\ntop_k = 10\nmin_join = 0.4\n[igms]\nbeta = 6\n")
    ctx = load_config(str(p), RaylakeContext())
    assert ctx.search.budget == 15 and ctx.search.beam == RaylakeContext().search.beam
    assert ctx.intent.top_k == 10 and ctx.intent.min_join == 0.4
    assert ctx.igms.beta == 6 and ctx.index == RaylakeContext().index


def test_pyproject_tool_table(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "x"\n[tool.raylake.search]\nbeam = 2\n')
    assert load_config(str(p), RaylakeContext()).search.beam == 2
    p.write_text('[project]\nname = "x"\n[tool.black]\nline-length = 100\n')  # no [tool.raylake]: nothing changes
    assert load_config(str(p), RaylakeContext()) == RaylakeContext()


@pytest.mark.parametrize("text, match", [
    ("[serch]\nbudget = 3\n", r"\[serch\] is not a config section; sections: .*search"),
    ("[search]\nbudgett = 3\n", r"\[search\] has no field 'budgett'; fields: .*budget"),
    ("[search]\nbudget = '7'\n", r"budget must be int, got '7'"),
    ("[search]\nbudget = true\n", r"budget must be int, got True"),
    ("[search\n", r"not valid TOML"),
])
def test_bad_files_are_one_line_errors(tmp_path, text, match):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(RaylakeError, match=match):
        load_config(str(p), RaylakeContext())


def test_cli_config_error_exits_2_without_traceback(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[search]\nbudgett = 3\n")
    r = subprocess.run([sys.executable, "-m", "raylake", "--config", str(p), "inspect", "--index-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "has no field 'budgett'" in r.stderr and "Traceback" not in r.stderr


def test_extractor_reads_the_context_intent(example_index):
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    idx = LakeIndex(example_index)
    old = RaylakeContext.get_current()
    try:
        RaylakeContext.set_current(old.replace(intent=IntentConfig(top_k=3)))
        ex = OfflineExtractor(idx)
        assert ex.settings.top_k == 3 and ex.settings.min_join == old.search.min_join
        assert OfflineExtractor(idx, top_k=5).settings.top_k == 5  # a keyword wins over the context
    finally:
        RaylakeContext.set_current(old)
