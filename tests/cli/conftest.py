"""Fixtures for the CLI tests beyond tests/conftest.py."""

from tests.cli.disks import disk  # noqa: F401  (a fixture: a small tmpfs, see disks.py)
