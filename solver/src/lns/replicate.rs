//! Copying a window's changes to every identical layer. The layers of a decoder are
//! identical operator for operator, so a change that makes one layer faster usually makes
//! each of them faster: instead of finding it again window by window (seconds each), the
//! search copies it to the same operator of every layer, keeps each copy the simulator
//! accepts, and re-times the result ([`crate::retime()`]). It is kept only if it is faster.

use elk_stage::instance::Instance;
use elk_stage::schedule::{Schedule, Work};
use elk_stage::units::{OpId, Stage};

/// An operator's decisions that the window changed, relative to its layer.
struct Change {
    /// Position in the layer.
    pos: usize,
    /// Its layer.
    layer: usize,
    option: usize,
    /// Its load work when that changed: (stage, cycles).
    work: Option<Vec<(usize, f64)>>,
}

fn work_of(s: &Schedule, n: usize) -> Vec<Vec<(usize, f64)>> {
    let mut out = vec![Vec::new(); n];
    for w in &s.load_work {
        out[w.op.index()].push((w.stage.index(), w.cycles.get()));
    }
    out
}

/// `after` with every option (and, `with_work`, every load's work) that differs from
/// `before` copied to the same position in each other layer (work shifted by the layers
/// between), one layer at a time, skipping a layer whose copy the simulator rejects. `None`
/// when nothing could be copied.
pub(crate) fn copy_to_layers(
    inst: &Instance,
    before: &Schedule,
    after: &Schedule,
    with_work: bool,
) -> Option<Schedule> {
    let layers = inst.layers();
    let period = layers.ops_per_layer;
    if layers.layers < 2 || period == 0 {
        return None;
    }
    let n = inst.ops.len();
    let body = layers.prologue..layers.prologue + layers.layers * period;
    let (work_before, work_after) = (work_of(before, n), work_of(after, n));
    let changes: Vec<Change> = body
        .clone()
        .filter(|&i| after.options[i] != before.options[i] || work_after[i] != work_before[i])
        .map(|i| Change {
            pos: (i - body.start) % period,
            layer: (i - body.start) / period,
            option: after.options[i],
            work: (with_work && work_after[i] != work_before[i]).then(|| work_after[i].clone()),
        })
        .collect();
    if changes.is_empty() {
        return None;
    }
    let mut options = after.options.clone();
    let mut work = work_after;
    let mut copied = false;
    for layer in 0..layers.layers {
        let (mut trial_options, mut trial_work) = (options.clone(), work.clone());
        let mut fits = true;
        for c in &changes {
            let i = body.start + layer * period + c.pos;
            trial_options[i] = c.option;
            if let Some(w) = &c.work {
                let shifted: Option<Vec<(usize, f64)>> = w
                    .iter()
                    .map(|&(k, v)| {
                        let k = (k + layer * period).checked_sub(c.layer * period)?;
                        (k <= i).then_some((k, v))
                    })
                    .collect();
                match shifted {
                    Some(sh) => trial_work[i] = sh,
                    None => fits = false,
                }
            }
        }
        if !fits || (trial_options == options && trial_work == work) {
            continue;
        }
        let trial = with(after, &trial_options, &trial_work);
        if elk_sim::validate(inst, &trial).is_empty() {
            options = trial_options;
            work = trial_work;
            copied = true;
        }
    }
    copied.then(|| with(after, &options, &work))
}

/// `base` with these options and this work.
fn with(base: &Schedule, options: &[usize], work: &[Vec<(usize, f64)>]) -> Schedule {
    let mut s = base.clone();
    s.options = options.to_vec();
    s.load_work = work
        .iter()
        .enumerate()
        .flat_map(|(j, pieces)| {
            pieces.iter().map(move |&(k, c)| Work {
                op: OpId(j),
                stage: Stage(k),
                cycles: elk_stage::units::Cycles(c),
            })
        })
        .collect();
    s
}
