"""Per-student feedback files (Markdown)."""
from __future__ import annotations

from .sandbox.runner import RunReport


def render(student: str, assignment: str, points: dict[str, float], earned: dict[str, float],
           reasons: dict[str, str], report: RunReport | None, problem: str = "") -> str:
    """Markdown feedback: a score table, then one diagnosis per exercise that lost points."""
    total, possible = sum(earned.values()), sum(points.values())
    lines = [f"# Feedback for {student}: assignment {assignment}", "",
             f"**Total: {total:g} / {possible:g} points**", "",
             "| Exercise | Points | Result |", "|---|---|---|"]
    for exercise, maximum in points.items():
        result = "passed" if earned[exercise] == maximum and maximum else reasons.get(exercise, "").splitlines()[0][:80]
        lines.append(f"| {exercise} | {earned[exercise]:g} / {maximum:g} | {result.replace('|', '/')} |")
    failing = [e for e in points if earned[e] < points[e]]
    if problem:
        lines += ["", f"**Note:** {problem}"]
    if failing:
        lines += ["", "## What to fix", ""]
        for exercise in failing:
            lines += [f"### Exercise {exercise}", "", "```", reasons.get(exercise, "not graded"), "```", ""]
    if report and report.notes:
        lines += ["", "## Notes from running your notebook", ""] + [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"
