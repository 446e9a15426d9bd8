"""Component prices for the $ cost of a fabric, and the component counts of a Fat-tree.

Prices are per 100 Gbps of port speed and scale linearly with it: a 400 Gbps port
costs four 100 Gbps ones (TopoOpt App. G builds fast links from several 100 G ports
when that is cheaper). The optical figures come from TopoOpt App. B; the electrical
ones are **our assumptions** — order-of-magnitude 2022 street prices — because the
per-component dollar figures of TopoOpt App. G could not be recovered (fabricopt docs,
*Departures*, topoopt-6). Every price is a field: pass your own :class:`Prices`.

References
----------
.. [1] W. Wang et al., "TopoOpt", NSDI 2023, App. B (patch panel: 1008 duplex ports
   for about $100K; OCS: 384 ports for about $200K; 1x2 mechanical switch: $25) and
   App. G (a k-ary full-bisection Fat-tree has 5k^2/4 switches; a degree-d
   direct-connect fabric of n servers needs n*d NICs and transceivers and 2*n*d
   patch-panel ports for look-ahead reconfiguration).
.. [2] M. Al-Fares et al., "A Scalable, Commodity Data Center Network Architecture",
   SIGCOMM 2008 (the k-ary Fat-tree: k^3/4 hosts, 5k^2/4 k-port switches).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from fabricopt.problems._validate import as_float

__all__ = ["Prices", "DEFAULT_PRICES", "fat_tree_counts"]


@dataclass(frozen=True)
class Prices:
    """US dollars per component; ``*_per_100g`` scale with port speed / 100 Gbps.

    Attributes
    ----------
    switch_port_per_100g : float
        Electrical packet-switch port (ours: a 64 x 100 GbE switch at about $25K).
    transceiver_per_100g : float
        Pluggable optical transceiver (ours: a 100G QSFP28 SR4 at about $100).
    nic_port_per_100g : float
        Server NIC port (ours: about $500 per 100 GbE port).
    fiber : float
        One fiber cable (ours).
    patch_panel_port : float
        TopoOpt App. B: 1008 duplex ports for about $100K.
    ocs_port : float
        TopoOpt App. B: 384 duplex ports for about $200K.
    lookahead_switch : float
        TopoOpt App. B: the 1x2 mechanical switch of look-ahead provisioning.
    sip_interface_per_100g : float
        A silicon-photonic I/O chiplet (TeraPHY-class) per 100 Gbps; no public price,
        ours: priced like a pluggable transceiver.
    nvswitch_port_per_100g : float
        An in-server GPU switch port (NVSwitch-class); ours: like an electrical switch
        port, with no transceiver (copper inside the box).
    """

    switch_port_per_100g: float = 400.0
    transceiver_per_100g: float = 100.0
    nic_port_per_100g: float = 500.0
    fiber: float = 30.0
    patch_panel_port: float = 100.0
    ocs_port: float = 520.0
    lookahead_switch: float = 25.0
    sip_interface_per_100g: float = 100.0
    nvswitch_port_per_100g: float = 400.0

    def __post_init__(self):
        for name, value in asdict(self).items():
            object.__setattr__(self, name, as_float(name, value, minimum=0.0))

    def per_gbps(self, name: str, gbps: float) -> float:
        """The price of component ``name`` (a ``*_per_100g`` field) at ``gbps``.

        Examples
        --------
        >>> DEFAULT_PRICES.per_gbps("transceiver_per_100g", 400.0)
        400.0
        """
        return getattr(self, name) * gbps / 100.0


DEFAULT_PRICES = Prices()


def fat_tree_counts(hosts: int, oversubscription: float = 1.0) -> dict[str, float]:
    """Ports and links of a three-tier Fat-tree for ``hosts`` hosts.

    A full-bisection k-ary Fat-tree has, per host, one edge down-port, one edge
    up-port, two aggregation ports and one core port: 5 switch ports per host, i.e.
    5k^2/4 switches of k ports for k^3/4 hosts (App. G: k = 8, 128 hosts -> 80
    switches, 640 ports). With ``oversubscription`` o at the edge, the four upper
    ports per host shrink to 4/o. Links: one host link per host and 2/o
    switch-to-switch links per host.

    Examples
    --------
    >>> fat_tree_counts(128)
    {'switch_ports': 640.0, 'host_links': 128.0, 'switch_links': 256.0}
    """
    o = as_float("oversubscription", oversubscription, minimum=1.0)
    return {"switch_ports": hosts * (1.0 + 4.0 / o), "host_links": float(hosts),
            "switch_links": hosts * 2.0 / o}
