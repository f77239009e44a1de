"""Evaluators: objective, gradient, constraints, Jacobian and Lagrangian
Hessian values of a compiled problem on one device (see :mod:`.base`)."""
