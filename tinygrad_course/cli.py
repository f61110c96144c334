"""The ``tinygrad-course`` command: release exercises, validate solution notebooks, grade submissions."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .grading.batch import GradeOptions, Interrupted, ReferenceFailed, grade_all, isolation_summary
from .grading.release import release_all, release_text
from .grading.sandbox.isolation import SAFE_LEVELS, IsolationUnavailable
from .grading.sandbox.runner import Limits
from .grading.validate import validate_notebook

UNSAFE_LEVELS = ("unsafe-audit-hook-only", "unsafe-no-isolation")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tinygrad-course", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    release = commands.add_parser("release", help="write exercises/ from solutions/ (stubs, no hidden tests, no outputs)")
    release.add_argument("--solutions", default="solutions", help="folder of NN_*.ipynb solution notebooks")
    release.add_argument("--exercises", default="exercises", help="folder to write the learners' notebooks to")
    release.add_argument("--check", action="store_true", help="write nothing; fail if exercises/ is out of date")

    validate = commands.add_parser("validate", help="check nbgrader metadata and course conventions")
    validate.add_argument("notebooks", nargs="*", help="solution notebooks (default: solutions/*.ipynb)")

    grade = commands.add_parser("grade", help="grade a folder of submissions into a CSV plus feedback files")
    grade.add_argument("submissions", help="SUBMISSIONS/<student>/**/NN_*.ipynb or SUBMISSIONS/<student>.ipynb")
    grade.add_argument("--assignment", required=True, help="chapter number NN of the exercise notebook (or a lab such as 05b)")
    grade.add_argument("--out", default="grades.csv", help="CSV to write (atomically)")
    grade.add_argument("--solutions", default="solutions")
    grade.add_argument("--feedback", default=None, help="folder for <student>.md files (default: <out>_feedback/)")
    grade.add_argument("--timeout", type=float, default=300, help="seconds per notebook (default 300)")
    grade.add_argument("--cell-timeout", type=float, default=60, help="seconds per cell or graded test (default 60)")
    grade.add_argument("--memory-mb", type=int, default=2048, help="memory limit per notebook in MiB (default 2048)")
    grade.add_argument("--disk-mb", type=int, default=64, help="disk quota per notebook in MiB (default 64)")
    grade.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks graded at once (default: cores)")
    grade.add_argument("--no-cache", action="store_true", help="regrade even unchanged submissions")
    grade.add_argument("--isolation", choices=SAFE_LEVELS, default="auto",
                       help="the OS sandbox: kernel (Linux Landlock, 6.7+), bwrap (bubblewrap, user namespaces) or "
                            "auto (default: kernel where Landlock is there, else bwrap)")
    grade.add_argument("--unsafe-isolation", choices=UNSAFE_LEVELS, default=None,
                       help="grade WITHOUT an OS sandbox (Landlock or bubblewrap): submissions can then read the "
                            "solutions and change your files. Only for trusted notebooks on a machine with neither")
    return parser


def _release(args) -> int:
    sources = sorted(Path(args.solutions).glob("[0-9][0-9]*_*.ipynb"))
    if args.check:
        stale = [s.name for s in sources
                 if not (Path(args.exercises) / s.name).exists()
                 or (Path(args.exercises) / s.name).read_text(encoding="utf-8") != release_text(s)]
        for name in stale:
            print(f"out of date: {Path(args.exercises) / name}")
        return 1 if stale else 0
    for path in release_all(args.solutions, args.exercises):
        print(f"wrote {path}")
    return 0


def _validate(args) -> int:
    paths = args.notebooks or sorted(str(p) for p in Path("solutions").glob("*.ipynb"))
    failed = 0
    for path in paths:
        for problem in validate_notebook(path):
            print(f"{path}: {problem}")
            failed = 1
    return failed


def _grade(args) -> int:
    options = GradeOptions(
        limits=Limits(timeout=args.timeout, cell_timeout=args.cell_timeout, memory_mb=args.memory_mb, disk_mb=args.disk_mb),
        jobs=args.jobs, use_cache=not args.no_cache, feedback_dir=Path(args.feedback) if args.feedback else None,
        isolation=args.unsafe_isolation or args.isolation,
    )
    if args.unsafe_isolation:
        print(f"WARNING: --unsafe-isolation {args.unsafe_isolation}: submissions are NOT confined by an OS sandbox; "
              "a hostile notebook can read the solutions and change your files", file=sys.stderr)
    try:
        results = grade_all(args.submissions, args.assignment, args.out, args.solutions, options)
    except IsolationUnavailable as exc:
        print(f"error: {exc}; nothing was graded. Grading without it needs --unsafe-isolation "
              "unsafe-audit-hook-only (see docs/instructor_guide.md)", file=sys.stderr)
        return 2
    except ReferenceFailed as exc:
        print(f"error: {exc}; nothing was graded", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(str(exc), file=sys.stderr)
        return 130
    for result in sorted(results, key=lambda r: r["student"]):
        print(f"{result['student']!r}: {sum(result['earned'].values()):g}" + (f"  ({result['problem']})" if result["problem"] else ""))
    print(isolation_summary(results))
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tinygrad-course`` console script."""
    args = _parser().parse_args(argv)
    return {"release": _release, "validate": _validate, "grade": _grade}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
