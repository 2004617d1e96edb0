"""Who sends to whom when groups are replicated (docs/design.md, "Replicas in binding specs"):
the share of a consumer replica's packets each producer replica makes, and every crossing
message of a `simulate.model.Structure` weighted by it."""

from __future__ import annotations

import math


def producer_shares(group, replica: int, producer) -> list[float]:
    """The long-run share of replica `replica` of `group`'s packets (`simulate.model.Group`) made by each replica of its
    predecessor `producer`.  Both in turn (packet ``k`` to replicas ``k mod R_G`` and ``k mod
    R_P``): equal shares of the producers ``q == replica (mod gcd(R_G, R_P))``.  Either at
    random (``hash``): the two choices are independent, every producer ``1 / R_P``."""
    r_g, r_p = len(group.threads), len(producer.threads)
    if group.dispatch == "round_robin" and producer.dispatch == "round_robin":
        step = math.gcd(r_g, r_p)
        seen = [q for q in range(r_p) if q % step == replica % step]
        return [1.0 / len(seen) if q % step == replica % step else 0.0 for q in range(r_p)]
    return [1.0 / r_p] * r_p


def weighted_messages(structure) -> list[tuple[int, int, int, float]]:
    """(producer thread, consumer thread, bytes, share of the consumer's packets that producer
    makes: `producer_shares`) of every crossing task edge, pairs that never meet left out."""
    out = []
    for group in structure.groups:
        for i, t in enumerate(group.threads):
            for p, sizes in zip(group.preds, group.edge_bytes):
                producer = structure.groups[p]
                for q, weight in zip(producer.threads, producer_shares(group, i, producer)):
                    if weight > 0:
                        out.extend((q, t, size, weight) for size in sizes)
    return out
