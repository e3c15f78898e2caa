"""Who a player is beyond a token: passwords, recovery codes (``server.accounts.passwords``).

Pure but for CPU time: nothing here awaits or touches the database; the store keeps what is
hashed here, and ``server.node.accounts`` carries the requests out.
"""
