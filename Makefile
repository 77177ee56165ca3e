# Anchor — every target sets itself up on a fresh machine (Python 3.10+, gcc, make).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ENGLISH_KWG := dictionaries/build/english.kwg

.PHONY: demo test bench dictionaries lint clean

$(STAMP): pyproject.toml setup.py engine/_movegen.c
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	@touch $(STAMP)

$(ENGLISH_KWG): | $(STAMP)
	$(PY) dictionaries/fetch.py english

demo: $(STAMP) $(ENGLISH_KWG)
	@$(VENV)/bin/anchor demo

test: $(STAMP) $(ENGLISH_KWG)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/lexicon.py
	$(PY) bench/scoring.py

dictionaries: $(STAMP)
	$(PY) dictionaries/fetch.py

lint: $(STAMP)
	$(VENV)/bin/ruff check engine client worker dictionaries bench tests

clean:
	rm -rf $(VENV) build *.egg-info engine/*.so dictionaries/build
