"""What a compiled problem is and costs, for users: :func:`model_summary`,
:func:`compilation_info`, :func:`modeling_advice` and :func:`solve_profile` (reached as
``Problem.summary()``, ``Problem.compilation_info(device)``, ``Problem.advice(x)`` and
``Problem.profile(result)``; print what they return)."""

from .advice import Advice, modeling_advice
from .compilation import CompilationInfo, compilation_info
from .profile import Profile, solve_profile
from .summary import ModelSummary, model_summary

__all__ = ["Advice", "CompilationInfo", "ModelSummary", "Profile", "compilation_info",
           "model_summary", "modeling_advice", "solve_profile"]
