"""The corpus of hostile inputs (issue 30): one test per attack on an input path; helpers live in
``hostile_helpers``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
