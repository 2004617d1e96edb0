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
from functools import lru_cache
from math import factorial, perm

from specs.symmetry import Form, UsableTree

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
    for b in range(0, min(m, degree) + 1):
        scale = Fraction(1, factorial(b))
        for i, c in enumerate(power):
            total[i] += c * scale
        power = _mul(power, g_minus_one, degree)
    return tuple(total)


def _egf(shape: Form, degree: int) -> Poly:
    @lru_cache(maxsize=None)
    def egf(node: Form) -> Poly:
        if node == ():
            return (Fraction(1), Fraction(1)) + (Fraction(0),) * max(0, degree - 1)
        classes: dict[Form, int] = {}
        for child in node:  # type: ignore[union-attr]
            classes[child] = classes.get(child, 0) + 1
        result: Poly = (Fraction(1),) + (Fraction(0),) * degree
        for child, m in classes.items():
            result = _mul(result, _class_egf(egf(child), m, degree), degree)
        return result

    return egf(shape)


def count_placements(threads: int, contexts: int) -> int:
    """Injective maps of `threads` distinguishable threads into `contexts` contexts."""
    return perm(contexts, threads) if threads <= contexts else 0


def count_distinct(tree: UsableTree, threads: int) -> int:
    """Classes of placements of `threads` distinguishable threads modulo hardware symmetry."""
    if threads > len(tree.usable):
        return 0
    if threads == 0:
        return 1
    poly = _egf(tree.shapes[(-1, 0)], threads)
    value = poly[threads] * factorial(threads)
    assert value.denominator == 1
    return int(value)


def scientific(value: int) -> str:
    """``1526`` -> ``1.53e3``; exact integers can be long, this is the readable form."""
    if value < 1000:
        return str(value)
    text = f"{value:.2e}"
    mantissa, exponent = text.split("e")
    return f"{mantissa}e{int(exponent)}"
