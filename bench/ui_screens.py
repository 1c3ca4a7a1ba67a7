"""Screenshots of the web page (``raylake serve``'s ``/``) in its main states, for the README
and for review: the token prompt, the question box with the lake's examples, an answer (plan
graph, intent, answer rows, fused preview, timings), a table's profile, the tables the search
left out shown beside the plan after a CSV download, the lake browser with a table's
neighbours, and a bad question.

    python -m bench.ui_screens [--index-dir .raylake] [--out bench/results/ui]

Starts a local Ray and the service with a token on a free port (indexing ``examples/lake``
first when the index directory is missing), drives Debian's headless chromium through
selenium, writes ``<out>/*.png`` and stops everything.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "screens"
QUESTION = "What is the average points of players from the club with name 'AIB'?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chrome(width: int, height: int):
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}",
              "--hide-scrollbars", "--no-first-run"):
        opts.add_argument(a)
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"))


def shoot(url: str, out: str) -> list[str]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    os.makedirs(out, exist_ok=True)
    written = []
    driver = chrome(1280, 900)
    wait = WebDriverWait(driver, 120)

    def save(name: str, height: int | None = None) -> None:
        # Tall enough for the whole page, so one picture shows every panel.
        h = height or driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, max(600, min(h + 20, 4000)))
        path = os.path.join(out, f"{name}.png")
        driver.save_screenshot(path)
        written.append(path)

    try:
        driver.get(url + "/")
        wait.until(EC.visibility_of_element_located((By.ID, "token-box")))
        save("1_token", 600)
        driver.find_element(By.ID, "token").send_keys(TOKEN, Keys.ENTER)
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#examples button.example")))
        save("2_examples", 600)
        driver.find_element(By.ID, "question").send_keys(QUESTION)
        driver.find_element(By.ID, "ask").click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#plan svg g.node")))
        save("3_answer")
        driver.find_element(By.CSS_SELECTOR, "#plan g.node").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "profile-body"), "Columns"))
        save("4_profile")
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": tempfile.mkdtemp(prefix="raylake-ui-dl-")})
        driver.find_element(By.ID, "download-csv").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "download-status"), "Downloaded"))
        driver.find_element(By.ID, "show-rejected").click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#plan g.node.rejected")))
        save("6_rejected")
        lake = driver.find_element(By.ID, "lake-q")
        lake.send_keys("club", Keys.ENTER)
        wait.until(EC.text_to_be_present_in_element((By.ID, "lake-summary"), "match"))
        driver.find_element(By.CSS_SELECTOR, '#lake-results button[data-table="sports/club.csv"]').click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#profile-body table.neighbours")))
        save("7_lake")
        driver.find_element(By.ID, "question").clear()
        driver.find_element(By.ID, "ask").click()
        wait.until(EC.visibility_of_element_located((By.ID, "error")))
        save("5_error", 600)
    finally:
        driver.quit()
    return written


def have_browser() -> bool:
    if os.path.exists("/usr/bin/chromium") and os.path.exists("/usr/bin/chromedriver"):
        return True
    print("needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver", file=sys.stderr)
    return False


@contextlib.contextmanager
def page_service(index_dir: str, token: str | None = TOKEN):
    """A local Ray and ``raylake serve`` on a free port over ``index_dir`` (indexing
    ``examples/lake`` first when it is missing); yields the base URL, stops both after."""
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "RAY_USAGE_STATS_ENABLED"):
        os.environ.setdefault(k, "1" if k != "RAY_USAGE_STATS_ENABLED" else "0")
    from ray import serve

    from raylake.index.build import build_index
    from raylake.runtime import start_ray
    from raylake.serve.app import serve_search
    from raylake.serve.config import ServeConfig

    ray = start_ray()
    try:
        if not os.path.isdir(index_dir):
            index_dir = os.path.join(tempfile.mkdtemp(prefix="raylake-ui-"), ".raylake")
            build_index(os.path.join(ROOT, "examples", "lake"), index_dir, progress=False)
        t = time.time()
        url = serve_search(ServeConfig(index_dir=os.path.abspath(index_dir), port=free_port(), token=token))
        print(f"serving {index_dir} at {url} ({time.time() - t:.0f} s)")
        yield url
    finally:
        serve.shutdown()
        ray.shutdown()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index-dir", default=os.path.join(ROOT, ".raylake"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "ui"))
    args = ap.parse_args(argv)
    if not have_browser():
        return 2
    with page_service(args.index_dir) as url:
        for p in shoot(url, args.out):
            print("wrote", os.path.relpath(p, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
