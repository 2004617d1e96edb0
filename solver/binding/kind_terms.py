"""Terms of a thread's work in the CP-SAT binding model that depend on its own context alone.

* Its cycles on a topology with kinds of core (`specs.cpu_kinds`): the least over the kinds it may
  run on, plus, for each slower kind, the difference times one literal saying that the thread
  runs on that kind (tied to its placement literals: one literal per kind, not one work term per
  context) -- `cycles_terms`.
* The cost of reaching its task's device (`specs.devices`): the least over its contexts, plus the
  difference times the placement literal of each dearer context -- `device_terms`."""

from __future__ import annotations


def cycles_terms(model, row: dict[int, object], scaled: list[int], kind_of: list[int], t: int) -> tuple[int, list]:
    """(constant, [(coefficient, literal)]) of thread `t`'s scaled cycles: `row` its placement
    literals by context, `scaled` its cycles on each kind, `kind_of` each context's kind."""
    on_kind: dict[int, list] = {}
    for context, lit in row.items():
        on_kind.setdefault(kind_of[context], []).append(lit)
    low = min(scaled[k] for k in on_kind) if on_kind else scaled[0]
    terms = []
    for k, lits in on_kind.items():
        if scaled[k] == low:
            continue
        on = model.new_bool_var(f"kind[{t},{k}]")
        model.add(on == sum(lits))
        terms.append((scaled[k] - low, on))
    return low, terms


def device_terms(row: dict[int, object], scaled: dict[int, float]) -> tuple[int, list, list]:
    """(constant, [(coefficient, literal)], [(rounded, exact)]) of a thread's device cost:
    `row` its placement literals by context, `scaled` the cost on each context, scaled."""
    rounded = {c: round(scaled[c]) for c in row}
    low = min(rounded.values())
    terms = [(rounded[c] - low, lit) for c, lit in row.items() if rounded[c] > low]
    return low, terms, [(rounded[c], scaled[c]) for c in row]
