//! Study `measured`: the vendor's published end-to-end decode measurements beside elk-opt.
//! Each row of [`MEASUREMENTS`] (Tenstorrent's tt-metal, one chip, batch 32, KV length 128)
//! is built as `elk-opt compare --model M --chip C --batch 32 --kv 128 --dtype` [`DTYPES`]
//! builds it (the request layer: a Tensix chip's lm_head split and separate gate/up
//! included), with `--dram-readers auto` (each count of DRAM-reader cores the preset offers,
//! the fastest kept), every method runs on it
//! ([`crate::compare::run::run_reader_counts`], no timings), and the best
//! schedule's makespan is set against `compare`'s default certified bound (the better of the
//! roofline and the stage relaxation; the coupled segment LP took 42 s on the Llama 3.1 8B
//! n150 row, over the 20 s per row this study affords), the
//! measured time per token and the terms that explain the difference. Nothing is fitted to these measurements:
//! they are the check. Its report is `elk_reports::studies::measured`.

use super::{OnStep, Steps};
use crate::compare::run::{run_reader_counts, Unwatched};
use crate::request::{
    ChipRequest, Collected, CompareRequest, Cut, DramReaders, InstanceInput, InstanceRequest,
    ModelRequest, ModelSource, RequestError, RunShape, StageChoices,
};
use crate::Result;
use elk_model::chip::CostModelSpec;
use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;

/// Tenstorrent's "performance mode" (tt-metal's models/tt_transformers/PERF.md): bfp8
/// weights and KV cache, bfp4 weights in the dense FFNs, bf16 activations.
pub const DTYPES: &str = "w=bfp8,ffn=bfp4,kv=bfp8,a=bf16";

/// The batch of every measurement (users).
pub const BATCH: u64 = 32;

/// The KV length of the measured decode step: the input length, 128 tokens.
pub const KV: u64 = 128;

/// The table the measurements come from (its LLMs table, "Last Update: Nov 3, 2025").
pub const SOURCE: &str =
    "tenstorrent/tt-metal@020681562ac12f6680bafbc83fafea98e7a3b4d4:models/README.md";

/// One published measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// The zoo model elk-opt builds.
    pub model: &'static str,
    /// The model as the source lists it.
    pub listed: &'static str,
    /// The chip preset elk-opt builds it on.
    pub chip: &'static str,
    /// The board as the source lists it.
    pub board: &'static str,
    /// Decode tokens per second per user (1 / time per token).
    pub tok_s_user: f64,
    /// Where the number is: `repo@commit:path`.
    pub source: &'static str,
}

impl Measurement {
    /// The measured time per token, ms.
    pub fn ms(&self) -> f64 {
        1000.0 / self.tok_s_user
    }
}

/// The measurements: tenstorrent/tt-metal@020681562ac12f6680bafbc83fafea98e7a3b4d4,
/// models/README.md, LLMs table (Last Update: Nov 3, 2025), batch 32, input length 128
/// (decode at KV length 128), t/s/u = 1 / time per token; copied into
/// tests/fixtures/tenstorrent/e2e.csv, which a test checks these rows against. The p150 row is
/// starred there: "Blackhole software optimization under active development".
pub const MEASUREMENTS: [Measurement; 5] = [
    Measurement {
        model: "llama3-8b",
        listed: "Llama 3.1 8B",
        chip: "wormhole-n150",
        board: "n150",
        tok_s_user: 26.0,
        source: SOURCE,
    },
    Measurement {
        model: "llama3-8b",
        listed: "Llama 3.1 8B",
        chip: "blackhole-p150",
        board: "p150",
        tok_s_user: 33.1,
        source: SOURCE,
    },
    Measurement {
        model: "llama3.2-1b",
        listed: "Llama 3.2 1B",
        chip: "wormhole-n150",
        board: "n150",
        tok_s_user: 80.5,
        source: SOURCE,
    },
    Measurement {
        model: "llama3.2-3b",
        listed: "Llama 3.2 3B",
        chip: "wormhole-n150",
        board: "n150",
        tok_s_user: 46.6,
        source: SOURCE,
    },
    Measurement {
        model: "mistral-7b",
        listed: "Mistral 7B",
        chip: "wormhole-n150",
        board: "n150",
        tok_s_user: 28.7,
        source: SOURCE,
    },
];

