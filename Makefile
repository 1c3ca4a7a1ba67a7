# raylake — the two commands of the README's Quickstart, and a few helpers.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.raylake-installed
SPIDER := ../shared/data/spider_lake
LAKE   ?= $(if $(wildcard $(SPIDER)/lake),$(SPIDER)/lake,examples/lake)
INDEX  ?= .raylake
PORT   ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: demo test setup browser bench clean

# (Re)create the virtual environment when it is missing or pyproject.toml changed.
# CPU torch first: an unpinned torch pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test]"
	touch $(STAMP)

setup: $(STAMP) browser

# The web page's browser tests drive Debian's chromium; as root, install it when missing
# (~50 s); otherwise those tests skip with the reason.
browser:
	@command -v chromium >/dev/null || { test "$$(id -u)" = 0 && \
	  { apt-get install -y -q chromium chromium-driver || { apt-get update -q && apt-get install -y -q chromium chromium-driver; }; } \
	  || echo "no chromium (not root, or apt failed): the browser tests will skip"; }

QUESTION ?= What is the average points of players from the club with name 'AIB'?

# Index (incrementally: a second run only re-checks the files), then answer one question.
# Exit 3 from `index` means some files were skipped (named above); the rest is indexed.
# A crash exits 1 and still stops the demo.
demo: $(STAMP)
	$(VENV)/bin/raylake index $(LAKE) --index-dir $(INDEX) || test $$? -eq 3
	$(VENV)/bin/raylake ask "$(QUESTION)" --index-dir $(INDEX) --out demo_answer.parquet
	@echo "Web page: run '$(VENV)/bin/raylake serve --index-dir $(INDEX)', then open http://127.0.0.1:$(PORT)/"

test: $(STAMP) browser
	$(PY) -m pytest -q

clean:
	rm -rf $(INDEX) .pytest_cache demo_answer.parquet
