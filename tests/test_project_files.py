"""environment.yml (conda/Binder) lists the same packages and pins as pyproject.toml's base,
`course` and `dist` dependencies, so `make lab` and Binder build the same environment."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*$")


def _normalise(requirement: str) -> tuple[str, str]:
    """(name, version spec) with PEP 503 name normalisation and spaces removed."""
    name, spec = _REQUIREMENT.match(requirement).groups()
    return re.sub(r"[-_.]+", "-", name).lower(), spec.replace(" ", "")


def _conda_packages(text: str) -> set[tuple[str, str]]:
    """Top-level conda dependencies of environment.yml, without python, pip and the pip: block."""
    packages, inside = set(), False
    for line in text.splitlines():
        if line.startswith("dependencies:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        item = re.match(r"^  - (\S.*)$", line) if inside else None
        if item and not item.group(1).startswith("pip:"):
            name, spec = _normalise(item.group(1))
            if name not in ("python", "pip"):
                packages.add((name, spec))
    return packages


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    expected = {_normalise(r) for r in project["dependencies"] + extras["course"] + extras["dist"]}
    listed = _conda_packages((ROOT / "environment.yml").read_text())
    assert listed == expected, (
        f"only in environment.yml: {sorted(listed - expected)}; only in pyproject.toml: {sorted(expected - listed)}"
    )


def test_environment_yml_installs_the_package_itself():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- pip:\s*\n\s+- -e \.\s*$", text, re.M)