/// One measurement beside elk-opt's numbers for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The measurement.
    pub measured: Measurement,
    /// The method with the best simulated makespan (None: no method found a schedule).
    pub best_method: Option<String>,
    /// Its makespan, ms (the simulator's).
    pub best_ms: Option<f64>,
    /// The DRAM-reader cores of the chip it ran on (docs/chips.md, "DRAM-reader cores").
    pub readers: u64,
    /// The cores left to compute there.
    pub compute_cores: u64,
    /// The best makespan without reader cores (every core computes and reads DRAM at the
    /// interleaved rate), ms.
    pub without_readers_ms: Option<f64>,
    /// The certified lower bound, ms.
    pub bound_ms: f64,
    /// Which bound that is (`roofline` or `stage relaxation`).
    pub bound_source: String,
    /// The roofline's HBM part: every byte at the preset's bandwidth, ms.
    pub hbm_ms: f64,
    /// The roofline's execution part: every operator's fastest option, ms.
    pub exec_ms: f64,
    /// The operators of the instance.
    pub ops: usize,
    /// `ops` × the preset's `op_overhead_cycles` / its clock, ms (part of `exec_ms`).
    pub overhead_ms: f64,
    /// The bytes read from DRAM (weights and KV cache).
    pub bytes: f64,
    /// The DRAM rate the best schedule's compute cores get (with its reader cores), bytes/s.
    pub preset_bytes_per_s: f64,
}

impl Row {
    /// Best makespan / measured time (the target: 0.3–1.1).
    pub fn ratio(&self) -> Option<f64> {
        self.best_ms.map(|b| b / self.measured.ms())
    }

    /// The DRAM bandwidth at which the bytes alone take the measured time, bytes/s.
    pub fn needed_bytes_per_s(&self) -> f64 {
        self.bytes / (self.measured.ms() / 1000.0)
    }
}

/// Builds `m`'s instance as `compare` does on every count of DRAM-reader cores the preset
/// offers (`compare --dram-readers auto --no-timings`), runs every method on each and fills
/// its [`Row`] with the fastest schedule over the counts, the lowest bound and the kept
/// count's roofline; instances are planned through `plans`.
pub fn row(m: &Measurement, plans: Option<&PlanCache>) -> Result<Row> {
    let chip = ChipRequest {
        dram_readers: Some(DramReaders::Auto),
        ..ChipRequest::named(m.chip)
    };
    let request = CompareRequest {
        input: InstanceInput::Build(Box::new(instance_request(m, chip)?)),
        no_timings: true,
        ..CompareRequest::default()
    };
    let counts = run_reader_counts(
        &request,
        plans.cloned(),
        &mut Collected::default(),
        None,
        &Unwatched,
    )?;
    let report = &counts.outcome.report;
    let kept = &report.dram_reader_counts[counts.kept];
    // The terms are of the count the best schedule ran on, at that count's DRAM rate.
    let (inst, spec) = (&counts.built.instance, &counts.built.chip.spec);
    let overhead_cycles = match spec.cost_model {
        CostModelSpec::Tensix {
            op_overhead_cycles, ..
        } => op_overhead_cycles,
        _ => 0.0,
    };
    let hbm_ms = inst.ms(kept.roofline.hbm_cycles);
    Ok(Row {
        measured: *m,
        best_method: kept.best_method.clone(),
        best_ms: kept.best_ms,
        readers: kept.readers,
        compute_cores: kept.compute_cores,
        without_readers_ms: report.dram_reader_counts.first().and_then(|c| c.best_ms),
        bound_ms: report.bound_ms,
        bound_source: report.bound_source.to_string(),
        hbm_ms,
        exec_ms: inst.ms(kept.roofline.exec_cycles),
        ops: inst.ops.len(),
        overhead_ms: 1000.0 * inst.ops.len() as f64 * overhead_cycles / inst.clock_hz,
        bytes: hbm_ms / 1000.0 * spec.hbm.bandwidth_bytes_per_s,
        preset_bytes_per_s: spec.hbm.bandwidth_bytes_per_s,
    })
}

/// `m`'s instance on `chip`, as `compare` builds it.
fn instance_request(m: &Measurement, chip: ChipRequest) -> Result<InstanceRequest> {
    let dtype = Dtypes::parse(DTYPES).map_err(RequestError::refused)?;
    Ok(InstanceRequest {
        model: ModelRequest {
            dtype: Some(dtype),
            ..ModelRequest::of(ModelSource::Zoo(m.model.into()))
        },
        shape: RunShape {
            mode: Mode::Decode,
            batch: BATCH,
            kv: KV,
            num_layers: None,
        },
        chip,
        cut: Cut::default(),
        choices: StageChoices::default(),
    })
}

/// Runs the study, each measurement a step of `progress`; instances are planned through
/// `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Row>> {
    let steps = Steps::new(MEASUREMENTS.len(), progress);
    MEASUREMENTS
        .iter()
        .map(|m| {
            steps.starting(&format!("{} on {}", m.model, m.chip));
            let r = row(m, plans)?;
            steps.finished(&format!("{} on {} done", m.model, m.chip));
            Ok(r)
        })
        .collect()
}
