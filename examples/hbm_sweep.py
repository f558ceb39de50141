# %% [markdown]
# # A chip design sweep from Python: HBM bandwidth 4..16 TB/s
#
# Llama2-7B decode (batch 32, KV 2048) on the ipu-pod4 preset with its HBM bandwidth swept
# in a plain Python loop: every method of `elk-opt compare` at each point, one DataFrame at
# the end, and a figure of each method's gap to the certified lower bound against the
# bandwidth. Runs top to bottom as a script (`target/py-venv/bin/python
# examples/hbm_sweep.py [OUT.png]`, about 15 s with a warm plan cache, under a minute
# cold) or cell by cell in Jupyter/VS Code (the `# %%` markers).
#
# matplotlib is optional: without it the table is printed and the figure skipped.

# %%
import sys
import time

import pandas as pd

import elk_opt

MODEL = "llama2-7b"
BANDWIDTHS_TBPS = [4, 6, 8, 10, 12, 14, 16]
OUT = sys.argv[1] if len(sys.argv) > 1 else "hbm_sweep.png"

# %% The sweep: one `compare` per bandwidth (elk-opt compare --model llama2-7b --hbm-tbps T)
start = time.perf_counter()
frames = []
for tbps in BANDWIDTHS_TBPS:
    r = elk_opt.compare(MODEL, "ipu-pod4", hbm_tbps=tbps, progress=True)
    frames.append(r.df)
df = pd.concat(frames, ignore_index=True)
print(f"{len(BANDWIDTHS_TBPS)} points, {len(df)} rows in {time.perf_counter() - start:.1f} s")

# %% Each method's gap to the certified roofline bound (gap ≤ %), one column per bandwidth
gaps = df[df["method"] != "ideal"].pivot(index="method", columns="hbm_tbps", values="gap_le_pct")
gaps = gaps.loc[[m for m in df["method"].unique() if m in gaps.index]]
print(gaps.round(2).to_string())

# %% Where the bound comes from: HBM-bound at low bandwidth, execution-bound at high
print(df.drop_duplicates("hbm_tbps")[["hbm_tbps", "bound_ms"]].to_string(index=False))

# %% The figure
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure (pip install matplotlib)")
else:
    fig, ax = plt.subplots(figsize=(8, 5))
    for method, row in gaps.iterrows():
        style = "--" if method.endswith("+retime") else "-"
        ax.plot(row.index, row.values, style, marker="o", markersize=3, label=method)
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xlabel("HBM bandwidth (TB/s)")
    ax.set_ylabel("gap to the certified lower bound (≤ %)")
    ax.set_title(f"{MODEL} decode B32 KV2048 on ipu-pod4: each method's gap vs HBM bandwidth")
    ax.set_xticks(BANDWIDTHS_TBPS)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(OUT, dpi=120)
    print(f"figure: {OUT}")
