# Two commands for a fresh machine (Debian, root, Rust installed):
#   make run    the main job: every method on the built-in default (no arguments or files)
#   make test   every test
# Both first run `deps`, which installs only the Debian packages that are missing.

# Debian packages the build needs: cmake + libclang to compile HiGHS from source (highs-sys)
# and to generate z3's bindings; libz3-dev is the z3 library the SMT backend links; python3
# and python3-venv for the Python package (make python: a virtualenv under target/).
DEB_PACKAGES := cmake libclang1-14 libclang-common-14-dev libz3-dev python3 python3-venv

CARGO := cargo
CARGO_FLAGS := --release -j2

.PHONY: deps run test lint bench reports test-slurm test-browser python wheel

deps:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust first (rustup)"; exit 1; }
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi

run: deps
	$(CARGO) run $(CARGO_FLAGS) --bin elk-opt --

# Every test binary and the pytest suite run even when one fails (--no-fail-fast); the
# target still fails if any did. The fixtures they read are in tests/fixtures/ (its README.md).
# The workspace is compiled twice, not three times: once for the wheel (without z3) and once
# for the tests, whose build also makes the target/release/elk-opt that pytest runs
# (BUILD_CLI below is part of that same build, so `make python` adds no compilation here).
# pytest runs on two workers (pytest-xdist, -n 2, as cargo's -j2): its tests mostly keep one
# core busy (a CLI call, a one-thread solve, pip installing the wheel), so run one at a time
# they left the second core idle (155 s of CPU in 131 s). The workers share the plan cache
# as the CLI suite's parallel tests do.
test: deps python
	rc=0; $(CARGO) test $(CARGO_FLAGS) --workspace --no-fail-fast || rc=1; \
	$(PY_VENV)/bin/python -m pytest -q -n 2 python/tests || rc=1; exit $$rc

# Builds target/release/elk-opt as the test build makes it. `cargo test --workspace` resolves
# the crates' features with every member's dev-dependencies (criterion turns on serde's
# `alloc`, the simulator's tests elk-stage's `proptest`, ...), a plain `cargo build --bin
# elk-opt` without them: that would compile serde and every workspace crate once more
# (2.5 min on 2 cores) for the same program. Building the CLI test binary instead selects
# the test build's features, so after `make test` this is up to date (0.3 s) and its binary
# is the one the Rust tests ran.
BUILD_CLI := $(CARGO) test $(CARGO_FLAGS) --workspace --no-run --test cli

# The Python package elk_opt (docs/python.md): the wheel of `make wheel`, installed into the
# virtualenv target/py-venv with pandas and pytest: `target/py-venv/bin/python -c 'import
# elk_opt'`. The CLI is built too (BUILD_CLI): the pytest suite checks every result against
# its --json.
PY_VENV := target/py-venv
python: wheel
	$(BUILD_CLI)
	$(PY_VENV)/bin/python -m pip install -q --force-reinstall --no-deps target/wheels/elk_opt-*.whl

# A manylinux wheel of elk_opt in target/wheels/ that pip installs on a machine with no Rust
# and no libz3: the extension is built without z3 (elk_opt.backends() says smt is missing),
# HiGHS is linked in statically, and maturin checks that the rest (glibc, libstdc++,
# libgcc_s) keeps to the symbol versions of the tag in python/pyproject.toml. Built with
# maturin in the workspace's target dir (HiGHS is shared with the CLI's build);
# python/tests/test_wheel.py installs it into a fresh virtualenv.
wheel: deps
	@test -x $(PY_VENV)/bin/python || python3 -m venv $(PY_VENV)
	$(PY_VENV)/bin/python -m pip install -q maturin pytest pytest-xdist pandas
	rm -f target/wheels/elk_opt-*.whl
	$(PY_VENV)/bin/maturin build --release -j2 -m python/Cargo.toml -o target/wheels -i $(PY_VENV)/bin/python

bench: deps
	$(CARGO) bench -j2 -p elk-benchmarks

lint: deps
	$(CARGO) fmt --check
	$(CARGO) clippy $(CARGO_FLAGS) --workspace --all-targets -- -D warnings

# Regenerates the checked-in results in results/: the fig17 and fig19 sweeps and the eight
# studies (about 3 minutes on 2 cores, study moe about 1 of them; scripts/reports-time.sh;
# plus gap-whole: 8 whole
# models with their bounds, ≈ 45 min). Sweeps resume from results/*.jsonl; delete those
# files to recompute from scratch.
STUDIES := gap gap-whole ideal hbm-emulation order-pruning cost-noise ablation replay-fidelity moe resident measured
reports: deps
	$(CARGO) build $(CARGO_FLAGS) --bin elk-opt
	./target/release/elk-opt sweep fig17 -o results/fig17.jsonl --report results/fig17
	./target/release/elk-opt sweep fig19 -o results/fig19.jsonl --report results/fig19
	./target/release/elk-opt sweep examples/grids/expert-parallel.toml -o results/expert-parallel.jsonl --report results/expert-parallel
	for s in $(STUDIES); do ./target/release/elk-opt study $$s -o results/$$s || exit 1; done
	./target/release/elk-opt report summary results

# The Slurm job-array recipe of docs/sweeps.md on a one-node cluster started here (installs
# slurm-wlm and munge if missing; needs root; about 20-40 s). What it checks: docs/slurm.md.
test-slurm: deps
	$(BUILD_CLI)
	bash scripts/test-slurm.sh

# `--html` pages in a real browser: installs Debian's chromium if missing (needs root), then
# runs the CLI tests that `make test` leaves out (#[ignore]: CI has no chromium). They write
# `report --html` pages, load them in headless chromium and check the DOM has every figure's
# <svg> and that each figure's screenshot is drawn (docs/sweeps.md, "One HTML page").
test-browser: deps
	@command -v chromium >/dev/null || { echo "installing: chromium"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }
	$(CARGO) test $(CARGO_FLAGS) --test cli -- --ignored browser::
