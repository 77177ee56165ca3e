# Anchor — every target sets itself up on a fresh machine (Python 3.10+, gcc, make).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ENGLISH_KWG := dictionaries/build/english.kwg
LEXICA := $(ENGLISH_KWG) dictionaries/build/russian.kwg dictionaries/build/erudit.kwg

.PHONY: demo test bench dictionaries lint clean

$(STAMP): pyproject.toml setup.py engine/_movegen.c
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	@touch $(STAMP)

dictionaries/build/%.kwg: | $(STAMP)
	$(PY) dictionaries/fetch.py $*

demo: $(STAMP) $(ENGLISH_KWG)
	@$(VENV)/bin/anchor demo

test: $(STAMP) $(LEXICA)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/lexicon.py
	$(PY) bench/scoring.py
	$(PY) bench/movegen.py

dictionaries: $(STAMP)
	$(PY) dictionaries/fetch.py

lint: $(STAMP)
	$(VENV)/bin/ruff check engine client worker dictionaries bench tests

clean:
	rm -rf $(VENV) build *.egg-info engine/*.so dictionaries/build
