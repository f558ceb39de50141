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
    // The phased row's y columns: per stage k ≥ 1, (column, work, ν) of its loads.
    let phased = enc.y.iter().any(|y| !y.is_empty());
    let mut stage_y: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); n + 1];
    for w in &sched.load_work {
        let (j, k, c) = (w.op.index(), w.stage.index(), w.cycles.get());
        let g = enc.groups[j]
            .iter()
            .position(|g| g.members.contains(&kept[j]))
            .unwrap_or(0);
        v[enc.w[j][k - enc.lo[j]][g].index] += c;
        stage_hbm[k] += c;
        stage_noc[k] += c * enc.groups[j][g].nu;
        if phased && k >= 1 && c > 0.0 {
            stage_y[k].push((enc.y[j][k - enc.lo[j]][g].index, c, enc.groups[j][g].nu));
        }
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
        let row = if phased && k >= 1 {
            exec + stage_noc[k] - beside_compute((exec - comm).max(0.0), &stage_y[k], &mut v)
        } else {
            0.0
        };
        v[enc.d[k].index] = exec.max(comm + stage_noc[k]).max(stage_hbm[k]).max(row);
    }
    v
}

/// The phased row's work beside a compute phase of `comp` cycles
/// (`elk_sim::phased::beside_compute`) for loads (y column, work, ν): writes the y columns
/// and returns Σ ν·y.
fn beside_compute(comp: f64, loads: &[(usize, f64, f64)], v: &mut [f64]) -> f64 {
    let work: Vec<(f64, f64)> = loads.iter().map(|&(_, w, nu)| (w, nu)).collect();
    let y = elk_sim::phased::beside_compute(comp, &work);
    for (&(col, _, _), &yv) in loads.iter().zip(&y) {
        v[col] += yv;
    }
    loads.iter().zip(&y).map(|(l, yv)| l.2 * yv).sum()
}
