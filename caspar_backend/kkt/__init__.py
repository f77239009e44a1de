"""KKT systems of the interior-point method (see :mod:`.base`)."""

from .base import KKTSystem  # noqa: F401
from .augmented import AugmentedKKT  # noqa: F401
