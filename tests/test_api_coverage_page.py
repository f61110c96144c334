"""docs/api_coverage.md says which PyTorch names tinygrad_course has; it must describe the code as it is."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_coverage_page_is_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_coverage.py"), "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr + "\nRun: python scripts/api_coverage.py"
