"""The numba cache guard: cached code compiled from older sources is dropped, current code kept."""

from __future__ import annotations

from pathlib import Path

from splendor_env.numba_cache import STAMP_NAME, package_sources, refresh_cache


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "rules.py").write_text("RULE = 1\n")
    (pkg / "vector.py").write_text("from .rules import RULE\n")
    return pkg


def _fake_cache(pkg: Path) -> list[Path]:
    files = [
        pkg / "__pycache__" / "vector._step-1.py311.nbi",
        pkg / "__pycache__" / "vector._step-1.py311.1.nbc",
    ]
    for f in files:
        f.write_bytes(b"compiled")
    return files


def test_cache_is_cleared_when_another_file_changes(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    assert refresh_cache(pkg, package_sources(pkg))  # first run: no stamp yet
    cached = _fake_cache(pkg)
    assert not refresh_cache(pkg, package_sources(pkg))
    assert all(f.exists() for f in cached), "unchanged sources keep the cache"
    (pkg / "rules.py").write_text("RULE = 2\n")  # vector.py itself is untouched
    assert refresh_cache(pkg, package_sources(pkg))
    assert not any(f.exists() for f in cached)
    assert (pkg / "__pycache__" / STAMP_NAME).exists()


def test_an_edit_in_a_subpackage_clears_every_cache(tmp_path: Path) -> None:
    """observation.py inlines modules/orient.py: editing the module file must drop both caches."""
    pkg = _package(tmp_path)
    (pkg / "modules" / "__pycache__").mkdir(parents=True)
    (pkg / "modules" / "orient.py").write_text("BOX = 1\n")
    assert refresh_cache(pkg, package_sources(pkg))
    cached = _fake_cache(pkg) + [pkg / "modules" / "__pycache__" / "orient.observe-1.py311.nbi"]
    cached[-1].write_bytes(b"compiled")
    assert not refresh_cache(pkg, package_sources(pkg))
    (pkg / "modules" / "orient.py").write_text("BOX = 2\n")
    assert refresh_cache(pkg, package_sources(pkg))
    assert not any(f.exists() for f in cached)


def test_guard_tolerates_a_read_only_cache(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    (pkg / "__pycache__").chmod(0o500)
    try:
        refresh_cache(pkg, package_sources(pkg))  # must not raise
    finally:
        (pkg / "__pycache__").chmod(0o700)


def test_installed_packages_carry_a_current_stamp() -> None:
    import agents
    import splendor_env

    for pkg in (Path(splendor_env.__file__).parent, Path(agents.__file__).parent):
        assert (pkg / "__pycache__" / STAMP_NAME).exists()
