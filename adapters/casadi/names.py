"""Variable, parameter and constraint names of a casadi problem, made on demand.

A name is printed only in a message, a log or when a user asks for it, while
building every name of an SX vector costs a SWIG call per element (about 3 s
for 10^6 variables).  These sequences compute ``names[i]`` on first access and
cache it; they compare equal to the list they stand for and pickle as that list
(``IndexedNames`` as its base and length: its names follow from them).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import final


class _Lazy(Sequence):
    """``names[i] = self._make(i)``, cached (abstract: ``_make``)."""

    __slots__ = ("_n", "_cache")

    def __init__(self, n: int):
        self._n = n
        self._cache: list = [None] * n

    @abstractmethod
    def _make(self, i: int) -> str:
        """The name at index ``i``."""

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        s = self._cache[i]
        if s is None:
            s = self._cache[i] = self._make(range(self._n)[i])
        return s

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None

    def __reduce__(self):
        return (list, (list(self),))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._n} names)"


@final
class SXNames(_Lazy):
    """The names of the nonzeros of a dense SX vector of symbols (``x_0``, ...)."""

    __slots__ = ("_v",)

    def __init__(self, v):
        super().__init__(int(v.nnz()))
        self._v = v

    def _make(self, i: int) -> str:
        return self._v.nz[i].name()


@final
class IndexedNames(_Lazy):
    """``base[0]``, ``base[1]``, ... (constraint names ``g[i]``)."""

    __slots__ = ("_base",)

    def __init__(self, base: str, n: int):
        super().__init__(n)
        self._base = base

    def _make(self, i: int) -> str:
        return f"{self._base}[{i}]"

    def __reduce__(self):
        return (IndexedNames, (self._base, self._n))
