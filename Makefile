# Anchor — every target sets itself up on a fresh machine (Python 3.10+, gcc, make).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ENGLISH_KWG := dictionaries/build/english.kwg
LEXICA := $(ENGLISH_KWG) dictionaries/build/russian.kwg dictionaries/build/erudit.kwg

.PHONY: demo test bench fuzz soak dictionaries lint clean redis-server chromium

$(STAMP): pyproject.toml setup.py engine/_movegen.c
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	@touch $(STAMP)

dictionaries/build/%.kwg: | $(STAMP)
	$(PY) dictionaries/fetch.py $*

demo: $(STAMP) $(ENGLISH_KWG)
	@$(VENV)/bin/anchor demo

test: $(STAMP) $(LEXICA) redis-server chromium
	$(PY) -m pytest -q

# The report test renders HTML in headless Chromium; install it when missing (the test
# says why it skips if that is impossible here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium (apt)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	  || echo "could not install chromium: the report rendering test will be skipped"; }

# The service tests start their own redis-server; install it when the machine has none.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { echo "installing redis-server (apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }

bench: $(STAMP)
	$(PY) bench/lexicon.py
	$(PY) bench/scoring.py
	$(PY) bench/movegen.py
	$(PY) bench/service.py
	$(PY) bench/selfplay.py
	$(PY) bench/annotate.py

# A longer run of the suite's raw-job mutation fuzz (the suite runs 2,000 cases).
fuzz: $(STAMP) redis-server
	ANCHOR_FUZZ_JOBS=$${ANCHOR_FUZZ_JOBS:-30000} $(PY) -m pytest -q tests/test_hardening.py -k fuzz

# 20,000 jobs with a worker SIGKILLed every 3 s and Redis restarted twice (BENCHMARKS.md).
soak: $(STAMP) redis-server
	$(PY) bench/soak.py

dictionaries: $(STAMP)
	$(PY) dictionaries/fetch.py

lint: $(STAMP)
	$(VENV)/bin/ruff check engine client worker dictionaries bench tests

clean:
	rm -rf $(VENV) build *.egg-info engine/*.so dictionaries/build
