"""Hand-built lakes of the GRAFT paper's figures (no index, no Ray: fast)."""
from __future__ import annotations

import pytest

from raylake.learn.lake_arrays import LakeArrays

# Fig. 4: clubs, players and their points in two union shards with differently spelled headers.
FIG4_TABLES = {
    "club": {"Club_ID": [1, 2, 3], "Club_Name": ["AIB", "BK Slide", "Hertha"], "Region": ["USA", "USA", "UK"]},
    "player": {"Player_ID": [10, 11, 12], "Name": ["Alice Smith", "Olivia Davis", "Bo Li"], "Club_ID": [1, 2, 3]},
    "points_2019": {"Player_ID": [10, 11], "Match_ID": [1, 2], "Points": [15, 23]},
    "points_2020": {"PlayerId": [12, 10], "MatchId": [41, 42], "POINTS": [5, 16]},
}
FIG4_JOINS = [
    ("club", "Club_ID", "player", "Club_ID", 0.95),
    ("player", "Player_ID", "points_2019", "Player_ID", 0.9),
    ("player", "Player_ID", "points_2020", "PlayerId", 0.85),
]
FIG4_UNIONS = [("points_2019", "points_2020", {"Player_ID": "PlayerId", "Match_ID": "MatchId", "Points": "POINTS"}, 0.9)]

# Fig. 1: instructors and universities, linked through professors/lecturers shards holding only keys
# (plus the role column, which the sampler may or may not keep).
FIG1_TABLES = {
    "universities": {"UnivID": ["U001", "U002"], "UniversityName": ["MIT", "Stanford University"], "State": ["Massachusetts", "California"]},
    "professors": {"UnivID": ["U001", "U001"], "InstructorID": ["I101", "I103"], "Role": ["Professor", "Professor"]},
    "lecturers": {"Position": ["Lecturer", "Assistant Professor"], "EmployeeID": ["I102", "I104"], "SchoolCode": ["U006", "U002"]},
    "instructors": {"InstructorID": ["I101", "I102"], "InstructorName": ["Mallory Davis", "Carol Brown"], "DepartmentID": ["D04", "D01"]},
    "departments": {"DepartmentID": ["D01", "D04"], "DepartmentName": ["Computer Science", "Physics"]},
}
FIG1_JOINS = [
    ("universities", "UnivID", "professors", "UnivID", 0.9),
    ("universities", "UnivID", "lecturers", "SchoolCode", 0.8),
    ("professors", "InstructorID", "instructors", "InstructorID", 0.9),
    ("lecturers", "EmployeeID", "instructors", "InstructorID", 0.85),
    ("instructors", "DepartmentID", "departments", "DepartmentID", 0.9),
]
FIG1_UNIONS = [("professors", "lecturers", {"UnivID": "SchoolCode", "InstructorID": "EmployeeID", "Role": "Position"}, 0.8)]


@pytest.fixture(scope="session")
def embedder():
    from raylake.index.embed import Embedder

    return Embedder()


@pytest.fixture(scope="session")
def fig4(embedder) -> LakeArrays:
    return LakeArrays.from_tables(FIG4_TABLES, FIG4_JOINS, FIG4_UNIONS, embedder=embedder)


@pytest.fixture(scope="session")
def fig1(embedder) -> LakeArrays:
    return LakeArrays.from_tables(FIG1_TABLES, FIG1_JOINS, FIG1_UNIONS, embedder=embedder)
