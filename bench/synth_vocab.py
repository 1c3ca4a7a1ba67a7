"""Vocabularies and schemas of :mod:`bench.synth`: NYC-Open-Data-like themes, entities, values.

A :class:`Col` says how a column is named, how a question refers to it (``phrase``) and
how its values are drawn (``kind`` plus ``arg``). A :class:`Theme` is one family of NYC
datasets (311 requests, restaurant inspections, ...): its fact table's key and columns,
and the entities its rows point at (which become dimension tables joined by a foreign key,
or bridge-linked tables). Many lake families share one theme, so unrelated tables share
vocabularies (boroughs, agencies, zip codes) the way a city's open-data portal does.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Col:
    name: str  # snake_case header before any re-spelling
    phrase: str  # how a question names it
    kind: str  # value generator, see ``bench.synth._draw``
    arg: object = None  # generator parameter: a vocabulary name, a (lo, hi) range, ...
    aliases: tuple[str, ...] = ()  # other names a foreign key to this column may carry


@dataclass(frozen=True)
class Entity:
    """A thing fact rows refer to: a dimension table (many-to-one) or a bridged one (many-to-many)."""

    name: str  # table role, e.g. "inspectors"
    singular: str  # "inspector"
    key: Col
    cols: tuple[Col, ...]


@dataclass(frozen=True)
class Theme:
    title: str  # dataset title, e.g. "311 Service Requests"
    entity: str  # plural phrase for its rows, e.g. "service requests"
    singular: str
    key: Col
    cols: tuple[Col, ...]
    dims: tuple[str, ...] = ()  # ENTITIES names its rows reference (many-to-one)
    bridged: tuple[str, ...] = ()  # ENTITIES names linked many-to-many through a bridge table


VOCAB: dict[str, list[str]] = {
    "borough": ["Manhattan", "Brooklyn", "Queens", "Bronx", "Staten Island"],
    "agency": ["NYPD", "DOB", "HPD", "DSNY", "DEP", "DOT", "DOHMH", "DPR", "FDNY", "DOE", "TLC", "DCWP", "DHS", "EDC", "DOF"],
    "agency_name": [
        "New York City Police Department", "Department of Buildings", "Department of Housing Preservation and Development",
        "Department of Sanitation", "Department of Environmental Protection", "Department of Transportation",
        "Department of Health and Mental Hygiene", "Department of Parks and Recreation", "Fire Department of New York",
        "Department of Education", "Taxi and Limousine Commission", "Department of Consumer and Worker Protection",
        "Department of Homeless Services", "Economic Development Corporation", "Department of Finance",
    ],
    "complaint_type": [
        "Noise - Residential", "Illegal Parking", "HEAT/HOT WATER", "Blocked Driveway", "Street Condition", "Water System",
        "Noise - Street/Sidewalk", "Sanitation Condition", "Rodent", "Dirty Conditions", "Street Light Condition",
        "Graffiti", "Derelict Vehicle", "Damaged Tree", "Sewer", "Plumbing", "Missed Collection", "Abandoned Vehicle",
        "Noise - Commercial", "Traffic Signal Condition", "Unsanitary Condition", "Homeless Person Assistance",
    ],
    "descriptor": [
        "Loud Music/Party", "Blocked Hydrant", "ENTIRE BUILDING", "No Access", "Pothole", "Leak (Use Comments)",
        "Banging/Pounding", "Rat Sighting", "Trash", "Street Light Out", "Graffiti", "With License Plate",
        "Branch Cracked and Will Fall", "Catch Basin Clogged/Flooding", "Mold", "Recycling", "Commercial Overnight Parking",
    ],
    "location_type": ["Residential Building/House", "Street/Sidewalk", "Store/Commercial", "Park/Playground", "Club/Bar/Restaurant", "Vacant Lot", "Subway Station"],
    "status": ["Open", "Closed", "Pending", "Assigned", "In Progress", "Started"],
    "resolution": [
        "The Police Department responded to the complaint and took action to fix the condition.",
        "The Department of Sanitation investigated this complaint and found no condition at the location.",
        "The complaint has been closed because the condition was corrected.",
        "A violation was issued at the address.",
        "The inspector was unable to gain access to the location.",
        "This service request was referred to another agency.",
    ],
    "cuisine": [
        "American", "Chinese", "Pizza", "Italian", "Mexican", "Japanese", "Caribbean", "Bakery Products/Desserts",
        "Latin American", "Coffee/Tea", "Spanish", "Indian", "Korean", "Thai", "Jewish/Kosher", "French", "Greek", "Donuts",
    ],
    "violation": [
        "Evidence of mice or live mice present in facility's food and/or non-food areas.",
        "Non-food contact surface improperly constructed.",
        "Cold food item held above 41 F.",
        "Hot food item not held at or above 140 F.",
        "Food contact surface not properly washed, rinsed and sanitized after each use.",
        "Plumbing not properly installed or maintained.",
        "Filth flies or food/refuse/sewage-associated flies present.",
        "Sanitized equipment or utensil improperly used or stored.",
    ],
    "violation_code": ["04L", "10F", "02G", "02B", "06D", "10B", "04N", "06C", "08A", "09C", "04H", "10H"],
    "inspection_action": [
        "Violations were cited in the following area(s).", "No violations were recorded at the time of this inspection.",
        "Establishment Closed by DOHMH.", "Establishment re-opened by DOHMH.",
    ],
    "critical_flag": ["Critical", "Not Critical", "Not Applicable"],
    "grade": ["A", "B", "C", "P", "Z", "N"],
    "inspection_type": ["Cycle Inspection / Initial Inspection", "Cycle Inspection / Re-inspection", "Pre-permit (Operational) / Initial Inspection", "Administrative Miscellaneous / Initial Inspection"],
    "job_type": ["A1", "A2", "A3", "NB", "DM", "SG"],
    "work_type": ["Plumbing", "Mechanical", "Boiler", "Construction Equipment", "Sprinkler", "Full Demolition", "Sign", "Curb Cut", "Solar"],
    "permit_status": ["ISSUED", "RE-ISSUED", "IN PROCESS", "REVOKED", "EXPIRED"],
    "license_type": ["GC", "MP", "FS", "OB", "SI", "NW"],
    "vehicle_type": ["Sedan", "Station Wagon/Sport Utility Vehicle", "Taxi", "Pick-up Truck", "Box Truck", "Bus", "Bike", "Motorcycle", "E-Bike", "Van"],
    "factor": [
        "Driver Inattention/Distraction", "Failure to Yield Right-of-Way", "Following Too Closely", "Unspecified",
        "Backing Unsafely", "Passing or Lane Usage Improper", "Unsafe Speed", "Traffic Control Disregarded",
        "Alcohol Involvement", "Turning Improperly", "Pavement Slippery", "View Obstructed/Limited",
    ],
    "offense": [
        "ASSAULT 3 & RELATED OFFENSES", "PETIT LARCENY", "FELONY ASSAULT", "DANGEROUS DRUGS", "ROBBERY", "BURGLARY",
        "CRIMINAL MISCHIEF & RELATED OF", "GRAND LARCENY", "HARRASSMENT 2", "DANGEROUS WEAPONS", "VEHICLE AND TRAFFIC LAWS",
    ],
    "law_category": ["F", "M", "V", "I"],
    "age_group": ["<18", "18-24", "25-44", "45-64", "65+"],
    "sex": ["M", "F"],
    "race": ["BLACK", "WHITE HISPANIC", "WHITE", "BLACK HISPANIC", "ASIAN / PACIFIC ISLANDER", "AMERICAN INDIAN/ALASKAN NATIVE", "UNKNOWN"],
    "title": [
        "POLICE OFFICER", "TEACHER", "FIREFIGHTER", "SANITATION WORKER", "CORRECTION OFFICER", "COMMUNITY ASSOCIATE",
        "CITY PARK WORKER", "ADMINISTRATIVE STAFF ANALYST", "CLERICAL ASSOCIATE", "ELECTRICIAN", "INSPECTOR", "SCHOOL AIDE",
    ],
    "pay_basis": ["per Annum", "per Hour", "per Day", "Prorated Annual"],
    "work_location": ["MANHATTAN", "BROOKLYN", "QUEENS", "BRONX", "RICHMOND", "WESTCHESTER", "OTHER"],
    "tree_species": [
        "London planetree", "honeylocust", "Callery pear", "pin oak", "Norway maple", "littleleaf linden", "cherry",
        "Japanese zelkova", "ginkgo", "Sophora", "red maple", "green ash", "American linden", "silver maple",
    ],
    "tree_health": ["Good", "Fair", "Poor"],
    "tree_status": ["Alive", "Stump", "Dead"],
    "steward": ["None", "1or2", "3or4", "4orMore"],
    "sidewalk": ["NoDamage", "Damage"],
    "nta": [
        "Upper West Side", "Park Slope-Gowanus", "Astoria", "Bedford", "Washington Heights South", "Flushing",
        "East Harlem North", "Williamsburg", "Jackson Heights", "Bay Ridge", "Forest Hills", "Mott Haven-Port Morris",
        "Chelsea-Hudson Yards", "Crown Heights North", "Sunset Park West", "St. George-New Brighton",
    ],
    "park": [
        "Central Park", "Prospect Park", "Flushing Meadows Corona Park", "Pelham Bay Park", "Van Cortlandt Park",
        "Marine Park", "Riverside Park", "Fort Greene Park", "McCarren Park", "Clove Lakes Park", "Forest Park",
        "Bryant Park", "Washington Square Park", "Crotona Park", "Astoria Park", "Alley Pond Park",
    ],
    "event_category": ["Fitness", "Arts & Culture", "Nature", "Education", "Family Festivals", "Sports", "Tours", "Volunteer"],
    "audience": ["All Ages", "Adults", "Kids", "Seniors", "Teens", "Families"],
    "film_category": ["Television", "Film", "Commercial", "Still Photography", "Theater", "WEB", "Documentary", "Student"],
    "film_subcategory": ["Episodic series", "Feature", "Not Applicable", "Cable-episodic", "Music Video", "Reality", "Short", "Pilot"],
    "event_type": ["Shooting Permit", "Rigging Permit", "Theater Load in and Load Outs", "DCAS Prep/Shoot/Wrap Permit"],
    "payment_type": ["Credit card", "Cash", "No charge", "Dispute", "Unknown"],
    "vendor": ["Creative Mobile Technologies", "VeriFone Inc.", "Curb Mobility", "Uber", "Lyft", "Via"],
    "breed": [
        "Yorkshire Terrier", "Shih Tzu", "Chihuahua", "Labrador Retriever", "Maltese", "American Pit Bull Terrier",
        "Pomeranian", "Beagle", "Poodle, Toy", "Golden Retriever", "Havanese", "Bichon Frise", "Dachshund", "Boxer",
    ],
    "dog_name": ["Bella", "Max", "Coco", "Charlie", "Lucy", "Rocky", "Lola", "Buddy", "Daisy", "Teddy", "Luna", "Milo", "Princess", "Toby"],
    "gender": ["M", "F"],
    "school_level": ["Elementary", "Middle", "High school", "K-8", "Secondary School", "Early Childhood"],
    "school_type": ["General Academic", "Special Education", "Career Technical", "Transfer School", "Charter"],
    "school_name": [
        "P.S. 015 Roberto Clemente", "P.S. 019 Asher Levy", "Stuyvesant High School", "Brooklyn Technical High School",
        "I.S. 318 Eugenio Maria De Hostos", "Bronx High School of Science", "Townsend Harris High School",
        "P.S. 321 William Penn", "M.S. 51 William Alexander", "Frank Sinatra School of the Arts", "Curtis High School",
        "Fiorello H. LaGuardia High School", "Edward R. Murrow High School", "Francis Lewis High School",
    ],
    "housing_class": ["A", "B", "C", "I"],
    "violation_status": ["Open", "Close", "Violation Closed", "NOV Sent Out", "First No Access to Re-Inspect Violation"],
    "nov_description": [
        "§ 27-2005 ADM CODE REPAIR THE BROKEN OR DEFECTIVE PLASTERED SURFACES",
        "§ 27-2017.3 HMC: TRACE AND ABATE THE NUISANCE CONSISTING OF MICE",
        "§ 27-2045 ADM CODE REPAIR OR REPLACE THE SMOKE DETECTOR",
        "§ 27-2031 ADM CODE PROVIDE HOT WATER AT ALL HOT WATER FIXTURES",
        "§ 27-2013 ADM CODE PAINT WITH LIGHT COLORED PAINT TO THE SATISFACTION OF THIS DEPARTMENT",
    ],
    "project_name": [
        "CONFIDENTIAL", "MELROSE COMMONS", "SENDERO VERDE", "ESSEX CROSSING", "HUNTERS POINT SOUTH", "BEDFORD UNION ARMORY",
        "ATLANTIC YARDS", "ARVERNE EAST", "LINDEN PLAZA", "CORNELL TECH", "SPOFFORD", "BRONX POINT",
    ],
    "reporting_type": ["New Construction", "Preservation"],
    "street": [
        "BROADWAY", "3 AVENUE", "AMSTERDAM AVENUE", "GRAND CONCOURSE", "FLATBUSH AVENUE", "QUEENS BOULEVARD",
        "ATLANTIC AVENUE", "NOSTRAND AVENUE", "JAMAICA AVENUE", "LEXINGTON AVENUE", "EASTERN PARKWAY", "OCEAN AVENUE",
        "RICHMOND AVENUE", "VICTORY BOULEVARD", "WEST 125 STREET", "EAST 149 STREET", "FULTON STREET", "BEDFORD AVENUE",
        "NORTHERN BOULEVARD", "ROOSEVELT AVENUE", "CONEY ISLAND AVENUE", "WHITE PLAINS ROAD", "HYLAN BOULEVARD",
    ],
    "zip": [str(z) for z in (
        10001, 10002, 10003, 10009, 10011, 10013, 10016, 10019, 10025, 10027, 10031, 10032, 10033, 10034, 10040,
        10451, 10452, 10453, 10456, 10457, 10458, 10460, 10462, 10463, 10467, 10468, 10469, 10472,
        11201, 11203, 11206, 11207, 11208, 11211, 11212, 11213, 11215, 11216, 11217, 11220, 11221, 11224, 11226, 11229, 11230, 11233, 11235,
        11354, 11355, 11368, 11372, 11373, 11375, 11377, 11385, 11432, 11434, 11691,
        10301, 10304, 10305, 10306, 10312, 10314,
    )],
    "first_name": [
        "JOSE", "MARIA", "MICHAEL", "JENNIFER", "DAVID", "JESSICA", "JOHN", "ASHLEY", "ROBERT", "CHRISTOPHER", "WEI",
        "FATIMA", "MOHAMMED", "ANA", "KEVIN", "PRIYA", "SARAH", "DANIEL", "LUIS", "KIMBERLY", "ANTHONY", "MEI", "OMAR", "ROSA",
    ],
    "last_name": [
        "RODRIGUEZ", "SMITH", "WILLIAMS", "JOHNSON", "GARCIA", "BROWN", "MARTINEZ", "LEE", "CHEN", "JONES", "DAVIS",
        "HERNANDEZ", "WANG", "NGUYEN", "PEREZ", "KHAN", "COHEN", "SANTIAGO", "MILLER", "JACKSON", "RIVERA", "PATEL", "KIM",
    ],
    "company_prefix": ["EMPIRE", "METRO", "HUDSON", "BROOKLYN", "GOTHAM", "LIBERTY", "ATLANTIC", "BRONX", "QUEENS", "ISLAND", "CITY", "HARBOR"],
    "company_suffix": ["CONSTRUCTION CORP", "PLUMBING INC", "BUILDERS LLC", "ELECTRIC CO", "MECHANICAL INC", "CONTRACTING LLC", "RESTORATION CORP"],
    "restaurant_word": ["GOLDEN", "LUCKY", "PIZZA", "BAGEL", "TACO", "NOODLE", "GRILL", "DELI", "CAFE", "KITCHEN", "SUSHI", "DINER", "BAKERY", "HOUSE"],
    "make": ["TOYOTA", "HONDA", "FORD", "NISSAN", "CHEVROLET", "BMW", "HYUNDAI", "JEEP", "TESLA", "SUBARU", "MERCEDES", "DODGE"],
    "precinct_name": [f"{n} Precinct" for n in (1, 5, 6, 7, 9, 10, 13, 14, 17, 18, 19, 20, 23, 24, 25, 26, 28, 30, 32, 33, 34, 40, 41, 42, 43, 44)],
    "unit_rank": ["PO", "SGT", "LT", "CPT", "DET", "INSP"],
    "yes_no": ["Y", "N"],
    "event_title": [
        "Shape Up NYC: Zumba", "Summer Movies on the Lawn", "Urban Park Rangers Bird Walk", "Kids Art Workshop", "Jazz in the Park",
        "Tai Chi for Seniors", "Tree Planting Day", "Free Kayaking", "Learn to Fish", "Halloween Haunted Walk", "Stargazing Night",
    ],
    "fund_source": ["City Capital", "State Grant", "Federal Grant", "Private", "Operating Budget"],
}

E = Entity
ENTITIES: dict[str, Entity] = {
    e.name: e
    for e in (
        E("inspectors", "inspector", Col("inspector_id", "inspector id", "id", "big", ("inspector", "insp_id", "inspector_number")), (
            Col("first_name", "first name", "vocab", "first_name"), Col("last_name", "last name", "vocab", "last_name"),
            Col("title", "job title", "vocab", "title"), Col("hire_date", "hire date", "date", (1990, 2022)),
            Col("assigned_borough", "assigned borough", "vocab", "borough"),
        )),
        E("locations", "location", Col("location_id", "location id", "id", "seq", ("loc_id", "site_id")), (
            Col("address", "street address", "address"), Col("zip_code", "zip code", "vocab", "zip"),
            Col("borough", "borough", "vocab", "borough"), Col("latitude", "latitude", "lat"), Col("longitude", "longitude", "lon"),
            Col("nta_name", "neighborhood", "vocab", "nta"),
        )),
        E("contractors", "contractor", Col("license_number", "license number", "id", "code:L", ("license_no", "contractor_license", "lic_num")), (
            Col("business_name", "business name", "company"), Col("license_type", "license type", "vocab", "license_type"),
            Col("business_phone", "business phone", "phone"), Col("business_borough", "business borough", "vocab", "borough"),
            Col("license_expiration", "license expiration date", "date", (2020, 2027)),
        )),
        E("restaurants", "restaurant", Col("camis", "restaurant id", "id", "big", ("restaurant_id", "camis_id")), (
            Col("dba", "restaurant name", "restaurant"), Col("cuisine_description", "cuisine", "vocab", "cuisine"),
            Col("phone", "phone number", "phone"), Col("building", "building number", "int", (1, 2500)),
            Col("street", "street", "vocab", "street"), Col("zipcode", "zip code", "vocab", "zip"), Col("boro", "borough", "vocab", "borough"),
        )),
        E("vehicles", "vehicle", Col("vehicle_id", "vehicle id", "id", "code:V", ("veh_id", "unique_id")), (
            Col("vehicle_make", "vehicle make", "vocab", "make"), Col("vehicle_year", "vehicle year", "int", (1998, 2024)),
            Col("vehicle_type", "vehicle type", "vocab", "vehicle_type"), Col("state_registration", "registration state", "vocab", "yes_no"),
        )),
        E("officers", "officer", Col("tax_id", "officer tax id", "id", "big", ("officer_id", "member_id")), (
            Col("rank", "rank", "vocab", "unit_rank"), Col("last_name", "last name", "vocab", "last_name"),
            Col("first_name", "first name", "vocab", "first_name"), Col("command", "command", "vocab", "precinct_name"),
            Col("appointment_date", "appointment date", "date", (1995, 2023)),
        )),
        E("schools", "school", Col("dbn", "school dbn", "id", "dbn", ("school_dbn", "school_code")), (
            Col("school_name", "school name", "vocab", "school_name"), Col("borough", "borough", "vocab", "borough"),
            Col("school_type", "school type", "vocab", "school_type"), Col("grade_span", "grade span", "vocab", "school_level"),
            Col("principal", "principal last name", "vocab", "last_name"),
        )),
        E("parks", "park", Col("gispropnum", "park property number", "id", "park", ("park_id", "prop_id")), (
            Col("park_name", "park name", "vocab", "park"), Col("borough", "borough", "vocab", "borough"),
            Col("acres", "acreage", "float", (0.5, 900.0, 2)), Col("zipcode", "zip code", "vocab", "zip"),
        )),
        E("agencies", "agency", Col("agency_id", "agency id", "id", "seq", ("agency_code", "agency_number")), (
            Col("agency_acronym", "agency acronym", "vocab", "agency"), Col("agency_name", "agency name", "vocab", "agency_name"),
            Col("commissioner", "commissioner last name", "vocab", "last_name"), Col("fund_source", "funding source", "vocab", "fund_source"),
        )),
        E("drivers", "driver", Col("hack_license", "driver license number", "id", "big", ("driver_license", "hack_no")), (
            Col("driver_last_name", "driver last name", "vocab", "last_name"), Col("driver_first_name", "driver first name", "vocab", "first_name"),
            Col("license_expiration", "license expiration date", "date", (2021, 2027)), Col("wheelchair_accessible", "wheelchair accessible", "vocab", "yes_no"),
        )),
    )
}

T = Theme
THEMES: tuple[Theme, ...] = (
    T("311 Service Requests", "service requests", "service request", Col("unique_key", "request key", "id", "big"), (
        Col("created_date", "created date", "datetime", (2015, 2024)), Col("closed_date", "closed date", "datetime", (2015, 2024)),
        Col("agency", "agency", "vocab", "agency"), Col("complaint_type", "complaint type", "vocab", "complaint_type"),
        Col("descriptor", "descriptor", "vocab", "descriptor"), Col("location_type", "location type", "vocab", "location_type"),
        Col("incident_zip", "incident zip code", "vocab", "zip"), Col("incident_address", "incident address", "address"),
        Col("borough", "borough", "vocab", "borough"), Col("status", "status", "vocab", "status"),
        Col("resolution_description", "resolution description", "vocab", "resolution"), Col("community_board", "community board", "int", (1, 18)),
        Col("latitude", "latitude", "lat"), Col("longitude", "longitude", "lon"),
    ), dims=("agencies", "locations"), bridged=("inspectors",)),
    T("DOHMH Restaurant Inspection Results", "restaurant inspections", "inspection", Col("inspection_id", "inspection id", "id", "big"), (
        Col("inspection_date", "inspection date", "date", (2016, 2024)), Col("action", "inspection action", "vocab", "inspection_action"),
        Col("violation_code", "violation code", "vocab", "violation_code"), Col("violation_description", "violation description", "vocab", "violation"),
        Col("critical_flag", "critical flag", "vocab", "critical_flag"), Col("score", "inspection score", "int", (0, 120)),
        Col("grade", "grade", "vocab", "grade"), Col("grade_date", "grade date", "date", (2016, 2024)),
        Col("inspection_type", "inspection type", "vocab", "inspection_type"),
    ), dims=("restaurants",), bridged=("inspectors",)),
    T("Motor Vehicle Collisions - Crashes", "crashes", "crash", Col("collision_id", "collision id", "id", "big"), (
        Col("crash_date", "crash date", "date", (2013, 2024)), Col("crash_time", "crash time", "time"),
        Col("borough", "borough", "vocab", "borough"), Col("zip_code", "zip code", "vocab", "zip"),
        Col("on_street_name", "street name", "vocab", "street"), Col("number_of_persons_injured", "number of persons injured", "int", (0, 6)),
        Col("number_of_persons_killed", "number of persons killed", "int", (0, 2)),
        Col("contributing_factor_vehicle_1", "contributing factor", "vocab", "factor"), Col("vehicle_type_code1", "vehicle type", "vocab", "vehicle_type"),
        Col("latitude", "latitude", "lat"), Col("longitude", "longitude", "lon"),
    ), dims=("locations",), bridged=("vehicles",)),
    T("DOB Permit Issuance", "building permits", "permit", Col("job_number", "job number", "id", "big"), (
        Col("bin", "building identification number", "int", (1000000, 5999999)), Col("house_number", "house number", "int", (1, 3000)),
        Col("street_name", "street name", "vocab", "street"), Col("borough", "borough", "vocab", "borough"),
        Col("job_type", "job type", "vocab", "job_type"), Col("work_type", "work type", "vocab", "work_type"),
        Col("permit_status", "permit status", "vocab", "permit_status"), Col("filing_date", "filing date", "date", (2012, 2024)),
        Col("issuance_date", "issuance date", "date", (2012, 2024)), Col("expiration_date", "expiration date", "date", (2013, 2026)),
        Col("estimated_job_cost", "estimated job cost", "money", (500, 2_500_000)),
    ), dims=("contractors", "locations"), bridged=("inspectors",)),
    T("Housing Maintenance Code Violations", "housing violations", "violation", Col("violation_id", "violation id", "id", "big"), (
        Col("building_id", "building id", "int", (1, 900000)), Col("boro", "borough", "vocab", "borough"),
        Col("house_number", "house number", "int", (1, 3000)), Col("street_name", "street name", "vocab", "street"),
        Col("zip", "zip code", "vocab", "zip"), Col("apartment", "apartment", "apt"), Col("story", "story", "int", (1, 40)),
        Col("inspection_date", "inspection date", "date", (2014, 2024)), Col("class", "violation class", "vocab", "housing_class"),
        Col("nov_description", "notice of violation description", "vocab", "nov_description"),
        Col("current_status", "current status", "vocab", "violation_status"),
    ), dims=("locations",), bridged=("inspectors",)),
    T("NYPD Arrest Data", "arrests", "arrest", Col("arrest_key", "arrest key", "id", "big"), (
        Col("arrest_date", "arrest date", "date", (2006, 2024)), Col("ofns_desc", "offense description", "vocab", "offense"),
        Col("law_cat_cd", "law category", "vocab", "law_category"), Col("arrest_boro", "arrest borough", "vocab", "borough"),
        Col("arrest_precinct", "arrest precinct", "int", (1, 123)), Col("age_group", "age group", "vocab", "age_group"),
        Col("perp_sex", "perpetrator sex", "vocab", "sex"), Col("perp_race", "perpetrator race", "vocab", "race"),
        Col("latitude", "latitude", "lat"), Col("longitude", "longitude", "lon"),
    ), dims=("locations",), bridged=("officers",)),
    T("Citywide Payroll Data", "payroll records", "payroll record", Col("payroll_id", "payroll id", "id", "seq"), (
        Col("fiscal_year", "fiscal year", "int", (2014, 2024)), Col("last_name", "last name", "vocab", "last_name"),
        Col("first_name", "first name", "vocab", "first_name"), Col("title_description", "title", "vocab", "title"),
        Col("work_location_borough", "work location borough", "vocab", "work_location"), Col("pay_basis", "pay basis", "vocab", "pay_basis"),
        Col("base_salary", "base salary", "money", (18_000, 240_000)), Col("regular_hours", "regular hours", "float", (0.0, 2100.0, 2)),
        Col("total_ot_paid", "overtime paid", "money", (0, 90_000)), Col("agency_start_date", "agency start date", "date", (1980, 2024)),
    ), dims=("agencies",)),
    T("2015 Street Tree Census", "street trees", "tree", Col("tree_id", "tree id", "id", "big"), (
        Col("tree_dbh", "trunk diameter", "int", (1, 60)), Col("status", "tree status", "vocab", "tree_status"),
        Col("health", "health", "vocab", "tree_health"), Col("spc_common", "species", "vocab", "tree_species"),
        Col("steward", "stewardship", "vocab", "steward"), Col("sidewalk", "sidewalk damage", "vocab", "sidewalk"),
        Col("address", "address", "address"), Col("zipcode", "zip code", "vocab", "zip"), Col("borough", "borough", "vocab", "borough"),
        Col("nta_name", "neighborhood", "vocab", "nta"), Col("created_at", "census date", "date", (2015, 2016)),
    ), dims=("parks",)),
    T("NYC Parks Events Listing", "park events", "event", Col("event_id", "event id", "id", "seq"), (
        Col("title", "event title", "vocab", "event_title"), Col("date", "event date", "date", (2017, 2024)),
        Col("start_time", "start time", "time"), Col("end_time", "end time", "time"),
        Col("category", "event category", "vocab", "event_category"), Col("audience", "audience", "vocab", "audience"),
        Col("cost_free", "free event", "vocab", "yes_no"), Col("borough", "borough", "vocab", "borough"),
    ), dims=("parks",), bridged=("agencies",)),
    T("Film Permits", "film permits", "film permit", Col("event_id", "permit event id", "id", "big"), (
        Col("event_type", "event type", "vocab", "event_type"), Col("start_date_time", "start date", "datetime", (2012, 2024)),
        Col("end_date_time", "end date", "datetime", (2012, 2024)), Col("event_agency", "event agency", "vocab", "agency_name"),
        Col("borough", "borough", "vocab", "borough"), Col("category", "film category", "vocab", "film_category"),
        Col("subcategory_name", "film subcategory", "vocab", "film_subcategory"), Col("zip_codes", "zip code", "vocab", "zip"),
        Col("police_precincts", "police precinct", "int", (1, 123)),
    ), dims=("locations",), bridged=("contractors",)),
    T("Yellow Taxi Trip Records", "taxi trips", "trip", Col("trip_id", "trip id", "id", "big"), (
        Col("pickup_datetime", "pickup time", "datetime", (2019, 2024)), Col("dropoff_datetime", "dropoff time", "datetime", (2019, 2024)),
        Col("passenger_count", "passenger count", "int", (1, 6)), Col("trip_distance", "trip distance", "float", (0.1, 30.0, 2)),
        Col("pu_location_id", "pickup zone", "int", (1, 265)), Col("do_location_id", "dropoff zone", "int", (1, 265)),
        Col("fare_amount", "fare amount", "money", (3, 120)), Col("tip_amount", "tip amount", "money", (0, 40)),
        Col("payment_type", "payment type", "vocab", "payment_type"), Col("vendor_name", "vendor", "vocab", "vendor"),
    ), dims=("drivers",), bridged=("vehicles",)),
    T("NYC Dog Licensing Dataset", "dog licenses", "dog license", Col("license_id", "dog license id", "id", "seq"), (
        Col("animal_name", "dog name", "vocab", "dog_name"), Col("animal_gender", "dog gender", "vocab", "gender"),
        Col("animal_birth_year", "birth year", "int", (2005, 2023)), Col("breed_name", "breed", "vocab", "breed"),
        Col("zip_code", "zip code", "vocab", "zip"), Col("license_issued_date", "license issue date", "date", (2014, 2024)),
        Col("license_expired_date", "license expiration date", "date", (2015, 2026)), Col("borough", "borough", "vocab", "borough"),
    ), dims=("locations",)),
    T("School Demographic Snapshot", "school enrollment records", "enrollment record", Col("record_id", "record id", "id", "seq"), (
        Col("school_year", "school year", "school_year"), Col("total_enrollment", "total enrollment", "int", (80, 5500)),
        Col("grade_level", "grade level", "vocab", "school_level"), Col("female_pct", "female percent", "float", (0.2, 0.8, 3)),
        Col("ell_pct", "english language learner percent", "float", (0.0, 0.6, 3)), Col("poverty_pct", "poverty percent", "float", (0.1, 0.99, 3)),
        Col("attendance_rate", "attendance rate", "float", (0.7, 0.99, 3)), Col("graduation_rate", "graduation rate", "float", (0.4, 1.0, 3)),
    ), dims=("schools",), bridged=("agencies",)),
    T("Affordable Housing Production by Building", "housing projects", "housing project", Col("project_id", "project id", "id", "big"), (
        Col("project_name", "project name", "vocab", "project_name"), Col("project_start_date", "project start date", "date", (2014, 2024)),
        Col("borough", "borough", "vocab", "borough"), Col("postcode", "postcode", "vocab", "zip"),
        Col("reporting_construction_type", "construction type", "vocab", "reporting_type"),
        Col("extremely_low_income_units", "extremely low income units", "int", (0, 120)), Col("low_income_units", "low income units", "int", (0, 300)),
        Col("total_units", "total units", "int", (1, 900)), Col("latitude", "latitude", "lat"), Col("longitude", "longitude", "lon"),
    ), dims=("locations", "contractors"), bridged=("agencies",)),
)
