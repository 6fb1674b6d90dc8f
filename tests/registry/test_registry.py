"""The one registry type: built-ins then plugins in a stable order, entry points read on the first look-up, a
duplicate refused naming both origins, a broken plugin one error naming its distribution and entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from plugin_helpers import make_plugin

from kgpubench.errors import DuplicateNameError, PluginError, UnknownNameError
from kgpubench.registry import BUILT_IN, Registry

GROUP = "kgpubench.test_colours"  # a group no real package uses


@pytest.fixture
def plug(tmp_path, monkeypatch):
    """``plug(dist, modules, entry_points)``: a plugin distribution on the import path for this test."""
    made: list[str] = []

    def install(dist: str, modules: dict[str, str], entry_points: dict[str, str]) -> Path:
        root = make_plugin(tmp_path / dist, dist, modules, {GROUP: entry_points})
        monkeypatch.syspath_prepend(str(root))
        made.extend(modules)
        return root

    yield install
    for name in made:
        sys.modules.pop(name, None)


def colours(**kw) -> Registry[str]:
    return Registry("colour", GROUP, str, builtins=lambda: [("red", "#f00"), ("green", "#0f0"), ("blue", "#00f")],
                    **kw)


def test_built_ins_come_first_in_declaration_order_then_plugins_by_name(plug):
    plug("zeta-colours", {"zeta_colours": "TEAL = '#088'\ndef ochre():\n    return '#c70'\n"},
         {"teal": "zeta_colours:TEAL", "ochre": "zeta_colours:ochre"})
    plug("alpha-colours", {"alpha_colours": "PINK = '#fcc'\n"}, {"pink": "alpha_colours:PINK"})
    reg = colours()
    assert list(reg) == ["red", "green", "blue", "ochre", "pink", "teal"]  # not sorted: declaration order first
    assert reg["ochre"] == "#c70"  # a function is called for its object
    assert reg.origin("red") == BUILT_IN
    assert reg.origin("pink") == ("entry point 'pink = alpha_colours:PINK' (group kgpubench.test_colours) of "
                                  "distribution alpha-colours 0.1")
    assert len(reg) == 6 and "teal" in reg and "grey" not in reg


def test_nothing_is_read_before_the_first_look_up(plug):
    calls = []
    plug("lazy-colours", {"lazy_colours": "import sys\nsys.modules[__name__].IMPORTED = True\nTEAL = '#088'\n"},
         {"teal": "lazy_colours:TEAL"})
    reg = Registry("colour", GROUP, str, builtins=lambda: calls.append(1) or [("red", "#f00")])
    assert calls == [] and "lazy_colours" not in sys.modules
    assert reg["teal"] == "#088"
    assert calls == [1] and sys.modules["lazy_colours"].IMPORTED
    assert list(reg) == ["red", "teal"] and calls == [1]  # read once


def test_an_unknown_name_suggests_the_closest():
    with pytest.raises(UnknownNameError, match=r"unknown colour 'gren'\. Did you mean 'green'.*Known colours: "
                                               r"blue, green, red\.$"):
        colours()["gren"]
    assert colours().get("gren") is None  # a Mapping: get() answers None


def test_a_second_entry_of_a_name_is_refused_naming_both_origins():
    reg = colours()
    with pytest.raises(DuplicateNameError) as err:
        reg.register("red", "#e00", origin="a test")
    assert str(err.value) == ("colour 'red' from a test is already registered by kgpubench (built in); give one of "
                              "them another name (or uninstall the package that plugs it in).")
    assert reg["red"] == "#f00"  # never replaced


def test_a_plugin_of_a_built_in_name_is_refused_naming_both(plug):
    plug("red-again", {"red_again": "RED = '#e00'\n"}, {"red": "red_again:RED"})
    with pytest.raises(DuplicateNameError, match=r"colour 'red' from entry point 'red = red_again:RED' \(group "
                                                 r"kgpubench.test_colours\) of distribution red-again 0.1 is "
                                                 r"already registered by kgpubench \(built in\)"):
        list(colours())


def test_two_plugins_of_one_name_are_refused_naming_both_distributions(plug):
    plug("one-teal", {"one_teal": "TEAL = '#088'\n"}, {"teal": "one_teal:TEAL"})
    plug("two-teal", {"two_teal": "TEAL = '#099'\n"}, {"teal": "two_teal:TEAL"})
    with pytest.raises(DuplicateNameError) as err:
        colours()["teal"]
    assert "distribution one-teal 0.1" in str(err.value) and "distribution two-teal 0.1" in str(err.value)


@pytest.mark.parametrize("source, value, expected", [
    ("import no_such_module_anywhere\n", "broken:X", "failed to load: ModuleNotFoundError: No module named "
                                                     "'no_such_module_anywhere'"),
    ("X = 42\n", "broken:X", "is refused: a colour must be a str, got a int for 'teal'"),
    ("X = 1\n", "broken:Y", "failed to load: AttributeError"),
    ("def X():\n    raise RuntimeError('boom\\non two lines')\n", "broken:X",
     "failed to load: RuntimeError: boom on two lines"),
])
def test_a_broken_plugin_is_one_error_naming_its_distribution_and_entry_point(plug, source, value, expected):
    plug("broken-colours", {"broken": source}, {"teal": value})
    reg = colours()
    with pytest.raises(PluginError) as err:
        reg["red"]
    text = str(err.value)
    assert expected in text and "\n" not in text
    assert f"entry point 'teal = {value}' (group kgpubench.test_colours) of distribution broken-colours 0.1" in text
    assert text.endswith("Fix or uninstall that package.")
    with pytest.raises(PluginError):  # every later look-up says so again: nothing runs on a half-read registry
        list(reg)


def test_a_fixed_plugin_is_read_again_after_reload(plug):
    root = plug("mended-colours", {"mended": "import no_such_module_anywhere\n"}, {"teal": "mended:TEAL"})
    reg = colours()
    with pytest.raises(PluginError):
        reg["teal"]
    (root / "mended.py").write_text("TEAL = '#088'\n")
    sys.modules.pop("mended", None)
    reg.reload()
    assert reg["teal"] == "#088" and list(reg) == ["red", "green", "blue", "teal"]


def test_the_checks_and_the_own_name_apply_to_plugins_as_to_built_ins(plug):
    def short_hex(name, value):
        if len(value) != 4:
            raise ValueError(f"{value!r} is not #rgb")

    with pytest.raises(ValueError, match="'#ff0000' is not #rgb"):
        Registry("colour", None, str, builtins=lambda: [("red", "#ff0000")], check=short_hex)["red"]
    plug("long-colours", {"long_colours": "TEAL = '#008888'\n"}, {"teal": "long_colours:TEAL"})
    with pytest.raises(PluginError, match="colour plugin 'teal' .* is refused: '#008888' is not #rgb"):
        list(colours(check=short_hex))
    named = Registry("word", None, str, name_of=str.lower)
    assert named.register("red", "RED") == "RED"
    with pytest.raises(ValueError, match="word 'blue' calls itself 'green'"):
        named.register("blue", "Green")


def test_added_registers_for_a_block_only():
    reg = colours()
    with reg.added("grey", "#888") as value:
        assert value == "#888" and list(reg)[-1] == "grey" and reg.origin("grey") != BUILT_IN
    assert "grey" not in reg and list(reg) == ["red", "green", "blue"]
    with pytest.raises(TypeError, match="a colour must be a str, got a int for 'grey'"):
        reg.register("grey", 0x888)
