"""JSON Schema of the spec format, for editors (yaml-language-server) and other tools."""

from __future__ import annotations

from typing import Any

from tasksolve.specs.spec import Spec


def spec_json_schema() -> dict[str, Any]:
    """The JSON Schema of a spec file.

    References are allowed where the loader allows them: ``topology`` may be a built-in name or a
    path, an application a built-in name or a path, and a topology may start from ``base``.
    """
    schema = Spec.model_json_schema(mode="validation", by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "tasksolve spec"
    props = schema["properties"]
    topology_ref = props["topology"]
    props["topology"] = {
        "anyOf": [
            {"type": "string", "description": "a built-in topology name or a path relative to this file"},
            topology_ref,
        ],
        "description": "the processor: a built-in name, a path, or an inline topology",
    }
    apps = props["applications"]
    for pattern, app_schema in apps.get("patternProperties", {}).items():
        apps["patternProperties"][pattern] = {
            "anyOf": [{"type": "string", "description": "a built-in application name or a path"}, app_schema]
        }
    topo_def = schema["$defs"]["Topology"]
    topo_def["properties"]["base"] = {"type": "string", "description": "start from this topology (name or path)"}
    topo_def.pop("required", None)
    comm = topo_def["properties"]["communication"]
    direct_short = {
        "type": "object",
        "additionalProperties": {"type": "number", "minimum": 0},
        "description": "cycles per message by the innermost shared level (pipe: 4, core: 4, machine: 40)",
    }
    topo_def["properties"]["communication"] = {"anyOf": [direct_short, comm]}
    _oracle_kinds(schema["$defs"]["OracleSettings"]["properties"]["kind"])
    return schema


def _oracle_kinds(kind: dict[str, Any]) -> None:
    """The oracle names of `specs.oracles`."""
    from tasksolve.specs.oracles import ORACLES

    kind["enum"] = list(ORACLES)
    kind["description"] = "the cost oracle: " + "; ".join(f"{k.name}: {k.description}" for k in ORACLES.values())
