"""The benchmark tests' helper module (benchmark_runs.py, beside this file) is importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
