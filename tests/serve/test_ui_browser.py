"""The web page in a real browser: Debian's chromium, headless, driven by selenium through the
system chromedriver (nothing downloaded at run time). One browser for the module, over the
token-protected service of the ``served`` fixture; the cases run in order, like a user would."""
from __future__ import annotations

import os
import shutil

import pytest
import requests

TOKEN = "test-token-123"
Q = "which clubs have the most players?"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
    pytest.skip("no chromium/chromedriver: `apt-get install chromium chromium-driver` (make setup does, as root)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    return str(tmp_path_factory.mktemp("downloads"))


@pytest.fixture(scope="module")
def browser(downloads):
    opts = webdriver.ChromeOptions()
    opts.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
              "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    except Exception as exc:  # a broken browser install is the machine's problem, not the page's
        pytest.skip(f"chromium did not start: {str(exc).splitlines()[0]}")
    driver.set_page_load_timeout(30)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    yield driver
    driver.quit()


def wait(driver, cond, timeout=60):
    return WebDriverWait(driver, timeout).until(cond)


def errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_token_mode_asks_for_the_token(served, browser):
    browser.get(served["url"] + "/")
    box = wait(browser, EC.visibility_of_element_located((By.ID, "token-box")))
    assert "token" in box.text.lower()
    assert browser.switch_to.active_element.get_attribute("id") == "token"
    browser.find_element(By.ID, "token").send_keys(TOKEN, Keys.ENTER)
    wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#examples button.example")))
    assert not browser.find_element(By.ID, "token-box").is_displayed()
    assert "27 tables" in browser.find_element(By.ID, "status").text


def test_page_loaded_without_console_errors(browser):
    assert errors(browser) == []


def test_question_renders_the_plan_graph(served, browser):
    want = requests.post(served["url"] + "/ask", json={"question": Q, "fuse": True, "preview": 20, "answer": True},
                         headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60).json()
    q = browser.find_element(By.ID, "question")
    q.clear()
    q.send_keys(Q)
    browser.find_element(By.ID, "ask").click()
    wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#plan svg g.node")))
    nodes = browser.find_elements(By.CSS_SELECTOR, "#plan svg g.node")
    got = {n.get_attribute("data-table"): n.get_attribute("data-role") for n in nodes}
    assert got == {t["table"]: t["role"] for t in want["tables"]}
    assert {"sports/player.csv", "sports/club.csv"} <= set(got)
    edges = {(e.get_attribute("data-op"), e.get_attribute("data-from"), e.get_attribute("data-to"))
             for e in browser.find_elements(By.CSS_SELECTOR, "#plan svg g.edge")}
    assert edges == {(s["op"], s["anchor"], s["new"]) for s in want["plan"] if s["anchor"]}
    assert any(op == "join" for op, _, _ in edges)
    # the intent graph beside it names the question's entities
    intent = browser.find_element(By.ID, "intent").text
    assert "clubs" in intent and "players" in intent


def test_fused_preview_and_timings_show_rows(browser):
    rows = browser.find_elements(By.CSS_SELECTOR, "#fused table tbody tr")
    assert 0 < len(rows) <= 20
    stages = [r.find_element(By.TAG_NAME, "td").text for r in browser.find_elements(By.CSS_SELECTOR, "#timings tbody tr")]
    assert "search" in stages and "total" in stages


def test_clicking_a_node_opens_its_profile(browser):
    node = browser.find_element(By.CSS_SELECTOR, '#plan g.node[data-table="sports/club.csv"]')
    node.click()
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-body"), "Columns"))
    assert browser.find_element(By.ID, "profile-h").text == "sports/club.csv"
    body = browser.find_element(By.ID, "profile-body").text
    assert "8 rows" in body and "Club_Name" in body
    assert browser.find_elements(By.CSS_SELECTOR, "#profile-body table")  # supports, columns, edges
    # the keyboard does the same: focus another node, press Enter
    other = browser.find_element(By.CSS_SELECTOR, '#plan g.node[data-table="sports/player.csv"]')
    browser.execute_script("arguments[0].focus()", other)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-h"), "sports/player.csv"))
    assert errors(browser) == []


def _downloaded(folder: str, name: str):
    path = os.path.join(folder, name)
    return path if os.path.isfile(path) and not os.path.exists(path + ".crdownload") else None


def test_download_the_fused_table_as_parquet_and_csv(served, browser, downloads):
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    want = requests.post(served["url"] + "/ask", json={"question": Q, "fuse": True},
                         headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60).json()["fused"]
    assert browser.find_element(By.ID, "downloads").is_displayed()
    for fmt, read in (("parquet", pq.read_table), ("csv", pacsv.read_csv)):
        browser.find_element(By.ID, f"download-{fmt}").click()
        wait(browser, EC.text_to_be_present_in_element((By.ID, "download-status"), f"Downloaded fused.{fmt}"))
        status = browser.find_element(By.ID, "download-status").text
        assert f"{want['rows']} rows" in status and status.endswith("."), status  # same plan as the one shown
        path = wait(browser, lambda d: _downloaded(downloads, f"fused.{fmt}"), 30)
        table = read(path)
        assert table.num_rows == want["rows"] and table.column_names == want["columns"]
    assert errors(browser) == []


def test_rejected_tables_can_be_shown(served, browser):
    want = requests.post(served["url"] + "/ask", json={"question": Q}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60).json()
    assert not browser.find_elements(By.CSS_SELECTOR, "#plan g.node.rejected")  # off by default
    toggle = browser.find_element(By.ID, "show-rejected")
    assert browser.find_element(By.ID, "rejected-count").text == str(len(want["rejected"]))
    toggle.send_keys(Keys.SPACE)  # the keyboard turns it on
    wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#plan g.node.rejected")))
    shown = [n.get_attribute("data-table") for n in browser.find_elements(By.CSS_SELECTOR, "#plan g.node.rejected")]
    assert shown == [r["table"] for r in want["rejected"]]
    plan = {n.get_attribute("data-table") for n in browser.find_elements(By.CSS_SELECTOR, "#plan g.node:not(.rejected)")}
    assert plan == {t["table"] for t in want["tables"]}  # the plan itself is unchanged
    browser.find_element(By.CSS_SELECTOR, "#plan g.node.rejected").click()
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-h"), shown[0]))
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-body"), "considered and left out"))
    toggle.click()
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#plan g.node.rejected"))


def test_lake_browser_finds_tables_and_walks_their_edges(served, browser):
    want = requests.get(served["url"] + "/tables", params={"q": "club", "limit": 50},
                        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).json()
    box = browser.find_element(By.ID, "lake-q")
    box.clear()
    box.send_keys("club", Keys.ENTER)
    wait(browser, EC.text_to_be_present_in_element((By.ID, "lake-summary"), "match “club”"))
    found = [b.get_attribute("data-table") for b in browser.find_elements(By.CSS_SELECTOR, "#lake-results button.lake-table")]
    assert found == [t["table"] for t in want["tables"]] and found[0] == "sports/club.csv"
    assert "Club_ID" in browser.find_element(By.ID, "lake-results").text  # why player.csv matched
    browser.find_element(By.CSS_SELECTOR, '#lake-results button[data-table="sports/club.csv"]').send_keys(Keys.ENTER)
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-h"), "sports/club.csv"))
    wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "#profile-body table.neighbours")))
    rows = browser.find_elements(By.CSS_SELECTOR, "#profile-body table.neighbours tbody tr")
    kinds = {(r.get_attribute("data-kind"), r.find_element(By.CSS_SELECTOR, "button.neighbour").get_attribute("data-table"))
             for r in rows}
    assert ("join", "sports/player.csv") in kinds
    # a neighbour opens its own profile
    browser.find_element(By.CSS_SELECTOR, '#profile-body button.neighbour[data-table="sports/player.csv"]').click()
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-h"), "sports/player.csv"))
    wait(browser, EC.text_to_be_present_in_element((By.ID, "profile-body"), "Player_ID"))
    assert errors(browser) == []


def test_bad_question_shows_the_one_line_error(browser):
    browser.find_element(By.ID, "question").clear()
    browser.find_element(By.ID, "ask").click()
    err = wait(browser, EC.visibility_of_element_located((By.ID, "error")))
    assert err.text and "\n" not in err.text
    assert "question" in err.text
    assert not browser.find_element(By.ID, "results").is_displayed()
