//! Turning decisions (options, load order, start stage per load) into load work: each load
//! fills the spare HBM and NoC capacity of the stages from its start on, in load order, and
//! extends a stage only when the load must finish there (the stage before its operator runs).

use super::Work;
use crate::instance::Instance;
use crate::units::{Cycles, OpId, Stage};

/// Why decisions could not be turned into load work.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("operator {op} ({name}): {detail}")]
pub struct FillError {
    /// The operator.
    pub op: OpId,
    /// Its name.
    pub name: String,
    /// What was wrong.
    pub detail: String,
}

/// Load work for `options`, loads in `load_order`, load `load_order[i]` starting no earlier
/// than stage `start[i]` (nor before the last stage of the load before it, which the load
/// order requires, nor before the instance's preload window). Operator j's load must end
/// by the stage before [`Stage::of_op`]`(j)`.
pub fn fill_load_work(
    inst: &Instance,
    options: &[usize],
    load_order: &[OpId],
    start: &[Stage],
) -> Result<Vec<Work>, FillError> {
    let n = inst.ops.len();
    let err = |op: usize, detail: String| FillError {
        op: OpId(op),
        name: inst.ops.get(op).map(|o| o.name.clone()).unwrap_or_default(),
        detail,
    };
    if options.len() != n || start.len() != load_order.len() {
        return Err(err(
            0,
            format!(
                "{} options and {} starts for {} operators and {} loads",
                options.len(),
                start.len(),
                n,
                load_order.len()
            ),
        ));
    }
    let option = |i: usize| {
        inst.ops[i]
            .options
            .get(options[i])
            .ok_or_else(|| err(i, format!("option {} does not exist", options[i])))
    };
    // Stage 0 is the prologue (no execution).
    let mut exec = vec![0.0; n + 1];
    let mut noc = vec![0.0; n + 1];
    for j in inst.op_ids() {
        let o = option(j.index())?;
        let k = Stage::of_op(j).index();
        exec[k] = o.exec_cycles.get();
        noc[k] = o.comm_cycles.get();
    }
    let mut dur = exec.clone();
    let mut hbm = vec![0.0; n + 1];
    let mut work = Vec::new();
    let mut cursor = 0;
    for (&id, &s) in load_order.iter().zip(start) {
        let j = id.index();
        if j >= n {
            return Err(err(j, "load of a nonexistent operator".into()));
        }
        let total = inst.ops[j].hbm_cycles.get();
        let nu = option(j)?.noc_per_hbm;
        // No earlier than asked, than the previous load's last stage (load order), or than
        // the preload window allows. The load must be done before its operator's stage.
        let runs_in = Stage::of_op(id).index();
        let mut k = s.index().max(cursor).max(inst.window_start(id).index());
        if k >= runs_in {
            return Err(err(
                j,
                format!("load cannot start at stage {k}: the operator runs in stage {runs_in}"),
            ));
        }
        let final_stage = runs_in - 1;
        let mut remaining = total;
        while remaining > 0.0 {
            let mut spare = dur[k] - hbm[k];
            if nu > 0.0 {
                spare = spare.min((dur[k] - noc[k]) / nu);
            }
            let take = if k == final_stage {
                remaining
            } else {
                spare.max(0.0).min(remaining)
            };
            if take > 0.0 {
                work.push(Work {
                    op: id,
                    stage: Stage(k),
                    cycles: Cycles(take),
                });
                hbm[k] += take;
                noc[k] += take * nu;
                dur[k] = dur[k].max(hbm[k]).max(noc[k]);
                remaining -= take;
                cursor = k;
            }
            if remaining <= 1e-12 * total {
                // The last piece absorbs rounding so the work sums to H exactly enough.
                if let Some(piece) = work.last_mut() {
                    piece.cycles += Cycles(remaining);
                }
                break;
            }
            k += 1;
        }
    }
    Ok(work)
}
