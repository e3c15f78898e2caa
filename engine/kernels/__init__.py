"""The search kernels, compiled by numba, and the searches that drive them: the papers'
negamax (``negamax``), threat-space search (``threats``), the master's principal-variation
search (``pvs``) deepened under a deadline (``deepening``), proof-number search (``dfpn``) and
the solver keeping its tables (``solver``), the small boards' exact minimax (``small_search``)
and perft (``perft``). ``engine.warm`` compiles them (and the other parts' kernels) ahead."""
