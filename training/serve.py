"""``python -m training.serve``: the browser app on localhost (:mod:`training.app.server`)."""

from __future__ import annotations

import sys

from training.app.server import main

if __name__ == "__main__":
    sys.exit(main())
