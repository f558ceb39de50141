//! A warm start: a valid schedule written as a full column vector of the MILP, so HiGHS
//! starts from its makespan as incumbent.

use super::encode::{Encoding, Linearisation};
use crate::prune::Pruned;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;

/// Column values for `sched` (assumed valid — the caller validated it).
pub(crate) fn warm_values(
    inst: &Instance,
    pruned: &Pruned,
    enc: &Encoding,
    sched: &Schedule,
) -> Vec<f64> {
    let n = inst.ops.len();
    let mut v = vec![0.0; enc.size.variables];
    let kept: Vec<usize> = (0..n)
        .map(|i| pruned.to_kept[i][sched.options[i]])
        .collect();
    for i in 0..n {
        v[enc.x[i][kept[i]].index] = 1.0;
    }
    let mut start = vec![usize::MAX; n];
    for w in &sched.load_work {
        if w.cycles.get() > 0.0 {
            start[w.op.index()] = start[w.op.index()].min(w.stage.index());
        }
    }
    let opt = |i: usize| &inst.ops[i].options[pruned.kept[i][kept[i]]];
    let mut stage_hbm = vec![0.0; n + 1];
    let mut stage_noc = vec![0.0; n + 1];
    for w in &sched.load_work {
        let (j, k, c) = (w.op.index(), w.stage.index(), w.cycles.get());
        let g = enc.groups[j]
            .iter()
            .position(|g| g.members.contains(&kept[j]))
            .unwrap_or(0);
        v[enc.w[j][k - enc.lo[j]][g].index] += c;
        stage_hbm[k] += c;
        stage_noc[k] += c * enc.groups[j][g].nu;
    }
    for j in inst.load_indices() {
        for k in enc.lo[j]..j {
            let on = if k >= start[j] { 1.0 } else { 0.0 };
            v[enc.s[j][k - enc.lo[j]].index] = on;
            match enc.linearisation {
                Linearisation::BigM => {
                    v[enc.mem[j][k - enc.lo[j]][0].index] = on * opt(j).cold.get() as f64;
                }
                Linearisation::PerOption => {
                    v[enc.mem[j][k - enc.lo[j]][kept[j]].index] = on;
                }
            }
        }
    }
    let position: Vec<usize> = {
        let mut pos = vec![0; n];
        for (i, &j) in sched.load_order.iter().enumerate() {
            pos[j.index()] = i;
        }
        pos
    };
    for a in 0..n {
        for b in a + 1..n {
            if let Some(c) = enc.p[a][b] {
                v[c.index] = if position[a] < position[b] { 1.0 } else { 0.0 };
            }
        }
    }
    for k in 0..=n {
        let (exec, comm) = if k == 0 {
            (0.0, 0.0)
        } else {
            (opt(k - 1).exec_cycles.get(), opt(k - 1).comm_cycles.get())
        };
        let absorbed = phased_beside(enc, sched, &kept, k, (exec - comm).max(0.0), &mut v);
        let phased = match absorbed {
            Some(x) => exec + stage_noc[k] - x,
            None => 0.0,
        };
        v[enc.d[k].index] = exec.max(comm + stage_noc[k]).max(stage_hbm[k]).max(phased);
    }
    v
}

/// The phased row's in-compute work of stage k ≥ 1 (`elk_sim::phased::beside_compute`).
/// Writes the y columns and returns Σ ν·y; None with SPEC §4's row (or in the prologue).
fn phased_beside(
    enc: &Encoding,
    sched: &Schedule,
    kept: &[usize],
    k: usize,
    comp: f64,
    v: &mut [f64],
) -> Option<f64> {
    if k == 0 || enc.y.iter().all(Vec::is_empty) {
        return None;
    }
    // (ν, column, work) of the stage's loads.
    let loads: Vec<(f64, usize, f64)> = sched
        .load_work
        .iter()
        .filter(|w| w.stage.index() == k && w.cycles.get() > 0.0)
        .map(|w| {
            let j = w.op.index();
            let g = enc.groups[j]
                .iter()
                .position(|g| g.members.contains(&kept[j]))
                .unwrap_or(0);
            (
                enc.groups[j][g].nu,
                enc.y[j][k - enc.lo[j]][g].index,
                w.cycles.get(),
            )
        })
        .collect();
    let y = elk_sim::phased::beside_compute(
        comp,
        &loads.iter().map(|&(nu, _, w)| (w, nu)).collect::<Vec<_>>(),
    );
    for (&(_, col, _), &yv) in loads.iter().zip(&y) {
        v[col] += yv;
    }
    Some(loads.iter().zip(&y).map(|(l, yv)| l.0 * yv).sum())
}
