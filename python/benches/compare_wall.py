"""Wall time of `elk_opt.compare()` against `elk-opt compare` on the same model (a benchmark,
not a test): warm plan cache for both, runs alternated so load from other work on the
machine hits both alike. Usage, from the repository root after `make python`:

    target/py-venv/bin/python python/benches/compare_wall.py [MODEL] [RUNS]

Prints the median of each (the Python call in-process, and `python -c` including the
interpreter's start and `import elk_opt`) and the ratio to the CLI's.
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

import elk_opt

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "elk-opt"
model = sys.argv[1] if len(sys.argv) > 1 else "llama2-13b"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5

# Warm the plan cache for both.
subprocess.run([str(BIN), "compare", "--model", model], check=True, capture_output=True)
elk_opt.compare(model)

cli, call, script = [], [], []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run([str(BIN), "compare", "--model", model], check=True, capture_output=True)
    cli.append(time.perf_counter() - t)
    t = time.perf_counter()
    elk_opt.compare(model)
    call.append(time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import elk_opt; elk_opt.compare({model!r}).df"], check=True)
    script.append(time.perf_counter() - t)

c, p, s = (statistics.median(x) for x in (cli, call, script))
print(f"{model}, {runs} runs, median wall time:")
print(f"  elk-opt compare --model {model}:        {c:.3f} s")
print(f"  elk_opt.compare({model!r}) in-process: {p:.3f} s ({100 * (p / c - 1):+.1f} %)")
print(f"  python -c 'import elk_opt; compare().df':   {s:.3f} s ({100 * (s / c - 1):+.1f} %)")
