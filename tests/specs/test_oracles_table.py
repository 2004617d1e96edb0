"""One table of oracle nouns (`specs.oracles.ORACLES`): every sentence names an oracle through
`noun`, and no module keeps a table of its own."""

from __future__ import annotations

import re
from pathlib import Path

from tasksolve.specs.oracles import ORACLES, noun

ROOT = Path(__file__).resolve().parents[2]


def test_each_kind_has_one_noun_and_an_unknown_kind_is_named_as_an_oracle():
    assert {name: noun(name) for name in ORACLES} == {
        "des": "simulation",
        "analytic": "closed form",
        "command": "real program",
    }
    assert noun("failing") == "failing oracle"


def test_an_oracle_registered_without_a_noun_is_named_by_its_kind(monkeypatch):
    from tasksolve.specs import oracles

    monkeypatch.setitem(oracles.ORACLES, "fake", oracles.OracleKind("fake", "a test oracle", "m:f"))
    assert noun("fake") == "fake oracle"


def test_no_module_spells_the_oracle_nouns_in_a_table_of_its_own():
    inline = re.compile(r"""["'](des|analytic|command)["']\s*:\s*["'](simulation|closed[ -]form|real[ -]program)""")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("api", "specs", "simulate", "evt", "solver")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if inline.search(line) and path.name != "oracles.py"
    ]
    assert found == []
