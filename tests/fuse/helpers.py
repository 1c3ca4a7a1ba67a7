"""The example lake's rows and small intent graphs, shared by the fuse tests."""
from __future__ import annotations

import csv
import os

from raylake.intent.model import IntentGraph


def rows(lake, path):
    with open(os.path.join(lake, path), newline="") as fh:
        return list(csv.DictReader(fh))


def club_players(lake):
    return [{"op": "start", "new": "sports/player.csv", "anchor": None},
            {"op": "join", "new": "sports/club.csv", "anchor": "sports/player.csv",
             "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}}]


def graph(trees):
    return IntentGraph.from_json({"trees": trees, "joins": []})
