"""Opaque functions: parts of a model evaluated on the host by the front end.

Some functions inside a model cannot be read as expressions: CasADi's interpolants,
integrators, ``Callback`` s and external functions.  A front end hands each call of
such a function over as an *opaque call* (:mod:`.calls`): its results become
auxiliary leaves ``y`` of the model's graph, its arguments expressions ``a(x, p, y)``,
and a :class:`~.host.HostFunction` computes ``y = F(a)`` with first and second
derivatives, N calls of one function at a time.  Everything else is compiled by caspar
as usual; :class:`~.evaluator.ComposedEvaluator` combines the two by the chain rule
(exactly: the solver sees ``f(x) = f~(x, y(x))`` and ``g(x)``, not a lifted problem
with ``y`` as variables, so the iterates are those IPOPT computes for the same NLP).

Modules: :mod:`.host` (the interface a front end implements), :mod:`.calls` (the calls
as tables and the extended model over ``(x, y)``), :mod:`.structure` (levels and fixed
sparsity patterns), :mod:`.seeds` (derivatives along the directions a call's arguments
move), :mod:`.evaluator` (the composition).  The CPU only: a GPU solve of
such a model raises :class:`~caspar_backend.errors.DeviceError` naming the functions.
"""
