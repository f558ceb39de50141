//! The reviewers' questions (SPEC §7), one command each (`elk-opt study NAME`), each writing a
//! Markdown report (with its command, inputs and date) and SVG plots:
//! [`gap`] (its whole-model part alone: [`gap_whole`]), [`ideal`], [`hbm_emulation`], [`order_pruning`], [`cost_noise`], [`ablation`].

pub mod ablation;
pub mod corpus;
pub mod cost_noise;
pub mod gap;
pub mod gap_whole;
pub mod hbm_emulation;
pub mod ideal;
pub mod order_pruning;

use crate::error::Result;
use crate::report::{Files, Header};

/// Names of the studies.
pub const STUDIES: [&str; 7] = [
    "gap",
    "gap-whole",
    "ideal",
    "hbm-emulation",
    "order-pruning",
    "cost-noise",
    "ablation",
];

/// Runs a study by name (None: no such study).
pub fn run(name: &str, header: &Header) -> Option<Result<Files>> {
    Some(match name {
        "gap" => gap::run(header),
        "gap-whole" => gap_whole::run(header),
        "ideal" => ideal::run(header),
        "hbm-emulation" => hbm_emulation::run(header),
        "order-pruning" => order_pruning::run(header),
        "cost-noise" => cost_noise::run(header),
        "ablation" => ablation::run(header),
        _ => return None,
    })
}

/// (median, p90, max) of values (empty: zeros).
pub fn summary(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9), v[v.len() - 1])
}
