//! The reviewers' questions (SPEC §7), one command each (`elk-opt study NAME`), each writing a
//! Markdown report (with its command, inputs and date), SVG plots and its finding:
//! [`gap`] (its whole-model part alone: [`gap_whole`]), [`ideal`], [`hbm_emulation`],
//! [`order_pruning`], [`cost_noise`], [`ablation`], [`replay_fidelity`], [`moe`], [`resident`],
//! [`measured`].
//! Each one
//! runs its study through `elk_app::studies` (which computes the results) and writes them.

pub mod ablation;
mod budget;
pub mod cost_noise;
pub mod gap;
pub mod gap_whole;
pub mod hbm_emulation;
pub mod ideal;
pub mod measured;
pub mod moe;
pub mod order_pruning;
pub mod replay_fidelity;
pub mod resident;

use crate::report::{Files, Header};
use elk_app::studies::OnStep;
use elk_app::Result;

/// Names of the studies.
pub const STUDIES: [&str; 11] = [
    "gap",
    "gap-whole",
    "ideal",
    "hbm-emulation",
    "order-pruning",
    "cost-noise",
    "ablation",
    "replay-fidelity",
    "moe",
    "resident",
    "measured",
];

/// Runs a study by name (None: no such study).
pub fn run(name: &str, header: &Header) -> Option<Result<Files>> {
    run_with(name, header, &|_| {})
}

/// [`run`], telling `progress` each step as it happens (the files are the same).
pub fn run_with(name: &str, header: &Header, progress: &OnStep<'_>) -> Option<Result<Files>> {
    let files = match name {
        "gap" => gap::run(header, progress),
        "gap-whole" => gap_whole::run(header, progress),
        "ideal" => ideal::run(header, progress),
        "hbm-emulation" => hbm_emulation::run(header, progress),
        "order-pruning" => order_pruning::run(header, progress),
        "cost-noise" => cost_noise::run(header, progress),
        "ablation" => ablation::run(header, progress),
        "replay-fidelity" => replay_fidelity::run(header, progress),
        "moe" => moe::run(header, progress),
        "resident" => resident::run(header, progress),
        "measured" => measured::run(header, progress),
        _ => return None,
    };
    // The studies link their figures as SVG; PNG figures are linked as such.
    Some(files.map(|mut f| {
        crate::plot::relink(&mut f);
        f
    }))
}
