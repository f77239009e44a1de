"""Spying on a method or function in a test: what each call returned, the call itself
unchanged."""
from __future__ import annotations


def record_returns(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` (a class's method or a module's function) for the test by
    a wrapper that calls it and appends each return value to the list returned."""
    returned = []
    wrapped = getattr(owner, name)

    def recording(*args, **kwargs):
        out = wrapped(*args, **kwargs)
        returned.append(out)
        return out

    monkeypatch.setattr(owner, name, recording)
    return returned
