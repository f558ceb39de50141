//! Flags several subcommands share, parsed by clap into typed values (a bad value is a clap
//! error naming the flag, exit code 2), and the CLI's own usage error.

use clap::Args;
use elk_model::graph::Mode;
use elk_model::import::Compat;
use elk_stage::instance::LoadOrder;

/// A flag combination or value the CLI refuses (bad input: exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{}", elk_stage::error::one_line(.0))]
pub struct Usage(pub String);

impl Usage {
    /// A usage error as an `anyhow` error.
    pub fn err<T>(msg: impl Into<String>) -> anyhow::Result<T> {
        Err(Usage(msg.into()).into())
    }
}

/// `--mode`: decode, prefill or training.
pub fn mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s).map_err(|e| e.to_string())
}

/// `--compat`: clean or reference.
pub fn compat(s: &str) -> Result<Compat, String> {
    Compat::parse(s).map_err(|e| e.to_string())
}

/// `--load-order`: fixed, free or a maximum displacement D.
pub fn load_order(s: &str) -> Result<LoadOrder, String> {
    LoadOrder::parse(s).map_err(|e| e.to_string())
}

/// `--no-timings`: leave wall-clock times out of the output (for byte-identical reruns).
#[derive(Args, Debug, Clone, Copy)]
pub struct Timings {
    /// Print null instead of compile times, so two runs give byte-identical JSON.
    #[arg(long)]
    pub(super) no_timings: bool,
}

/// A positive, finite number of seconds (`--layer-exact`).
pub fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}': expected a positive number of seconds")),
    }
}
