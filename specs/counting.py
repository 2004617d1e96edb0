"""Counting placements: all injective maps of threads to usable contexts, and the distinct ones
modulo hardware symmetry (threads are distinguishable).

Distinct placements are counted exactly with exponential generating functions over the usable
tree (`specs.symmetry.UsableTree`).  Let ``g_v(j)`` be the number of classes of placements of
``j`` given threads into the subtree of node ``v``, and ``G_v(x) = sum_j g_v(j) x^j / j!``.
A context holds at most one thread: ``G = 1 + x``.  For an inner node, group its children into
classes of identical shape; a class of ``m`` interchangeable children with EGF ``G`` contributes
``H_m = sum_{b=0..m} (G - 1)^b / b!`` (the threads split into ``b <= m`` non-empty labelled
blocks, one per occupied child; occupied children are told apart by their threads, so no further
symmetry remains), and the node's EGF is the product of its classes' ``H`` (labelled product).
Then ``g_root(n) = n! [x^n] G_root``.  Example: 3 threads on the UltraSPARC T2 give 11.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from math import factorial, perm

from tasksolve.specs.symmetry import Form, UsableTree, is_leaf

Poly = tuple[Fraction, ...]


def _mul(a: Poly, b: Poly, degree: int) -> Poly:
    out = [Fraction(0)] * (degree + 1)
    for i, x in enumerate(a):
        if x == 0:
            continue
        for j, y in enumerate(b[: degree + 1 - i]):
            if y:
                out[i + j] += x * y
    return tuple(out)


def _class_egf(child: Poly, m: int, degree: int) -> Poly:
    """``sum_{b=0..m} (G - 1)^b / b!`` truncated at `degree`."""
    g_minus_one = (Fraction(0),) + child[1:]
    total = [Fraction(0)] * (degree + 1)
    power: Poly = (Fraction(1),) + (Fraction(0),) * degree
    for b in range(min(m, degree) + 1):
        scale = Fraction(1, factorial(b))
        for i, c in enumerate(power):
            total[i] += c * scale
        power = _mul(power, g_minus_one, degree)
    return tuple(total)


def _leaves(node: Form, cache: dict) -> int:
    if is_leaf(node):
        return 1
    if node not in cache:
        cache[node] = sum(_leaves(child, cache) for child in node)  # type: ignore[union-attr]
    return cache[node]


def _classes(node: Form) -> dict[Form, int]:
    classes: dict[Form, int] = {}
    for child in node:  # type: ignore[union-attr]
        classes[child] = classes.get(child, 0) + 1
    return classes


def _egf(shape: Form, degree: int) -> Poly:
    """The EGF of `shape`, truncated at `degree` and at each subtree's number of contexts (a
    subtree of k contexts holds at most k threads)."""
    sizes: dict = {}

    @cache
    def egf(node: Form) -> Poly:
        top = min(degree, _leaves(node, sizes))
        if is_leaf(node):
            return (Fraction(1), Fraction(1))[: top + 1]
        result: Poly = (Fraction(1),) + (Fraction(0),) * top
        for child, m in _classes(node).items():
            result = _mul(result, _class_egf(egf(child), m, top), top)
        return result

    return egf(shape)


def work_estimate(tree: UsableTree, threads: int) -> int:
    """About how many coefficient products `count_distinct` needs (for a time budget)."""
    sizes: dict = {}
    seen: set = set()
    total = 0
    stack = [tree.shapes[(-1, 0)]]
    while stack:
        node = stack.pop()
        if is_leaf(node) or node in seen:
            continue
        seen.add(node)
        top = min(threads, _leaves(node, sizes))
        for child, m in _classes(node).items():
            child_top = min(top, _leaves(child, sizes))
            total += (min(m, top) + 1) * (top + 1) * (child_top + 1)
            stack.append(child)
    return total


def count_placements(threads: int, contexts: int) -> int:
    """Injective maps of `threads` distinguishable threads into `contexts` contexts."""
    return perm(contexts, threads) if threads <= contexts else 0


def count_distinct(tree: UsableTree, threads: int, max_work: int | None = None) -> int | None:
    """Classes of placements of `threads` distinguishable threads modulo hardware symmetry; None
    when `work_estimate` exceeds `max_work` (the exact count would take too long)."""
    if threads > len(tree.usable):
        return 0
    if threads == 0:
        return 1
    if max_work is not None and work_estimate(tree, threads) > max_work:
        return None
    poly = _egf(tree.shapes[(-1, 0)], threads)
    value = poly[threads] * factorial(threads)
    assert value.denominator == 1
    return int(value)


# --------------------------------------------------------------------- showing big integers exactly
CHUNK = 10**1000
# Python refuses str() of integers over 4300 digits (a guard against slow conversions); counts
# that long are shown through `digits`, which converts in chunks of 1000 digits.
JSON_INT_DIGITS = 4000


def digits(value: int) -> str:
    """The exact decimal digits of a non-negative integer of any size."""
    if value < CHUNK:
        return str(value)
    parts = []
    while value >= CHUNK:
        value, low = divmod(value, CHUNK)
        parts.append(str(low).rjust(1000, "0"))
    return str(value) + "".join(reversed(parts))


def scientific(value: int, significant: int = 3) -> str:
    """``1526`` -> ``1.53e3``, rounded half up from the exact integer (never through a float, so
    any size works); values under 1000 are shown as they are."""
    text = digits(value)
    if value < 1000:
        return text
    exponent = len(text) - 1
    mantissa = int(text[:significant].ljust(significant, "0")) + (
        1 if text[significant : significant + 1] >= "5" else 0
    )
    if mantissa == 10**significant:  # 9.995e3 -> 1.00e4
        mantissa //= 10
        exponent += 1
    shown = str(mantissa)
    return f"{shown[0]}.{shown[1:]}e{exponent}" if len(shown) > 1 else f"{shown}e{exponent}"


def json_count(value: int | None) -> int | str | None:
    """A count for JSON: an exact integer, or its exact digits as a string when it is longer than
    `JSON_INT_DIGITS` (many JSON readers cannot hold such integers)."""
    if value is None:
        return None
    text = digits(value)
    return value if len(text) <= JSON_INT_DIGITS else text
