"""What the batch grader writes: the CSV (escaped against formula injection) and feedback file names."""
from __future__ import annotations

import csv
import io
import re
import unicodedata

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")
RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def cell(value) -> str:
    """A CSV cell that spreadsheets show as text, never evaluate (OWASP: prefix a quote)."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(results: list[dict], points: dict[str, float]) -> str:
    """One row per student: points per exercise, total, max, problem and the isolation that graded it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *points, "total", "max", "problem", "isolation"])
    for result in sorted(results, key=lambda r: r["student"]):
        earned = result["earned"]
        writer.writerow([cell(result["student"]), *(f"{earned.get(e, 0):g}" for e in points),
                         f"{sum(earned.values()):g}", f"{sum(points.values()):g}",
                         cell(result["problem"]), cell(result["isolation"])])
    return buffer.getvalue()


def feedback_names(students: list[str]) -> dict[str, str]:
    """student -> file name (without .md): Unicode kept (NFC), path and control characters replaced, and
    names that would collide (also case-insensitively) told apart by a numbered suffix."""
    names, taken = {}, set()
    for student in sorted(students):
        base = _UNSAFE.sub("_", unicodedata.normalize("NFC", student)).strip(" .") or "_"
        base = base.encode("utf-8")[:180].decode("utf-8", "ignore")
        if base.lower() in RESERVED:
            base = "_" + base
        name, n = base, 1
        while name.casefold() in taken:
            n += 1
            name = f"{base}~{n}"
        taken.add(name.casefold())
        names[student] = name
    return names
