//! Flags several subcommands share, parsed by clap into typed values (a bad value is a clap
//! error naming the flag, exit code 2), and the CLI's own usage error.

use clap::Args;
use elk_app::request::{DramReaders, RunShape};
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

/// `-o` (a schedule) and `--emit-instance` must name two files (`solve`, `gap`).
pub fn schedule_and_instance_apart(
    output: Option<&std::path::Path>,
    emit_instance: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    if output.is_some() && output == emit_instance {
        return Usage::err(
            "-o and --emit-instance name the same file: the schedule and its instance need two",
        );
    }
    Ok(())
}

/// `--mode`: decode, prefill, forward-batch or training.
pub fn mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s).map_err(|e| e.to_string())
}

/// `--dtype`: fp16, bf16, fp8, int8, fp32, or mixed (`w8a16`, `w8kv8a16`,
/// `w=bfp8,kv=bf16,a=bf16`).
pub fn dtype(s: &str) -> Result<elk_model::dtype::Dtypes, String> {
    elk_model::dtype::Dtypes::parse(s)
}

/// `--optimizer-dtype`: the Adam state's element types (`fp32`, `m=bf16,master=fp32`, …).
pub fn optimizer_dtype(s: &str) -> Result<elk_model::zoo::AdamState, String> {
    elk_model::zoo::AdamState::parse(s)
}

/// `--compat`: clean or reference.
pub fn compat(s: &str) -> Result<Compat, String> {
    Compat::parse(s).map_err(|e| e.to_string())
}

/// `--load-order`: fixed, free or a maximum displacement D.
pub fn load_order(s: &str) -> Result<LoadOrder, String> {
    LoadOrder::parse(s).map_err(|e| e.to_string())
}

/// `--mode`, `--batch`, `--kv` and `--num-layers`: the run a graph is built (zoo model) or
/// imported (graph file) for, the same flags with the same defaults in every command that
/// makes a graph.
#[derive(Args, Debug, Clone, Copy)]
pub struct RunShapeArgs {
    /// decode, prefill, forward-batch (a training batch's forward pass alone: what the
    /// reference artifact calls training) or training (forward, backward and the Adam update;
    /// docs/training.md).
    #[arg(long, default_value = "decode", value_parser = mode)]
    pub mode: Mode,
    /// Batch size.
    #[arg(long, default_value_t = 32, value_parser = count::<u64>, allow_negative_numbers = true)]
    pub batch: u64,
    /// KV length (decode) or sequence length (every other mode).
    #[arg(long, alias = "seq", default_value_t = 2048, value_parser = count::<u64>, allow_negative_numbers = true)]
    pub kv: u64,
    /// The number of layers: a zoo model is built with N layers; an imported graph must
    /// have N identical layers (when detection finds none or the wrong ones).
    #[arg(long, value_name = "N", value_parser = count::<usize>, allow_negative_numbers = true)]
    pub num_layers: Option<usize>,
}

impl RunShapeArgs {
    /// The run as a request takes it.
    pub fn shape(&self) -> RunShape {
        RunShape {
            mode: self.mode,
            batch: self.batch,
            kv: self.kv,
            num_layers: self.num_layers,
        }
    }
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
        _ => Err("must be a positive number of seconds".into()),
    }
}

/// A whole number of things (`--batch`, `--kv`, `--num-layers`, `--width`, …): a negative one
/// is refused as such, not as "invalid digit" (zero passes here; each command says what it
/// needs of it).
pub fn count<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    if s.starts_with('-') && s.parse::<f64>().is_ok() {
        return Err("must be positive".into());
    }
    s.parse::<T>()
        .map_err(|_| "expected a positive whole number".into())
}

/// `--work-limit N`: a positive whole number of work units (0, a negative number and a
/// non-number are refused in one line, exit code 2).
pub fn work_limit(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(elk_app::gap::WORK_LIMIT_POSITIVE.into()),
    }
}

