"""`python -m tinygrad_course.build status NOTEBOOK_DIR [--json]` and
`python -m tinygrad_course.build milestone NAME NOTEBOOK_DIR`: build mode for instructors and CI.

Both read the learner's components out of the notebooks in NOTEBOOK_DIR, run them in a child process and
decide here, from plain data, with the reference computed in this process."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .components import BY_NAME, COMPONENTS
from .ddp_milestone import NEEDED as DDP_NEEDED, ddp_milestone
from .gpt_milestone import gpt_milestone
from .milestone_runs import CNN_ACCURACY, LAB_ACCURACY, LAB_SECONDS, digits_split
from .notebooks import extract
from .package import read_manifest
from .session import where
from .probes import PROBES, compare
from .runs import MILESTONES, run_child

ALL_MILESTONES = ("autograd", "lab", "cnn", "resume", "ddp", "gpt")


def status_rows(folder: Path, only=()) -> list[dict]:
    """One row per component (of `only`, when given): {component, chapter, source, check, calls} (plus `note`
    and `cell`). A component is the learner's only when its exercise's check passes (the graded check, run in
    the child) and its probe agrees with the reference's run here; otherwise the reference runs."""
    with tempfile.TemporaryDirectory() as tmp:
        problems = extract(folder, tmp)
        manifest = read_manifest(tmp).get("components", {})
        arrays, report = run_child("probes", Path(tmp), only)
    rows = []
    for c in COMPONENTS:
        if only and c.name not in only:
            continue
        written = c.name in report["learner"]
        note = problems.get(c.name) or report["errors"].get(c.name, "")
        check = "missing"
        if written:
            if c.name in report["raised"]:
                check, note = "fail", f"raised {report['raised'][c.name]}"
            else:
                problem = report["verdicts"].get(c.name) or compare(c.name, arrays.get(c.name, {}), PROBES[c.name]())
                check, note = ("fail", problem) if problem else ("pass", note)
        calls = report["calls"].get(c.name, {}).get(c.seam, 0)
        rows.append({"component": c.name, "chapter": c.chapter, "source": "learner" if check == "pass" else "reference",
                     "check": check, "calls": calls, "note": note, "cell": where(c, manifest)})
    return rows


def milestone(name: str, folder: Path) -> tuple[bool, str]:
    """(passed, the message to print) for milestone `name` on the notebooks in `folder`."""
    if name == "ddp":  # chapter 09: two MPI processes; on failure, name the components failing their own checks
        passed, message = ddp_milestone(folder)
        return passed, message if passed else message + _failing_checks(folder, DDP_NEEDED)
    if name == "gpt":  # chapter 10: the GPT on the learner's pieces (gpt_milestone.py)
        return gpt_milestone(folder)
    if name not in MILESTONES:
        return False, (f"milestone {name}: not available in this version of the course yet "
                       f"(available: {', '.join(MILESTONES)})")
    _, expected, needed = MILESTONES[name]
    with tempfile.TemporaryDirectory() as tmp:
        extract(folder, tmp)
        arrays, report = run_child(name, Path(tmp))
        seconds = report["cpu_seconds"]  # the child's CPU time, measured here: the machine's load does not count
    missing = [n for n in needed if n not in report["learner"]]
    if missing:
        cells = ", ".join(f"{n} ({BY_NAME[n].notebook}, cell {BY_NAME[n].exercise})" for n in missing)
        return False, f"milestone {name}: not all its components are yours yet; missing: {cells}"
    if name in report["raised"]:
        return False, f"milestone {name}: your components raised {report['raised'][name]}" + _failing_checks(folder, needed)
    unused = [n for n in needed if report["calls"].get(name, {}).get(BY_NAME[n].seam, 0) == 0]
    if unused:
        return False, f"milestone {name}: these components of yours were never called: {', '.join(unused)}"
    dropped = left_during_run(report, needed)
    if dropped:
        return False, f"milestone {name}: {dropped}" + _failing_checks(folder, needed)
    if name in ("lab", "cnn"):
        passed, message = _judge_lab(arrays.get(name, {}), seconds, needed, name)
        if seconds > LAB_SECONDS:  # name where the time went (the child's own timing: a pointer, not a verdict)
            spent = sorted(report.get("seconds", {}).get(name, {}).items(), key=lambda kv: -kv[1])[:3]
            message += "; the time went mostly to " + ", ".join(f"your {n} ({s:.0f} s)" for n, s in spent)
        calls = report["calls"].get(name, {})
        message += "\n" + "\n".join(f"  {n:<26} learner  {calls.get(BY_NAME[n].seam, 0):>6} calls" for n in needed)
        failing = _failing_checks(folder, needed)  # the likely cause of a failure; and no pass with a failing check
        return passed and not failing, message + failing
    problem = compare(name, arrays.get(name, {}), expected(), exact=name == "resume")
    failing = _failing_checks(folder, needed)
    if problem:
        return False, f"milestone {name}: your run differs from the reference: {problem}" + failing
    if failing:
        return False, f"milestone {name}: your run agrees with the reference, but not every component passes its check" + failing
    return True, f"milestone {name}: passed ({', '.join(needed)} are yours and agree with the reference)"


