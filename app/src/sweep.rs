//! Running a grid: cells in parallel, each finished cell appended to a JSON-lines file at
//! once (an interrupted run keeps every finished cell), cells already in the file skipped
//! on restart, and at the end the file rewritten in cell order — so an interrupted-and-resumed
//! run, a sharded-and-merged run and a straight run write identical bytes.

use crate::cell::{run_cell_with, CellResult, CellRun};
use crate::error::{io, AppError, Result};
use crate::grid::Grid;
use elk_model::plan::PlanCache;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// One slice of a grid: cells with index ≡ k (mod n).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This slice, 0-based.
    pub k: usize,
    /// Number of slices.
    pub n: usize,
}

impl Shard {
    /// Parses `K/N` (0 ≤ K < N).
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || AppError::Grid {
            file: "--shard".into(),
            detail: format!("'{s}': expected K/N with 0 ≤ K < N"),
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if k < n {
            Ok(Shard { k, n })
        } else {
            Err(bad())
        }
    }
}

/// What a sweep did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepSummary {
    /// Cells of the grid (in this shard).
    pub cells: usize,
    /// Already in the file with results.
    pub skipped: usize,
    /// Run now.
    pub ran: usize,
    /// Of those run now, cells whose stored line was a failure (retried).
    pub retried: usize,
    /// Cells (of this shard) whose line is a failure at the end.
    pub failed: usize,
    /// Cells (of this shard) whose configuration does not fit the chip (results, listed in
    /// reports).
    pub does_not_fit: usize,
}

/// Reads a results file (absent: empty). Lines are keyed by cell index.
pub fn read_results(path: &Path) -> Result<BTreeMap<usize, CellResult>> {
    let mut out = BTreeMap::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(path, e)),
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<CellResult>(line) {
            Ok(r) => {
                out.insert(r.cell.index, r);
            }
            // A line cut short by a kill is the last one; anything else is corruption.
            Err(_) if i + 1 == text.lines().count() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(AppError::Results {
                    file: path.display().to_string(),
                    line: i + 1,
                    detail: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}

/// Writes results in cell order, atomically (temp file + rename).
pub fn write_results(path: &Path, results: &BTreeMap<usize, CellResult>) -> Result<()> {
    let mut text = String::new();
    for r in results.values() {
        text.push_str(&serde_json::to_string(r).map_err(|e| io(path, e))?);
        text.push('\n');
    }
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Runs the grid (or one shard of it) into `out`; `progress(done, total)` after each cell.
/// Every chip and model is read and checked first ([`Grid::load_inputs`]): a bad chip or
/// model file fails here, before `out` is touched. Cells whose stored line is a failure
/// ([`CellResult::failed`]) are run again; cells that fail are counted in
/// [`SweepSummary::failed`] (their error is their line). A configuration that does not fit
/// the chip is a result, not a failure. Every instance is planned through `plan_cache`
/// (`None`: afresh).
pub fn run_sweep(
    grid: &Grid,
    out: &Path,
    shard: Option<Shard>,
    plan_cache: Option<&PlanCache>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<SweepSummary> {
    let inputs = grid.load_inputs()?;
    let chips = &inputs.chips;
    let existing = read_results(out)?;
    // A kill may leave a partial last line: rewrite what is complete before appending.
    write_results(out, &existing)?;
    let cells: Vec<_> = grid
        .cells()
        .into_iter()
        .filter(|c| shard.is_none_or(|s| c.index % s.n == s.k))
        .collect();
    for c in &cells {
        if let Some(r) = existing.get(&c.index) {
            if r.cell != *c {
                return Err(AppError::Results {
                    file: out.display().to_string(),
                    line: 0,
                    detail: format!(
                        "cell {} differs from this grid's: another grid's results?",
                        c.index
                    ),
                });
            }
        }
    }
    let done = |c: &&crate::grid::Cell| existing.get(&c.index).is_some_and(|r| !r.failed());
    let todo: Vec<_> = cells.iter().filter(|c| !done(c)).collect();
    let retried = todo
        .iter()
        .filter(|c| existing.contains_key(&c.index))
        .count();
    let total = todo.len();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(out)
        .map_err(|e| io(out, e))?;
    let sink = Mutex::new((file, 0usize));
    let how = CellRun {
        methods: grid.methods.clone(),
        bound: grid.bound,
        moe: crate::cell::MoeCell {
            steps: grid.moe_steps,
            policies: grid.policies.clone(),
        },
        plan_cache: plan_cache.cloned(),
    };
    todo.par_iter().try_for_each(|cell| -> Result<()> {
        let model = inputs.models.models.get(&cell.model);
        let r = match (chips.specs.get(&cell.chip), model) {
            (Some(chip), Some(model)) => {
                run_cell_with(&grid.figure, cell, model, chip.clone(), &how)
            }
            _ => {
                let detail = format!("cell {}: chip or model not loaded", cell.index);
                return Err(io(out, detail));
            }
        };
        let line = serde_json::to_string(&r).map_err(|e| io(out, e))?;
        let mut guard = sink.lock().map_err(|_| io(out, "a worker panicked"))?;
        writeln!(guard.0, "{line}").map_err(|e| io(out, e))?;
        guard.0.flush().map_err(|e| io(out, e))?;
        guard.1 += 1;
        progress(guard.1, total);
        Ok(())
    })?;
    let all = read_results(out)?;
    write_results(out, &all)?;
    let failed = cells
        .iter()
        .filter(|c| all.get(&c.index).is_none_or(CellResult::failed))
        .count();
    let does_not_fit = cells
        .iter()
        .filter(|c| all.get(&c.index).is_some_and(|r| r.does_not_fit))
        .count();
    Ok(SweepSummary {
        cells: cells.len(),
        skipped: cells.len() - total,
        ran: total,
        retried,
        failed,
        does_not_fit,
    })
}

/// Joins shard files into one, in cell order; the same cell in two files must agree.
pub fn merge(inputs: &[&Path], out: &Path) -> Result<usize> {
    let mut all: BTreeMap<usize, CellResult> = BTreeMap::new();
    for p in inputs {
        for (i, r) in read_results(p)? {
            if let Some(prev) = all.get(&i) {
                if *prev != r {
                    return Err(AppError::Results {
                        file: p.display().to_string(),
                        line: 0,
                        detail: format!("cell {i} disagrees with an earlier file"),
                    });
                }
            }
            all.insert(i, r);
        }
    }
    write_results(out, &all)?;
    Ok(all.len())
}
