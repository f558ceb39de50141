"""SweepResult.df (json.loads per line, one dict per cell x method) vs pyarrow's JSON reader
(read_json, explode the methods list, flatten the structs, to_pandas), on a synthetic
results file: fig19.jsonl's lines repeated to N cells of 4 methods each (4N rows)."""
import json, os, sys, time, statistics
import pyarrow as pa, pyarrow.json as paj, pyarrow.compute as pc
import elk_opt

src = [json.loads(l) for l in open(os.path.join(os.path.dirname(__file__), "..", "..", "results", "fig19.jsonl"))]
N = int(sys.argv[1]) if len(sys.argv) > 1 else 25000
BIG = sys.argv[2] if len(sys.argv) > 2 else "target/tmp/sweep-df-big.jsonl"
with open(BIG, "w") as f:
    for i in range(N):
        line = dict(src[i % len(src)]); line["cell"] = dict(line["cell"], index=i)
        f.write(json.dumps(line) + "\n")

def current():
    cells = [json.loads(l) for l in open(BIG)]
    return elk_opt.SweepResult({"cells": N, "output": BIG}, cells).df

def arrow():
    t = paj.read_json(BIG)
    head = t.drop_columns(["methods"]).flatten()
    idx = pc.list_parent_indices(t["methods"])
    m = pc.list_flatten(t["methods"])
    mt = pa.Table.from_struct_array(m).drop_columns(["breakdown"])
    out = head.take(idx)
    for name in mt.column_names:
        out = out.append_column(name, mt[name])
    return out.to_pandas()

for f in (current, arrow):
    ts = []
    for _ in range(3):
        t0 = time.perf_counter(); df = f(); ts.append(time.perf_counter() - t0)
    print(f"{f.__name__}: {N} cells, {len(df)} rows x {df.shape[1]} cols: median {statistics.median(ts):.3f} s")
