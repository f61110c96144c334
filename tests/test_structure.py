"""The package reads bottom-up (docs/architecture.md): no import circles, at most a few documented imports
inside functions, files of at most 800 lines, the layer contract kept, and the layer diagram current."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import package_structure as ps  # noqa: E402

# a function-level import must say why on its own line or the line above: `# lazy: <reason>`
REASON = re.compile(r"#\s*lazy:\s*\S")


def test_no_import_circles_counting_imports_inside_functions():
    edges, _ = ps.imports()
    assert ps.circles(edges) == []


def test_function_level_imports_are_few_and_each_gives_its_reason():
    _, lazy = ps.imports()
    assert len(lazy) <= ps.MAX_LAZY, "\n".join(f"{m}:{line} -> {t}" for m, line, t, _, _ in lazy)
    for mod, line, targets, lines, _ in lazy:
        here, above = lines[line - 1], lines[line - 2] if line > 1 else ""
        assert REASON.search(here) or REASON.search(above), f"{mod}:{line} imports {targets} without '# lazy: why'"


def test_files_have_at_most_800_lines():
    assert ps.long_files() == []


def test_every_module_belongs_to_a_layer():
    listed = [m for row in ps.layers() for m in row]
    containers = {"tinygrad_course", "tinygrad_course.autograd"}  # namespaces that re-export their layers' names
    missing = [m for m in ps.modules() if m not in containers
               and not any(m == r or m.startswith(r + ".") for r in listed)]
    assert missing == []


def test_layer_diagram_in_architecture_doc_is_current():
    assert ps.documented_diagram() == ps.diagram(), "run: python scripts/package_structure.py --write-docs"


def test_import_linter_layers_contract_is_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed (it is in the test extra of pyproject.toml)")
    run = subprocess.run([exe, "--config", str(ps.ROOT / ".importlinter")], cwd=ps.ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout[-3000:]


def test_checker_sees_circles_and_lazy_imports(tmp_path, monkeypatch):
    """The checks above can fail: a planted circle through a function-level import is found."""
    pkg = tmp_path / "tinygrad_course"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from . import high\n    return high\n")
    (pkg / "high.py").write_text("from . import low\n")
    monkeypatch.setattr(ps, "PACKAGE", pkg)
    edges, lazy = ps.imports()
    assert ps.circles(edges) == [["tinygrad_course.high", "tinygrad_course.low"]]
    assert [(m, line) for m, line, *_ in lazy] == [("tinygrad_course.low", 2)]
