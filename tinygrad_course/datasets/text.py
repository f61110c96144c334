"""`shakespeare()`: about 1.1 MB of Shakespeare's plays as one string, shipped with the course (no network).

The text for chapter 10's character-level GPT; `data/README.md` says where it comes from and why it is
public domain.
"""
from __future__ import annotations

from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data"


def shakespeare() -> str:
    """The tiny-Shakespeare corpus (1,115,394 characters, 65 distinct) read from the package's data folder."""
    return (_DATA / "tinyshakespeare.txt").read_text(encoding="ascii")
