"""The key a client address is counted under (server/node/rates.py): an IPv6 /64 as one."""

from __future__ import annotations

import pytest

from server.game.addresses import address_key
from server.node.rates import Limits


@pytest.mark.parametrize(("address", "key"), [
    ("203.0.113.5", "203.0.113.5"),
    ("2001:db8:0:7::1", "2001:db8:0:7::/64"),
    ("2001:DB8:0:7:ffff:ffff:ffff:ffff", "2001:db8:0:7::/64"),
    ("2001:db8:0:8::1", "2001:db8:0:8::/64"),
    ("::ffff:203.0.113.5", "203.0.113.5"),
    ("fe80::1%eth0", "fe80::/64"),
    ("", ""),
    ("not an address", "not an address"),
])
def test_an_address_is_counted_by_its_key(address: str, key: str) -> None:
    assert address_key(address) == key


def test_one_64_shares_one_bucket() -> None:
    limits = Limits(1.0, burst=2)
    assert limits.wait("2001:db8::1", 0.0) is None
    assert limits.wait("2001:db8::2", 0.0) is None
    assert limits.wait("2001:db8::3", 0.0) == pytest.approx(1.0)
    assert limits.wait("2001:db8:0:1::1", 0.0) is None  # the next /64: its own
