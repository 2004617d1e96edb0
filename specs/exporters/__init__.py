"""Exporters: a `Plan` written in another tool's terms.

An exporter reads a `Plan` and its `Spec` and writes what another tool needs to run it that way
(pinning command lines such as ``taskset``/``numactl``, DPDK ``--lcores``, OpenMP places, a
systemd ``CPUAffinity``), using the topology's OS CPU numbers. One module per target format.
"""
