"""How much of what a milestone runs is the learner's code: the lines run in the learner's package and in
the framework (course tooling -- build, grading, viz, the command line -- left out) while the milestone's
computation runs on the learner's components.

    .venv/bin/python scripts/learner_share.py NOTEBOOK_DIR MILESTONE     # MILESTONE: autograd, lab, cnn, resume or gpt
    .venv/bin/python scripts/learner_share.py NOTEBOOK_DIR gpt --steps 20
    .venv/bin/python scripts/learner_share.py NOTEBOOK_DIR lab --files    # and the lines run per file

`gpt` trains chapter 10's GPT (build/gpt_milestone.py) on the learner's chapter-10 cells and earlier
components; the milestone trains 2000 steps, and `--steps N` measures a shorter run of the same code (a
line counts once however often it runs, so the counts of a shorter run differ from the full run's only by
lines that only late steps reach; the output says how many steps were measured).

The components are read out of the notebooks in NOTEBOOK_DIR (as `python -m tinygrad_course.build` does),
those the milestone is about are installed when they pass their check, and the computation runs under
coverage started after every import, so a line counts when the computation runs it (a `def` line read at
import time does not). It prints both counts, the learner's share of the lines run, and the non-blank
lines the learner writes in all the component cells (their solution regions).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tinygrad_course  # noqa: E402  (this worktree's package, whatever the venv points at)
from tinygrad_course import seams  # noqa: E402
from tinygrad_course.build import gpt_milestone  # noqa: E402
from tinygrad_course.build.components import COMPONENTS, sources  # noqa: E402
from tinygrad_course.build.notebooks import extract, find_notebook  # noqa: E402
from tinygrad_course.build.package import load  # noqa: E402
from tinygrad_course.build.runs import MILESTONES  # noqa: E402
from tinygrad_course.build.session import _checked, install  # noqa: E402

PACKAGE = Path(tinygrad_course.__file__).resolve().parent
TOOLING = ("build", "grading", "viz", "cli.py")


def framework_file(path: Path) -> bool:
    """A file of the framework a model runs on (not the course's tooling around it)."""
    try:
        parts = path.resolve().relative_to(PACKAGE).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] not in TOOLING


def component_cells() -> list[tuple[str, str]]:
    """The (chapter, grade_id) cells that define the components, each once: build mode's components and the
    chapter-10 pieces the GPT milestone builds its model from."""
    cells = [sources(component)[-1] for component in COMPONENTS]
    cells += [("10", grade_id) for _, grade_id, _ in gpt_milestone.PIECES]
    return list(dict.fromkeys(cells))


def _notebook(folder: Path, chapter: str) -> Path | None:
    if chapter == "10":  # the capstone has no build-mode components, only the milestone's pieces
        path = folder / gpt_milestone.NOTEBOOK
        return path if path.is_file() and not path.is_symlink() else None
    return find_notebook(folder, chapter)


def component_lines(folder: Path) -> int:
    """Non-blank lines the learner writes in the component cells of the notebooks in `folder`: the lines
    between `### BEGIN SOLUTION` and `### END SOLUTION` (what the release replaces with a stub), each cell
    counted once (one cell may define several components: chapter 02's ops, chapter 07's checkpoint pair)."""
    total = 0
    for chapter, grade_id in component_cells():
        path = _notebook(folder, chapter)
        if path is None:
            continue
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id") == grade_id:
                inside = False
                for line in "".join(cell["source"]).splitlines():
                    if "### BEGIN SOLUTION" in line or "### END SOLUTION" in line:
                        inside = "BEGIN" in line
                    elif inside and line.strip():
                        total += 1
    return total


def _gpt_run(folder: Path, tmp: Path, steps: int):
    """The GPT milestone's training on the learner's chapter-10 cells (written into `tmp`) as a function of
    no arguments, the components it installs and the folder of those cells; None when a cell is missing."""
    pieces_dir = tmp / "ch10"
    pieces_dir.mkdir()
    if gpt_milestone._write_pieces(folder, pieces_dir):
        return None
    pieces = dict(gpt_milestone.REFERENCE)
    for name, _, defines in gpt_milestone.PIECES:
        module = gpt_milestone._import_file(pieces_dir / f"{name}.py", f"_learner_ch10_{name}")
        pieces[name] = getattr(module, defines)
    return (lambda: gpt_milestone.train(pieces, steps)), gpt_milestone.EARLIER, pieces_dir


def measure(folder: Path, milestone: str, steps: int = gpt_milestone.STEPS) -> dict:
    """{learner, framework, share, components, installed, needed}: the lines the milestone's computation runs
    (`steps` training steps for the GPT)."""
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "mytorch"
        learner_dirs = {package.resolve()}
        if milestone == "gpt":
            got = _gpt_run(folder, Path(tmp), steps)
            if got is None:  # without the chapter-10 cells the reference's pieces run: nothing is the learner's
                got = (lambda: gpt_milestone.train(gpt_milestone.REFERENCE, steps)), gpt_milestone.EARLIER, None
            run, needed, pieces_dir = got
            if pieces_dir is not None:
                learner_dirs.add(pieces_dir.resolve())
        else:
            run, _, needed = MILESTONES[milestone]
        extract(folder, package)
        loaded = [item for item in load(package) if item.obj is not None and item.component.name in needed]
        good = [item for item in loaded if _checked(item, package) is None]
        seams.uninstall()
        install(good, package)
        cov = coverage.Coverage(data_file=None, branch=False, config_file=False)
        cov.start()
        try:
            run()
        finally:
            cov.stop()
            seams.uninstall()
        data = cov.get_data()
        learner = framework = 0
        files = []
        for name in data.measured_files():
            path, lines = Path(name), len(data.lines(name) or ())
            if path.resolve().parent in learner_dirs:
                learner += lines
                files.append((lines, f"learner {path.name}"))
            elif framework_file(path):
                framework += lines
                files.append((lines, str(path.resolve().relative_to(PACKAGE))))
        share = learner / (learner + framework) if learner + framework else 0.0
        return {"learner": learner, "framework": framework, "share": share, "components": component_lines(folder),
                "installed": sorted(item.component.name for item in good), "needed": needed,
                "files": sorted(files, reverse=True)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook_dir", type=Path)
    parser.add_argument("milestone", choices=[m for m in MILESTONES if m != "ddp"] + ["gpt"])
    parser.add_argument("--steps", type=int, default=gpt_milestone.STEPS,
                        help=f"training steps of the gpt milestone to measure (the milestone's: {gpt_milestone.STEPS})")
    parser.add_argument("--files", action="store_true", help="also print the lines run in each file, most first")
    args = parser.parse_args(argv)
    if not args.notebook_dir.is_dir():
        print(f"no such folder: {args.notebook_dir}", file=sys.stderr)
        return 2
    result = measure(args.notebook_dir, args.milestone, args.steps)
    measured = (f" (measured over {args.steps} of the milestone's {gpt_milestone.STEPS} training steps)"
                if args.milestone == "gpt" and args.steps != gpt_milestone.STEPS else "")
    print(f"milestone {args.milestone} on {args.notebook_dir}: {len(result['installed'])} of "
          f"{len(result['needed'])} components are the learner's{measured}")
    print(f"lines run in the learner's package: {result['learner']}")
    print(f"lines run in the framework:         {result['framework']}")
    print(f"learner's share:                    {result['share']:.0%}")
    print(f"the learner's components:           {result['components']} non-blank lines written "
          f"(solution regions of the {len(component_cells())} component cells)")
    if args.files:
        for lines, name in result["files"]:
            print(f"{lines:6d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
