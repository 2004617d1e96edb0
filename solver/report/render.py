"""Plans drawn for people: the topology tree with the threads on their contexts."""

from __future__ import annotations

from rich.tree import Tree

from tasksolve.specs import Plan, Spec, display


def plan_tree(spec: Spec, plan: Plan, title: str | None = None) -> Tree:
    """A rich Tree of the domains that hold threads, down to the contexts and their threads.

    Empty sibling domains are summarised (``+5 empty core``), so that a 64-context machine with
    6 threads fits on a screen.
    """
    topo = spec.topology
    placed: dict[int, str] = {topo.parse_context(context): thread for thread, context in plan.bindings.items()}
    depth = len(topo.levels)
    root = Tree(title or f"{topo.name} ({topo.describe()})")

    def occupied(level: int, domain: int) -> bool:
        return any(c in placed for c in topo.contexts_of(level, domain))

    def add(node: Tree, level: int, parent: int) -> None:
        child_level = level + 1
        first = parent * topo.counts[child_level] if level >= 0 else 0
        children = [d for d in range(first, first + topo.counts[child_level]) if topo.exists(child_level, d)]
        empty = 0
        for domain in children:
            name = f"{topo.levels[child_level].name}{domain % topo.counts[child_level]}"
            if child_level == depth - 1:
                if domain in placed:
                    kind = f" [dim]({topo.kind_of(domain)})[/]" if topo.kinds else ""
                    node.add(f"{name}{kind}: [bold]{placed[domain]}[/]")
                else:
                    empty += 1
                continue
            if occupied(child_level, domain):
                add(node.add(name), child_level, domain)
            else:
                empty += 1
        if empty:
            node.add(f"[dim]+{display.count(empty, 'empty ' + topo.levels[child_level].name)}[/]")

    add(root, -1, 0)
    return root


def plan_text(spec: Spec, plan: Plan) -> str:
    """The tree as plain text (for reports and logs)."""
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    Console(file=buffer, width=100, color_system=None).print(plan_tree(spec, plan))
    return buffer.getvalue()
