//! A brute-force reference for ≤ 4 operators, written for the tests and sharing no code with
//! the solvers' encodings: enumerate every option choice, every start stage per load and
//! every load order the policy allows; keep the combinations whose memory fits; for each,
//! solve the remaining continuous problem (how much of each load goes in which stage) as a
//! small LP — the stage durations are convex in the work, so the LP is exact.

use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::units::Cycles;
use highs::{HighsModelStatus, RowProblem, Sense};
use std::collections::BTreeSet;

/// The optimum makespan, or None when nothing fits.
pub fn optimum(inst: &Instance) -> Option<Cycles> {
    let n = inst.ops.len();
    let loads = inst.load_indices();
    // The instance's window and the operator's own, each no earlier than W stages before
    // stage j + 1 where operator j runs.
    let lo = |j: usize| {
        let from = |w: Option<u32>| w.map(|w| (j + 1).saturating_sub(w as usize)).unwrap_or(0);
        from(inst.preload_window).max(from(inst.ops[j].preload_window))
    };
    let orders = orders(inst, &loads);
    let mut best: Option<f64> = None;
    let mut options = vec![0usize; n];
    loop {
        let mut starts = vec![0usize; n];
        for &j in &loads {
            starts[j] = lo(j);
        }
        loop {
            if memory_fits(inst, &options, &loads, &starts) {
                // Distinct end limits only: many orders give the same LP.
                let mut seen = BTreeSet::new();
                for order in &orders {
                    let ends = work_ends(&loads, &starts, order);
                    if ends.iter().zip(&loads).any(|(&e, &j)| e < starts[j])
                        || !seen.insert(ends.clone())
                    {
                        continue;
                    }
                    if let Some(t) = lp(inst, &options, &loads, &starts, &ends) {
                        best = Some(best.map_or(t, |b: f64| b.min(t)));
                    }
                }
            }
            if !next_start(&loads, &mut starts, &lo) {
                break;
            }
        }
        if !next_option(inst, &mut options) {
            break;
        }
    }
    best.map(Cycles)
}

fn next_option(inst: &Instance, options: &mut [usize]) -> bool {
    for (i, o) in options.iter_mut().enumerate() {
        *o += 1;
        if *o < inst.ops[i].options.len() {
            return true;
        }
        *o = 0;
    }
    false
}

fn next_start(loads: &[usize], starts: &mut [usize], lo: &dyn Fn(usize) -> usize) -> bool {
    for &j in loads {
        starts[j] += 1;
        if starts[j] <= j {
            return true;
        }
        starts[j] = lo(j);
    }
    false
}

/// Every permutation of the loads the policy allows.
fn orders(inst: &Instance, loads: &[usize]) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    permute(loads.to_vec(), 0, &mut all);
    all.into_iter()
        .filter(|order| match inst.load_order {
            LoadOrder::Named(NamedOrder::Fixed) => order == loads,
            LoadOrder::Named(NamedOrder::Free) => true,
            LoadOrder::Displacement { max_displacement } => {
                order.iter().enumerate().all(|(pos, j)| {
                    let rank = loads.iter().position(|l| l == j).unwrap();
                    pos.abs_diff(rank) <= max_displacement as usize
                })
            }
        })
        .collect()
}

fn permute(mut v: Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == v.len() {
        out.push(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v.clone(), k + 1, out);
        v.swap(k, i);
    }
}

/// The last stage each load may work in: its own deadline, and no later than the start of
/// any load after it in the order.
fn work_ends(loads: &[usize], starts: &[usize], order: &[usize]) -> Vec<usize> {
    loads
        .iter()
        .map(|&j| {
            let pos = order.iter().position(|&o| o == j).unwrap();
            order[pos + 1..]
                .iter()
                .map(|&later| starts[later])
                .fold(j, usize::min)
        })
        .collect()
}

fn memory_fits(inst: &Instance, options: &[usize], loads: &[usize], starts: &[usize]) -> bool {
    let n = inst.ops.len();
    (0..=n).all(|k| {
        let hot = if k == 0 {
            0
        } else {
            inst.ops[k - 1].options[options[k - 1]].hot.get()
        };
        let cold: u64 = loads
            .iter()
            .filter(|&&j| j >= k && starts[j] <= k)
            .map(|&j| inst.ops[j].options[options[j]].cold.get())
            .sum();
        hot + cold <= inst.sram_bytes.get()
    })
}

/// min Σ d_k over the work split, with load j working only in stages starts[j]..=ends[j].
fn lp(
    inst: &Instance,
    options: &[usize],
    loads: &[usize],
    starts: &[usize],
    ends: &[usize],
) -> Option<f64> {
    let n = inst.ops.len();
    let mut pb = RowProblem::default();
    let d: Vec<_> = (0..=n).map(|_| pb.add_column(1.0, 0.0..)).collect();
    let mut w = Vec::new(); // (j, k, col)
    for (idx, &j) in loads.iter().enumerate() {
        let cols: Vec<_> = (starts[j]..=ends[idx])
            .map(|k| {
                let c = pb.add_column(0.0, 0.0..);
                w.push((j, k, c));
                c
            })
            .collect();
        let h = inst.ops[j].hbm_cycles.get();
        pb.add_row(h..=h, cols.iter().map(|&c| (c, 1.0)));
    }
    for k in 0..=n {
        let here: Vec<_> = w.iter().filter(|e| e.1 == k).collect();
        let (exec, comm) = if k == 0 {
            (0.0, 0.0)
        } else {
            let o = &inst.ops[k - 1].options[options[k - 1]];
            (o.exec_cycles.get(), o.comm_cycles.get())
        };
        // d ≥ exec; d − Σ ν w ≥ comm; d − Σ w ≥ 0.
        pb.add_row(exec.., [(d[k], 1.0)]);
        let noc = here
            .iter()
            .map(|e| (e.2, -inst.ops[e.0].options[options[e.0]].noc_per_hbm));
        pb.add_row(comm.., std::iter::once((d[k], 1.0)).chain(noc));
        pb.add_row(
            0.0..,
            std::iter::once((d[k], 1.0)).chain(here.iter().map(|e| (e.2, -1.0))),
        );
    }
    let mut model = pb.optimise(Sense::Minimise);
    model.make_quiet();
    let solved = model.solve();
    (solved.status() == HighsModelStatus::Optimal).then(|| solved.objective_value())
}
