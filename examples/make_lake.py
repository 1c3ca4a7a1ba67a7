"""Write the example lake in ``examples/lake`` (deterministic; the CSVs are committed).

- GRAFT Fig. 1: universities, the professors and lecturers shards (headers re-spelled and
  reordered), the instructor→department bridge, departments.
- GRAFT Fig. 4: clubs, players, and two shards of match points.
- EcoTable Fig. 1: orders, revision history, service types, workflow steps, service pricing.
- Distractors from unrelated domains, some sharing generic headers (id, name, city).

Run ``python examples/make_lake.py`` to regenerate.
"""
from __future__ import annotations

import csv
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lake")
rng = random.Random(7)

FIRST = ["Alice", "Bob", "Carol", "Dan", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia",
         "Peggy", "Rupert", "Sybil", "Trent", "Uma", "Victor", "Wendy", "Xavier", "Yara", "Zoe", "Quentin"]
LAST = ["Chen", "Smith", "Davis", "Lee", "Garcia", "Kim", "Patel", "Nguyen", "Brown", "Khan", "Rossi", "Silva"]


def write(name: str, header: list[str], rows: list[list]) -> None:
    os.makedirs(os.path.dirname(os.path.join(OUT, name)), exist_ok=True)
    with open(os.path.join(OUT, name), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def person() -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def universities_fig1() -> None:
    unis = [("U001", "MIT", "Massachusetts"), ("U002", "Stanford University", "California"),
            ("U003", "Carnegie Mellon Univ.", "Pennsylvania"), ("U004", "UC Berkeley", "California"),
            ("U005", "University of Texas", "Texas"), ("U006", "Georgia Tech", "Georgia"),
            ("U007", "University of Washington", "Washington"), ("U008", "Cornell University", "New York")]
    write("universities/universities.csv", ["UnivID", "UniversityName", "State"], [list(u) for u in unis])
    depts = [("D01", "Computer Science"), ("D02", "Mathematics"), ("D03", "Physics"), ("D04", "Chemistry"), ("D05", "Biology")]
    write("universities/departments.csv", ["DepartmentID", "DepartmentName"], [list(d) for d in depts])
    instructors, prof, lect = [], [], []
    for i in range(101, 141):
        iid = f"I{i}"
        instructors.append([iid, person(), rng.choice(depts)[0]])
        uni = rng.choice(unis)[0]
        if i % 2:
            prof.append([uni, iid, "Professor"])
        else:
            lect.append([rng.choice(["Lecturer", "Senior Lecturer", "Assistant Professor"]), iid, uni])
    write("universities/instructors.csv", ["InstructorID", "InstructorName", "DepartmentID"], instructors)
    write("universities/professors.csv", ["UnivID", "InstructorID", "Role"], prof)
    # the second shard: re-spelled headers, reordered columns (Position, EmployeeID, SchoolCode)
    write("universities/lecturers.csv", ["Position", "EmployeeID", "SchoolCode"], lect)


def clubs_fig4() -> None:
    clubs = ["AIB", "BK Slide", "IFK Mariehamn", "Honved", "Ferencvaros", "Sparta", "Dukla", "Viktoria"]
    write("sports/club.csv", ["Club_ID", "Club_Name", "Region", "Start_year"],
          [[i + 1, c, rng.choice(["UK", "USA", "France", "Hungary", "Finland"]), rng.randint(1950, 2010)] for i, c in enumerate(clubs)])
    players = [[p, person(), rng.randint(1, len(clubs)), rng.choice(["Forward", "Guard", "Center"])] for p in range(1, 41)]
    write("sports/player.csv", ["Player_ID", "Name", "Club_ID", "Position"], players)
    points = [[rng.randint(1, 40), m, rng.randint(0, 30)] for m in range(1, 81)]
    write("sports/points_2019.csv", ["Player_ID", "Match_ID", "Points"], points[:40])
    write("sports/points_2020.csv", ["MatchId", "PlayerId", "POINTS"], [[m, p, s] for p, m, s in points[40:]])


def orders_ecotable() -> None:
    orders, history = [], []
    for n in range(1, 31):
        oid = f"N{n:03d}"
        created = f"2024/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"
        orders.append([oid, created, rng.choice(["NULL", f"2025/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"])])
        history.append([oid, "payment", rng.choice(["COD", "CARD"]), created.replace("/", "-")])
        for s in rng.sample(["S001", "S002", "S003", "S004"], 2):
            history.append([oid, "step_id", s, created.replace("/", "-")])
    write("commerce/orders.csv", ["order_id", "created_at", "completed_at"], orders)
    write("commerce/revision_history.csv", ["id", "change_type", "status", "change_at"], history)
    write("commerce/service_types.csv", ["service_id", "service_name", "service_type"],
          [["P001_Regular", "Standard", "payment"], ["P002_VIP", "Priority", "payment"], ["P003_Enterprise", "Customized", "step_stage"]])
    write("commerce/workflow_steps.csv", ["step_id", "step_name", "service_id"],
          [["S001", "Received", "P001"], ["S002", "Review", "P002"], ["S003", "Packing", "P002"], ["S004", "Dispatched", "P002"]])
    write("commerce/service_pricing.csv", ["service plan", "base_fee"],
          [["Regular (Version 1)", "10.00 CNY"], ["VIP (Version 2)", "25.00 CNY"], ["Enterprise (Version 1)", "40.00 CNY"]])


def distractors() -> None:
    cities = ["Paris", "Lyon", "Berlin", "Madrid", "Rome", "Oslo", "Vienna", "Prague", "Dublin", "Lisbon"]
    write("misc/weather.csv", ["city", "date", "max_temperature", "precipitation"],
          [[c, f"2023-0{m}-15", rng.randint(-5, 35), round(rng.random() * 20, 1)] for c in cities for m in range(1, 4)])
    write("misc/movies.csv", ["movie_id", "title", "director", "year", "rating"],
          [[i, f"Movie {i}", person(), rng.randint(1970, 2023), round(rng.uniform(2, 9.5), 1)] for i in range(1, 31)])
    write("misc/products.csv", ["product_id", "product_name", "category", "price"],
          [[i, f"Product {i}", rng.choice(["toys", "books", "garden", "tools"]), round(rng.uniform(1, 300), 2)] for i in range(1, 26)])
    write("misc/employees.csv", ["emp_no", "name", "title", "salary", "city"],
          [[1000 + i, person(), rng.choice(["Engineer", "Manager", "Analyst"]), rng.randint(40, 160) * 1000, rng.choice(cities)] for i in range(30)])
    write("misc/countries.csv", ["country_code", "country_name", "population", "continent"],
          [["FR", "France", 68, "Europe"], ["DE", "Germany", 84, "Europe"], ["JP", "Japan", 125, "Asia"], ["BR", "Brazil", 216, "South America"],
           ["NG", "Nigeria", 223, "Africa"], ["CA", "Canada", 39, "North America"], ["AU", "Australia", 26, "Oceania"]])
    write("misc/flights.csv", ["flight_no", "origin", "destination", "distance_km", "airline"],
          [[f"FL{i:03d}", rng.choice(cities), rng.choice(cities), rng.randint(200, 2500), rng.choice(["Air A", "Blue Sky", "JetX"])] for i in range(25)])
    write("misc/books.csv", ["isbn", "book_title", "author", "pages", "publisher"],
          [[f"978-{rng.randint(1000000000, 9999999999)}", f"Book {i}", person(), rng.randint(90, 900), rng.choice(["Penguin", "Vintage", "Orbit"])] for i in range(25)])
    write("misc/hospitals.csv", ["hospital_id", "name", "city", "beds"],
          [[i, f"{c} General", c, rng.randint(80, 900)] for i, c in enumerate(cities, 1)])
    write("misc/patients.csv", ["patient_id", "name", "age", "hospital_id"],
          [[i, person(), rng.randint(1, 95), rng.randint(1, len(cities))] for i in range(1, 41)])
    write("misc/stores.csv", ["store_id", "store_name", "city", "opened"],
          [[i, f"Store {c}", c, rng.randint(1990, 2020)] for i, c in enumerate(cities, 1)])
    write("misc/sales.csv", ["sale_id", "store_id", "product_id", "quantity"],
          [[i, rng.randint(1, len(cities)), rng.randint(1, 25), rng.randint(1, 12)] for i in range(1, 61)])
    write("misc/courses.csv", ["course_id", "course_title", "credits", "department"],
          [[f"C{i}", f"Course {i}", rng.choice([3, 4, 6]), rng.choice(["Computer Science", "Mathematics", "History"])] for i in range(1, 21)])
    write("misc/students.csv", ["student_id", "first_name", "last_name", "major", "enrollment_year"],
          [[i, rng.choice(FIRST), rng.choice(LAST), rng.choice(["Physics", "History", "Art"]), rng.randint(2015, 2023)] for i in range(1, 41)])


if __name__ == "__main__":
    universities_fig1()
    clubs_fig4()
    orders_ecotable()
    distractors()
    print(f"wrote {sum(len(f) for _, _, f in os.walk(OUT))} files under {OUT}")
