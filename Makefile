# Two entry points: `make demo` and `make test`. Each does all its own set-up,
# idempotently: system packages (when root and missing), the virtualenv, the
# project installed editable with its dev extra ("compat": a plain path in
# site-packages, no import hook — each new process starts 15 ms sooner).
SHELL  := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test setup system-deps lint typecheck unit clean tables

demo: setup
	@$(BIN)/python -m gateway.demo

test: setup lint typecheck unit

setup: system-deps $(STAMP)

# bubblewrap runs the sandbox, libseccomp builds its syscall filter, ripgrep
# backs Grep, strace watches commands for the execution oracle (fuzz/),
# redis-server backs the test of a fleet's shared fuzzing database,
# Mercurial, darcs, Fossil and Breezy prove a program planted in their
# repository directories never runs on the host; all from the distro. As root, the escape suite also runs as an
# unprivileged user, from a venv of the system python3 (python3-venv).
# (The library is looked for with grep reading to the end, not grep -q:
# under pipefail, ldconfig killed by grep's early close made it look
# missing now and then, and make test reinstalled it.)
system-deps:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v rg >/dev/null 2>&1 || missing="$$missing ripgrep"; \
	command -v strace >/dev/null 2>&1 || missing="$$missing strace"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v hg >/dev/null 2>&1 || missing="$$missing mercurial"; \
	command -v darcs >/dev/null 2>&1 || missing="$$missing darcs"; \
	command -v fossil >/dev/null 2>&1 || missing="$$missing fossil"; \
	command -v brz >/dev/null 2>&1 || missing="$$missing brz"; \
	if [ "$$(id -u)" = 0 ]; then \
	  /usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	fi; \
	{ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep 'libseccomp\.so\.2' >/dev/null \
	  || missing="$$missing libseccomp2"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || { echo "apt-get install$$missing failed" >&2; exit 1; }; \
	  else \
	    echo "missing system packages:$$missing — install them with: sudo apt-get install$$missing" >&2; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# pip 25.1 and later write console scripts that do not import re (a
	@# tenth of a cold `shellgate check`); an older pip is kept where none is
	@# reachable
	@$(BIN)/python -m pip install -q --disable-pip-version-check 'pip>=25.1' 2>&1 \
	  | { grep -v "^WARNING: Location '.*' is ignored" || true; } || true
	@$(BIN)/python -m pip install -q --disable-pip-version-check \
	  --config-settings editable_mode=compat -e '.[dev]' 2>&1 \
	  | { grep -v "^WARNING: Location '.*' is ignored" || true; }
	@touch $(STAMP)

LINT_DIRS := $(wildcard analyzers sandbox gateway profiles values regexes tests bench fuzz)

lint: setup
	@$(BIN)/ruff check $(LINT_DIRS)
	@$(BIN)/lint-imports --no-cache
	@$(BIN)/python -m regexes.build --check
	@$(BIN)/python -m values.build --check

# What every process would otherwise build at start, built once: the engine
# code of the packages' regexes (regexes/__init__.py says why) and the
# compiled __init__ of their value classes (values/build.py); rebuild after
# changing a pattern or a value class's fields.
tables: setup
	@$(BIN)/python -m regexes.build
	@$(BIN)/python -m values.build

typecheck: setup
	@$(BIN)/mypy

# A worker a core, beside the unprivileged legs (a third process): more
# workers than that starve the time-bounded parts under test (the repository
# walk's budget, a daemon's answer) and buy no time, the suite being bound
# by CPU. A file's tests stay together (their fixtures and module state are
# shared).
unit: setup
	@$(BIN)/python -m pytest -n 2 --dist loadfile --durations=25

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
