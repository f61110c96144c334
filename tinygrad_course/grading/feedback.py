"""Per-student feedback files (Markdown), written by the grader from its own verdicts.

Text that came from the learner's notebook or process (their name, error messages, hints computed while
their code ran) is only ever quoted: control characters removed and every line indented as a code block,
so it cannot add headings, tables, links or a line that reads like the grader's "Total".
"""
from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def plain(text: str, limit: int = 300) -> str:
    """One line of learner text, safe inside a Markdown table or heading."""
    text = _CONTROL.sub("?", str(text)).replace("\n", " ").replace("\r", " ")[:limit]
    text = re.sub(r"([\\`*\[\]<>|])", r"\\\1", text)
    return "\\" + text if text[:1] in "#>-+=~_" and text else text


def quote(text: str, limit: int = 2000) -> list[str]:
    """Learner text as an indented Markdown code block (no fence it could close)."""
    lines = _CONTROL.sub("?", str(text)[:limit].replace("\r", "\n")).splitlines() or [""]
    return ["    " + line for line in lines[:40]]


def render(student: str, assignment: str, points: dict[str, float], earned: dict[str, float],
           verdicts: dict, problem: str, isolation: str) -> str:
    """Markdown feedback: a score table, then the grader's diagnosis (and quoted output) per lost point."""
    total, possible = sum(earned.values()), sum(points.values())
    lines = [f"# Feedback for {plain(student)}: assignment {plain(assignment)}", "",
             f"**Total: {total:g} / {possible:g} points**", "",
             "| Exercise | Points | Result |", "|---|---|---|"]
    for exercise, maximum in points.items():
        verdict = verdicts.get(exercise)
        result = "passed" if verdict is not None and verdict.passed else plain(verdict.message if verdict else problem, 80)
        lines.append(f"| {exercise} | {earned[exercise]:g} / {maximum:g} | {result} |")
    if problem:
        lines += ["", f"**Note from the grader:** {plain(problem, 1000)}"]
    failing = [e for e in points if not (verdicts.get(e) and verdicts[e].passed)]
    if failing:
        lines += ["", "## What to fix", ""]
        for exercise in failing:
            verdict = verdicts.get(exercise)
            lines += [f"### Exercise {exercise}", "", plain(verdict.message if verdict else problem or "not graded", 1000), ""]
            if verdict is not None and verdict.quoted:
                lines += ["Output of your code (quoted):", "", *quote(verdict.quoted), ""]
    lines += ["", f"_Graded with isolation {plain(isolation, 300)}._"]
    return "\n".join(lines).rstrip() + "\n"
