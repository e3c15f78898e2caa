"""Client addresses as the limits and bans count them: one key a holder of addresses.

An IPv6 host is handed a whole /64 (RFC 6177 and every ISP's practice), so its owner can take a
new address from it for every connection; counted one by one, one /64 has no limit at all. So
every per-address limit and ban keys an address by ``address_key``: an IPv6 address by its /64
(``2001:db8:1:2::/64``), an IPv4 address written as IPv6 (``::ffff:203.0.113.7``) as the IPv4
address it is, an IPv4 address as itself. Anything else (a Unix socket's empty peer, a key
already made) is its own key, so the function may be applied twice. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress

IPV6_PREFIX = 64  # the bits of an IPv6 address that name its holder


def address_key(address: str) -> str:
    """The key ``address`` is counted and banned under: its /64 for IPv6, the IPv4 address
    for IPv4 (written either way)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        host_bits = 128 - IPV6_PREFIX
        return str(ipaddress.IPv6Network((int(ip) >> host_bits << host_bits, IPV6_PREFIX)))
    return str(ip)


def is_loopback(address: str) -> bool:
    """Whether ``address`` is the host's own (``127.0.0.0/8``, ``::1``, either written as
    IPv6): the server itself, or a proxy on its machine that was not declared trusted."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def ban_network(text: str) -> str:
    """``text`` as an address or network to ban, normalised to what a ban holds: an IPv4
    address or network as given, an IPv6 address or a network narrower than a /64 as its /64;
    ``ValueError`` if ``text`` is neither an address nor a network."""
    network = ipaddress.ip_network(text, strict=False)
    if isinstance(network, ipaddress.IPv6Network):
        mapped = network.network_address.ipv4_mapped
        if mapped is not None and network.prefixlen >= 96:
            network = ipaddress.IPv4Network((mapped, network.prefixlen - 96), strict=False)
        elif network.prefixlen > IPV6_PREFIX:
            network = network.supernet(new_prefix=IPV6_PREFIX)
    if network.num_addresses == 1:
        return str(network.network_address)
    return str(network)


def address_in(network: str, address: str) -> bool:
    """Whether ``address`` is held by ``network`` (as ``ban_network`` writes one; an older
    ban of a lone IPv6 address holds its /64 too); a text that is no address matches only
    itself."""
    try:
        held = ipaddress.ip_network(ban_network(network))
        key = address_key(address)
        seen = ipaddress.ip_network(key) if "/" in key else ipaddress.ip_address(key)
    except ValueError:
        return network == address
    if isinstance(seen, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return seen.version == held.version and seen.subnet_of(held)  # type: ignore[arg-type]
    return seen in held
