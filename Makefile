# Anchor — every target sets itself up on a fresh machine (Python 3.10+, gcc, make).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ENGLISH_KWG := dictionaries/build/english.kwg
LEXICA := $(ENGLISH_KWG) dictionaries/build/russian.kwg dictionaries/build/erudit.kwg
# Their bingo-word files (anagram_file.c) follow the engine's format: written again when
# the engine is rebuilt, or an older file is refused and every process builds its own.
INDEXES := $(LEXICA:=.anagrams)

.PHONY: demo test test-fast bench instructions fuzz soak dictionaries lint clean redis-server chromium \
	install-redis-server install-chromium bytecode

$(STAMP): pyproject.toml setup.py client/version.py $(wildcard engine/*.c) $(wildcard engine/*.h)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	@touch $(STAMP)

# The package's bytecode, written as a wheel's install writes it: an editable install
# leaves it to the first run, which cannot write it where PYTHONDONTWRITEBYTECODE is set,
# and every command then compiles the modules it imports again (50 ms of a 140 ms start).
# Checked by the source's hash, not its time: an edit within the second is never missed.
bytecode: $(STAMP)
	@$(PY) -m compileall -q --invalidation-mode checked-hash engine client worker dictionaries

# Downloads are cached beside the lexica, so a clean clone fetches each package once.
LEXICON := ANCHOR_CACHE_DIR=dictionaries/build/cache $(VENV)/bin/anchor lexicon

dictionaries/build/%.kwg: | $(STAMP)
	$(LEXICON) install $* --dir dictionaries/build

dictionaries/build/%.kwg.anagrams: dictionaries/build/%.kwg $(STAMP)
	$(LEXICON) index $* --dir dictionaries/build

demo: $(STAMP) bytecode $(ENGLISH_KWG) $(ENGLISH_KWG).anagrams
	@$(VENV)/bin/anchor demo

test: $(STAMP) bytecode $(LEXICA) $(INDEXES) redis-server chromium
	$(PY) -m pytest -q

# The suite without the tests that start services, build packages, sanitize or open a
# browser (pyproject: markers): what a developer runs while working; CI runs `make test`.
test-fast: $(STAMP) bytecode $(LEXICA) $(INDEXES)
	$(PY) -m pytest -q -m "not (service or install or sanitizer or subprocess or browser)"

# System packages the suite uses: redis-server (the service tests start their own; make
# test cannot pass without it) and Chromium (the report is checked in a headless browser;
# without it that one test is skipped, saying why). When missing they are installed with
# apt, quietly (its output goes to .venv/apt.log), which needs root; without root the
# target says what to install.
APT_INSTALL = DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
# $(1): the package; $(2): what happens without it
define apt_install
	@echo "installing $(1) with apt for make test (log: .venv/apt.log)"
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "make test: $(1) is missing and only root can install it (apt-get install $(1)); $(2)" >&2; \
	  exit 1; fi
	@mkdir -p .venv && (apt-get update -qq && $(APT_INSTALL) $(1)) >>.venv/apt.log 2>&1 \
	  || { echo "make test: apt could not install $(1) (see .venv/apt.log); $(2)" >&2; exit 1; }
endef

chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || $(MAKE) --no-print-directory install-chromium || true

install-chromium:
	$(call apt_install,chromium,the report rendering test will be skipped)

redis-server:
	@command -v redis-server >/dev/null 2>&1 || $(MAKE) --no-print-directory install-redis-server

install-redis-server:
	$(call apt_install,redis-server,the service tests cannot run)

bench: $(STAMP)
	$(PY) bench/lexicon.py
	$(PY) bench/scoring.py
	$(PY) bench/movegen.py
	$(PY) bench/blank_racks.py
	$(PY) bench/service.py
	$(PY) bench/lanes.py
	$(PY) bench/selfplay.py
	$(PY) bench/annotate.py
	$(PY) bench/simulate.py

# The generator's instruction counts (valgrind): before/after that a busy machine cannot blur.
instructions: $(STAMP)
	$(PY) bench/instructions.py

# A longer run of the suite's raw-job mutation fuzz (the suite runs 2,000 cases).
fuzz: $(STAMP) redis-server
	ANCHOR_FUZZ_JOBS=$${ANCHOR_FUZZ_JOBS:-30000} $(PY) -m pytest -q tests/test_hardening.py -k fuzz

# 20,000 jobs with a worker SIGKILLed every 3 s, Redis restarted twice and filled to its
# maxmemory, a stray undecodable id, a worker paused past its heartbeat (BENCHMARKS.md).
soak: $(STAMP) redis-server
	$(PY) bench/soak.py

dictionaries: $(STAMP)
	$(LEXICON) install --dir dictionaries/build

lint: $(STAMP)
	$(VENV)/bin/ruff check engine client worker dictionaries bench tests

clean:
	rm -rf $(VENV) build *.egg-info engine/*.so dictionaries/build
	find engine client worker dictionaries -name __pycache__ -prune -exec rm -rf {} +
