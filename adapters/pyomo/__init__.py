"""Pyomo adapter: a Pyomo model -> caspar's expression DAG and NLP.

* :func:`from_pyomo` -- ``Problem`` of a Pyomo model (what users call, also as
  ``caspar_backend.from_pyomo``);
* :func:`pyomo_to_model` -- the lower-level :class:`~caspar_backend.model.NLPModel`,
  with the :class:`PyomoMapping` in ``meta['pyomo']``;
* :class:`PyomoMapping` -- x, p and g back to VarData, ParamData and
  ConstraintData, for loading results and re-solving with new Param values.

Modules: :mod:`.walker` (expressions), :mod:`.extract` (model structure),
:mod:`.mapping` (the correspondence), :mod:`.functions` (name tables).
Pyomo itself is imported only when a model is extracted.
"""

from __future__ import annotations

from .extract import from_pyomo, pyomo_to_model
from .mapping import LazyNames, PyomoData, PyomoMapping

__all__ = ["from_pyomo", "pyomo_to_model", "PyomoMapping", "PyomoData", "LazyNames"]
