"""Write server-2s.xml: a 2-socket server in hwloc 2's XML format (as ``lstopo --of xml`` writes
it): per socket a NUMA node and a 22 MiB L3, 8 cores with private L2/L1d/L1i, 2 PUs per core
numbered Linux's way (PU i and i+16 are SMT siblings). Run once; the file is committed."""

from pathlib import Path


def _mask(cpus):
    return f"0x{sum(1 << c for c in cpus):08x}"


def _cache(kind, size, depth, ctype, cpus, inner, pad):
    node = f"0x{1 << (min(cpus) // 8 % 2):08x}"
    return (
        f'{pad}<object type="{kind}" cpuset="{_mask(cpus)}" nodeset="{node}" cache_size="{size}" depth="{depth}" '
        f'cache_linesize="64" cache_type="{ctype}">\n{inner}{pad}</object>\n'
    )


def server() -> str:
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
        '<topology version="2.0">',
        f'  <object type="Machine" os_index="0" cpuset="{_mask(range(32))}" nodeset="0x00000003">',
    ]
    for socket in range(2):
        cpus = [c for core in range(8) for c in (socket * 8 + core, socket * 8 + core + 16)]
        node = f'nodeset="0x{1 << socket:08x}"'
        out.append(f'    <object type="Package" os_index="{socket}" cpuset="{_mask(cpus)}" {node}>')
        out.append('      <info name="CPUModel" value="Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"/>')
        out.append(
            f'      <object type="NUMANode" os_index="{socket}" cpuset="{_mask(cpus)}" {node} local_memory="68719476736"/>'
        )
        cores = ""
        for core in range(8):
            pus = (socket * 8 + core, socket * 8 + core + 16)
            pad = "          "
            leaf = (
                f'{pad}      <object type="Core" os_index="{core}" cpuset="{_mask(pus)}" {node}>\n'
                + "".join(
                    f'{pad}        <object type="PU" os_index="{p}" cpuset="{_mask([p])}" {node}/>\n' for p in pus
                )
                + f"{pad}      </object>\n"
            )
            l1i = _cache("L1iCache", 32768, 1, 2, pus, leaf, pad + "    ")
            l1d = _cache("L1Cache", 32768, 1, 1, pus, l1i, pad + "  ")
            cores += _cache("L2Cache", 1048576, 2, 0, pus, l1d, pad)
        out.append(_cache("L3Cache", 23068672, 3, 0, cpus, cores, "      ").rstrip("\n"))
        out.append("    </object>")
    out += ["  </object>", "</topology>", ""]
    return "\n".join(out)


def _complete(text: str) -> str:
    """Add the attributes lstopo itself writes on every object (complete sets, gp_index)."""
    import itertools
    import re

    counter = itertools.count(1)
    text = re.sub(r'cpuset="(0x[0-9a-f]+)"', r'cpuset="\1" complete_cpuset="\1"', text)
    text = re.sub(r'nodeset="(0x[0-9a-f]+)"', r'nodeset="\1" complete_nodeset="\1"', text)
    return re.sub(r"<object ", lambda m: f'<object gp_index="{next(counter)}" ', text)


if __name__ == "__main__":
    (Path(__file__).parent / "server-2s.xml").write_text(_complete(server()))
