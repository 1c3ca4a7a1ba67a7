"""One toolbox over the example index for every tool test."""
from __future__ import annotations

import csv
import os

import pytest


@pytest.fixture(scope="session")
def toolbox(example_index):
    from raylake.tools import Toolbox

    return Toolbox(example_index)


@pytest.fixture(scope="session")
def read_rows(example_lake):
    """A lake CSV read with the standard library: the tests' independent view of the data."""

    def read(path: str) -> list[dict]:
        with open(os.path.join(example_lake, path), newline="") as f:
            return list(csv.DictReader(f))

    return read
