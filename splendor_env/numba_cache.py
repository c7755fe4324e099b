"""Drop numba's on-disk cache when any source file of the package changes.

Why: ``@njit(cache=True)`` keys each cached function on its *own* file only.
``vector._step`` inlines ``rules.legal_mask``, so after an edit to rules.py
(or a package upgrade) numba would keep loading the old compiled rules for
the batched engine, silently. A digest of all the package's sources is stored
beside the cache; when it differs, the package's ``.nbi``/``.nbc`` files are
removed and numba recompiles once. Hashing the sources costs a few
milliseconds per import.

Covers numba's default cache location (``__pycache__`` beside the sources), in the package
and its subpackages: ``observation.observe`` inlines code from ``modules/orient.py``, so an
edit there must drop the cache of the top-level files too.
With ``NUMBA_CACHE_DIR`` set, clear that directory yourself after upgrading.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

STAMP_NAME = "numba-sources.sha256"


def sources_digest(files: Iterable[Path]) -> str:
    """SHA-256 over the names and contents of ``files`` (order-independent)."""
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def refresh_cache(package_dir: Path, sources: Iterable[Path]) -> bool:
    """Clear the numba files of every ``__pycache__`` under ``package_dir`` if ``sources`` changed;
    True if cleared."""
    digest = sources_digest(sources)
    cache = package_dir / "__pycache__"
    stamp = cache / STAMP_NAME
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for pattern in ("*.nbi", "*.nbc"):
            for f in package_dir.rglob(f"__pycache__/{pattern}"):
                f.unlink(missing_ok=True)
        tmp = cache / f"{STAMP_NAME}.{os.getpid()}.tmp"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:  # read-only install: numba then caches elsewhere, nothing to guard here
        return False
    return True


def package_sources(*package_dirs: Path) -> list[Path]:
    """Every ``.py`` file of the given package directories and their subpackages."""
    return [f for d in package_dirs for f in d.rglob("*.py") if "__pycache__" not in f.parts]
