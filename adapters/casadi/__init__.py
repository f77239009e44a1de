"""CasADi front-end: ``nlpsol`` problem dicts (SX or MX) into caspar.

    problem = caspar_backend.from_casadi({'x': x, 'f': f, 'g': g, 'p': p},
                                         lbx=..., ubx=..., lbg=..., ubg=..., x0=..., p=...)

Modules:

* :mod:`.optable`  -- every ``casadi.OP_*`` code and what it becomes;
* :mod:`.program`  -- SX instruction programs compiled to replayable
  single-assignment form; ``Function.map`` replay;
* :mod:`.compiler` -- any casadi Function to a program (MX split at its calls);
* :mod:`.nlp`      -- the problem dict, bounds, names -> NLPModel / Problem.

Importing this package imports casadi; ``import caspar_backend`` does not.
"""

from .nlp import casadi_to_model, from_casadi

__all__ = ["casadi_to_model", "from_casadi"]
