"""bench/papers/lata.py: the verdict rules stated beforehand (`CRITERIA`, `EARLIER`), on made-up
figures whose answer is known."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    for folder in (ROOT / "bench", ROOT / "bench" / "papers"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("_test_paper_lata", ROOT / "bench" / "papers" / "lata.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lata = _load()


def r(mpps: float, cycles: float, meets: bool = True) -> dict:
    return {"throughput_mpps": mpps, "latency_cycles": cycles, "meets": meets}


def fig10_data(ours: dict) -> dict:
    return {"fig10": {"lata": ours, "parallel": r(2.0, 6000, False), "list": r(1.0, 4000)}}


def test_fig11_close_to_parallel_is_90_percent_the_earlier_50():
    close, half = fig10_data(r(1.85, 4400)), fig10_data(r(1.2, 4400))
    assert [v["holds"] for v in lata.fig11(close, "lata")] == [True, True]
    assert [v["holds"] for v in lata.fig11(half, "lata")] == [False, True]
    below_list = fig10_data(r(0.9, 4400))
    below_list["fig10"]["parallel"] = r(0.95, 6000, False)
    assert not lata.fig11(below_list, "lata")[0]["holds"]  # >= 90% of Parallel's but not above List's


def test_fig10_matches_list_within_10_percent():
    assert [v["holds"] for v in lata.fig10(fig10_data(r(1.5, 4300)), "lata")] == [True, True]
    assert [v["holds"] for v in lata.fig10(fig10_data(r(1.5, 4500)), "lata")] == [False, True]  # 12.5% above List
    assert [v["holds"] for v in lata.fig10(fig10_data(r(1.5, 4300, False)), "lata")] == [False, False]


def test_fig14_judges_the_additions_without_parallels_plan():
    """A LATA that reaches Parallel at 100% only through Parallel's plan passes the earlier
    criterion and fails the current one, which reads `lata-own`."""
    par = r(2.0, 6000)
    data = {"fig14": {b: {"lata": r(1.5, 4000), "lata-own": r(1.5, 4000), "parallel": par} for b in lata.BOUNDS}}
    data["fig14"]["100%"]["lata"] = r(2.0, 6000)
    data["fig14"]["100%"]["lata-own"] = r(1.6, 5000)
    new, earlier = lata.fig14(data, "lata")
    assert (new["method"], new["holds"]) == ("lata-own", False)
    assert (earlier["method"], earlier["holds"]) == ("lata", True)
    data["fig14"]["100%"]["lata-own"] = r(1.92, 5000)
    assert lata.fig14(data, "lata")[0]["holds"]
    data["fig14"]["75%"]["lata-own"] = r(1.5, 4600, False)  # misses L0 at one point
    assert not lata.fig14(data, "lata")[0]["holds"]


def test_every_replaced_criterion_has_a_reason_and_every_row_a_criterion():
    assert set(lata.EARLIER) <= set(lata.CRITERIA)
    assert all(text and reason for text, reason in lata.EARLIER.values())
