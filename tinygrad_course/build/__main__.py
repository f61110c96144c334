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
from .notebooks import extract
from .probes import PROBES, compare
from .runs import MILESTONES, run_child

ALL_MILESTONES = ("autograd", "lab", "resume", "ddp")


def status_rows(folder: Path) -> list[dict]:
    """One row per component: {component, chapter, source, check, calls} (plus `note`)."""
    with tempfile.TemporaryDirectory() as tmp:
        problems = extract(folder, tmp)
        arrays, report = run_child("probes", Path(tmp))
    rows = []
    for c in COMPONENTS:
        mine = c.name in report["learner"]
        note = problems.get(c.name) or report["errors"].get(c.name, "")
        check = "missing"
        if mine:
            if c.name in report["raised"]:
                check, note = "fail", f"raised {report['raised'][c.name]}"
            else:
                problem = compare(c.name, arrays.get(c.name, {}), PROBES[c.name]())
                check, note = ("fail", problem) if problem else ("pass", note)
        calls = report["calls"].get(c.name, {}).get(c.seam, 0)
        rows.append({"component": c.name, "chapter": c.chapter, "source": "learner" if mine else "reference",
                     "check": check, "calls": calls, "note": note})
    return rows


def milestone(name: str, folder: Path) -> tuple[bool, str]:
    """(passed, the message to print) for milestone `name` on the notebooks in `folder`."""
    if name not in MILESTONES:
        return False, (f"milestone {name}: not available in this version of the course yet "
                       f"(available: {', '.join(MILESTONES)})")
    _, expected, needed = MILESTONES[name]
    with tempfile.TemporaryDirectory() as tmp:
        extract(folder, tmp)
        arrays, report = run_child(name, Path(tmp))
    missing = [n for n in needed if n not in report["learner"]]
    if missing:
        where = ", ".join(f"{n} ({BY_NAME[n].notebook}, cell {BY_NAME[n].exercise})" for n in missing)
        return False, f"milestone {name}: not all its components are yours yet; missing: {where}"
    if name in report["raised"]:
        return False, f"milestone {name}: your components raised {report['raised'][name]}"
    unused = [n for n in needed if report["calls"].get(name, {}).get(BY_NAME[n].seam, 0) == 0]
    if unused:
        return False, f"milestone {name}: these components of yours were never called: {', '.join(unused)}"
    problem = compare(name, arrays.get(name, {}), expected(), exact=name == "resume")
    if problem:
        return False, f"milestone {name}: your run differs from the reference: {problem}"
    return True, f"milestone {name}: passed ({', '.join(needed)} are yours and agree with the reference)"


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
                    print(f"{r['component']:<20} {r['chapter']:<4} {r['source']:<10} {r['check']:<8} {r['calls']:>5}  {r['note']}")
            return 0
        passed, message = milestone(args.name, folder)
    except RuntimeError as error:
        print(str(error), file=sys.stderr)
        return 1
    print(message)
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