def left_during_run(report: dict, needed) -> str:
    """What to say when components of the milestone raised during its run and were left out (the reference ran
    the rest of it, so the run is not the learner's): one clause per component; "" when none was."""
    dropped = {n: why for n, why in report.get("left_out", {}).items() if n in needed}
    return "; ".join(f"your {n} ({BY_NAME[n].notebook}, cell {BY_NAME[n].exercise}) {why}, and was left out for the "
                     "rest of the run" for n, why in dropped.items())


def _failing_checks(folder: Path, names) -> str:
    """One line per component among `names` that is the learner's and fails its own check, with its cell."""
    failing = [r for r in status_rows(folder, tuple(names)) if r["check"] == "fail"]
    return "".join(f"\n  your {r['component']} ({r['cell']}) fails its check: {r['note']}" for r in failing)


def _judge_lab(result: dict, seconds: float, needed, name: str = "lab") -> tuple[bool, str]:
    """The lab (or the CNN milestone) passes when the learner's network classifies at least 96% (93% for the
    CNN's short run) of the held-out digits right (the accuracy computed here from its predictions and this
    process's own labels) within 60 s of the child's CPU time."""
    labels = digits_split()[3].numpy()
    threshold = LAB_ACCURACY if name == "lab" else CNN_ACCURACY
    predictions = result.get("predictions")
    if predictions is None or predictions.shape != labels.shape:
        return False, f"milestone {name}: the run gave no prediction for each held-out image"
    accuracy = float((predictions == labels).mean())
    reported = result.get("evaluate")
    said = f" (your evaluate reported {float(reported[1]):.1%})" if reported is not None and reported.shape == (2,) else ""
    if accuracy < threshold:
        return False, f"milestone {name}: test accuracy {accuracy:.1%}, below {threshold:.0%}"
    if seconds > LAB_SECONDS:
        return False, (f"milestone {name}: {accuracy:.1%} on the test digits, but training took {seconds:.0f} s of CPU "
                       f"time (limit {LAB_SECONDS:.0f} s)")
    return True, (f"milestone {name}: passed, {accuracy:.1%} of the held-out digits right{said} in {seconds:.0f} s of "
                  "CPU time, measured here; every component on the training path is yours:")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinygrad_course.build", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("status", help="the component table for a folder of a learner's notebooks")
    st.add_argument("notebook_dir")
    st.add_argument("--json", action="store_true", help="print a JSON list of rows")
    ms = sub.add_parser("milestone", help="run a milestone on a learner's components; exit 0 when it passes")
    ms.add_argument("name", choices=ALL_MILESTONES)
    ms.add_argument("notebook_dir")
    args = parser.parse_args(argv)
    folder = Path(args.notebook_dir)
    if not folder.is_dir():
        print(f"no such folder: {folder}", file=sys.stderr)
        return 2
    try:
        if args.command == "status":
            rows = status_rows(folder)
            if args.json:
                print(json.dumps([{k: r[k] for k in ("component", "chapter", "source", "check", "calls")} for r in rows]))
            else:
                for r in rows:
                    print(f"{r['component']:<26} {r['chapter']:<4} {r['source']:<10} {r['check']:<8} {r['calls']:>5}  {r['note']}")
            return 0
        passed, message = milestone(args.name, folder)
    except RuntimeError as error:
        print(str(error), file=sys.stderr)
        return 1
    print(message)
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