/// `--window W`: a whole number of stages, 1 or more.
pub fn window(s: &str) -> Result<u32, String> {
    let at_least_one = || elk_app::request::WINDOW_AT_LEAST_ONE.to_string();
    if s.starts_with('-') && s.parse::<f64>().is_ok() {
        return Err(at_least_one());
    }
    match s.parse::<u64>() {
        Ok(0) => Err(at_least_one()),
        Ok(w) => u32::try_from(w).map_err(|_| format!("must be at most {} (stages)", u32::MAX)),
        Err(_) => Err("expected a whole number of stages".into()),
    }
}

/// A command line clap refused, printed as clap prints it, except a conflict between two
/// flags: one line naming both and why they cannot go together (clap's own message says
/// neither why nor fits on one line). Exit code 2 for every refusal, as clap gives.
pub fn parse_error(err: clap::Error) -> std::process::ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let flag = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(flag_name(s)),
        Some(ContextValue::Strings(v)) => v.first().map(|s| flag_name(s)),
        _ => None,
    };
    let pair = (flag(ContextKind::InvalidArg), flag(ContextKind::PriorArg));
    match (err.kind(), pair) {
        (ErrorKind::ArgumentConflict, (Some(a), Some(b))) => {
            eprintln!("error: {}", conflict(&a, &b));
            std::process::ExitCode::from(2)
        }
        // A value its parser refused: one line, as the CLI's own checks print it
        // (`--hbm-tbps -8: must be positive`), without clap's usage block.
        (ErrorKind::ValueValidation, (Some(flag), _)) => {
            let value = match err.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(v)) => v.clone(),
                _ => String::new(),
            };
            let why = std::error::Error::source(&err)
                .map_or_else(|| "invalid value".to_string(), |e| e.to_string());
            eprintln!(
                "error: {}",
                elk_stage::error::one_line(&format!("{flag} {value}: {why}"))
            );
            std::process::ExitCode::from(2)
        }
        _ => err.exit(),
    }
}

/// `--batch <BATCH>` → `--batch`.
fn flag_name(s: &str) -> String {
    s.split_whitespace().next().unwrap_or(s).to_string()
}

/// Why flags `a` and `b` are refused together, naming the one that would be ignored first.
fn conflict(a: &str, b: &str) -> String {
    if a == b {
        // clap reports a repeated single-valued flag as a conflict with itself.
        return format!("{a} given twice: give it once");
    }
    let (fixed, other) = if ["--instance", "--method", "--json"].contains(&b) {
        (b, a)
    } else {
        (a, b)
    };
    let why = match fixed {
        "--instance" => "the instance file already fixes the graph (model, mode, batch, KV, \
                         layers), the chip, the cut and the load order, so it would be ignored; \
                         build another instance with `elk-opt instance` to change it"
            .to_string(),
        "--method" => format!("{other} is a flag of the exact solver (`solve --exact`)"),
        "--json" if other == "--csv" => {
            "they are two formats of the same results: choose one".to_string()
        }
        "--json" => "--json prints every operator already".to_string(),
        _ => "the two ask for different things".to_string(),
    };
    format!("{other} cannot be used with {fixed}: {why}")
}

/// `--out`, the old spelling of `-o/--output` in `sweep`, `report` and `study`: refused with a
/// message naming the new one, so an old script fails loudly instead of writing elsewhere.
#[derive(Args, Debug, Clone)]
pub struct OldOut {
    #[arg(long = "out", hide = true, value_name = "PATH")]
    out: Option<std::path::PathBuf>,
}

impl OldOut {
    /// A usage error when `--out` was given.
    pub fn refuse(&self) -> anyhow::Result<()> {
        match &self.out {
            Some(p) => Usage::err(format!(
                "--out {}: the output flag is -o/--output in every command (-o {})",
                p.display(),
                p.display()
            )),
            None => Ok(()),
        }
    }
}

/// Parses `--dram-readers`: `auto` (`compare` tries every count worth trying and keeps each
/// method's fastest) or a whole number of cores.
pub fn dram_readers(s: &str) -> Result<DramReaders, String> {
    match s {
        "auto" => Ok(DramReaders::Auto),
        _ => count::<u64>(s)
            .map(DramReaders::Count)
            .map_err(|e| format!("{e} of cores, or auto")),
    }
}
