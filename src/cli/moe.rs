//! `elk-opt moe`: MoE load policies over sampled routing steps (docs/moe.md).

use super::chip_choice;
use clap::Args;
use elk_app::moe::{MoeProgress, MoeReport, MoeSection, MoeSpec, StepBound, DEFAULT_METHODS};
use elk_app::request::{BoundChoice, ChipRequest, MoeRequest, PreparedMoe};
use elk_model::zoo::ZooModel;
use elk_stage::instance::{LoadOrder, NocRow};
use elk_stage::units::si;

/// A count ≥ 1 (`--batch`, `--kv`, `--steps`); a negative number gets this message too.
fn positive_count(s: &str) -> Result<u64, String> {
    match s.parse::<i64>() {
        Ok(v) if v >= 1 => Ok(v as u64),
        _ => Err(format!("'{s}': expected a whole number ≥ 1")),
    }
}

/// `elk-opt moe`: what to run.
#[derive(Args, Debug, Clone)]
pub struct MoeArgs {
    /// An MoE model of the zoo (mixtral-8x7b, qwen3-30b-a3b, olmoe-1b-7b) or a model file
    /// with a `[moe]` table.
    #[arg(long, default_value = "mixtral-8x7b")]
    pub model: String,
    /// Batch size (decode: one token per sequence, so the tokens routed per layer).
    #[arg(long, default_value_t = 32, value_parser = positive_count, allow_negative_numbers = true)]
    pub batch: u64,
    /// KV length.
    #[arg(long, default_value_t = 2048, value_parser = positive_count, allow_negative_numbers = true)]
    pub kv: u64,
    /// Build the model with N layers.
    #[arg(long, value_name = "N")]
    pub num_layers: Option<usize>,
    /// Element types (as `--dtype` elsewhere).
    #[arg(long, value_parser = super::flags::dtype)]
    pub dtype: Option<elk_model::dtype::Dtypes>,
    /// Chip preset or TOML file.
    #[arg(long, default_value = chip_choice::DEFAULT_CHIP)]
    pub chip: String,
    /// Override the chip's HBM bandwidth, TB/s.
    #[arg(long, allow_negative_numbers = true)]
    pub hbm_tbps: Option<f64>,
    /// K of the chip's cores only stream weights from DRAM into the others' SRAM (a multiple
    /// of the grid's height; docs/chips.md, "DRAM-reader cores"). Without it a chip with a
    /// reader rate (wormhole-n150, blackhole-p150) reads DRAM at its interleaved rate. `auto`
    /// is `compare`'s alone.
    #[arg(
        long,
        value_name = "K",
        value_parser = super::flags::dram_readers,
        allow_negative_numbers = true
    )]
    pub dram_readers: Option<elk_app::request::DramReaders>,
    /// How tokens choose experts: uniform, zipf:S (skewed, e.g. zipf:1.2), balanced,
    /// grouped or grouped:S (group-limited, DeepSeek's routers) or trace:FILE (docs/moe.md
    /// has the trace format).
    #[arg(long, default_value = "uniform")]
    pub routing: String,
    /// Routing steps sampled (each one's policies are scheduled by every method of
    /// --methods: see there for the cost).
    #[arg(long, default_value_t = 100, value_parser = positive_count, allow_negative_numbers = true)]
    pub steps: u64,
    /// Seed of the samples (the same seed gives byte-identical output).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The policies, comma-separated: load-all, on-demand, predicted-M, resident-N (the N
    /// most used experts kept in SRAM, the others on demand), resident-auto (the resident set
    /// chosen under the chip's SRAM), oracle (always added). Default: load-all, on-demand,
    /// predicted-K (K = the model's top-k) and oracle.
    #[arg(long, value_delimiter = ',')]
    pub policies: Vec<String>,
    /// The heuristics that schedule each policy's instance (the best judged one counts).
    ///
    /// What each costs per routing step (its four policies' instances), in CPU seconds,
    /// measured on Mixtral-8x7B with 32 layers on ipu-pod4, decode B1 at 4 TB/s / B32 at
    /// 16 TB/s (2026-12-07): basic 0.01 / 0.01, basic-fill 0.01 / 0.01, elk-dyn 0.11 / 0.04,
    /// elk-dyn-greedy 0.09 / 0.06, static-fill 0.24 / 0.45, static 1.2 / 0.75, elk-full
    /// 10 / 3.9, elk-full-greedy 14 / 4.5. A run costs about that times --steps, spread
    /// over the cores; a terminal shows a bar of the instances scheduled.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_METHODS.map(String::from))]
    pub methods: Vec<String>,
    /// Load-order policy of the instances: free (the default), fixed, or a displacement D.
    #[arg(long, default_value = "free", value_parser = super::flags::load_order)]
    pub load_order: LoadOrder,
    /// The instances' NoC row.
    #[arg(long, value_enum, default_value = "phased")]
    pub noc_row: NocRow,
    /// Also run every step with the experts with tokens side by side, each on its own group
    /// of cores (parallel sets, docs/core-groups.md), and report each policy with and
    /// without them.
    #[arg(long)]
    pub expert_parallel: bool,
    /// Each step's certified lower bound, of its oracle's instance (so below every policy of
    /// the step): `roofline` (instant); `stage`, the stage relaxation LP or the roofline where
    /// stronger (≈ 4–6 s a step on OLMoE-1B-7B or Mixtral-8x7B, identical steps bounded once,
    /// steps in parallel; not tried above 10,000 operators; docs/exact.md, "The stage
    /// relaxation"); or `segment`, the best of that and the coupled segment relaxation LP,
    /// which applies only where the step's layers repeat (the balanced routing) and gets up
    /// to a minute a step.
    #[arg(long, value_enum, default_value = "roofline")]
    pub bound: BoundChoice,
    /// Every step's row in the text output too (the JSON always has them).
    #[arg(long)]
    pub all_steps: bool,
    /// Also write step 0's instance of each policy (and the oracle's) to DIR as
    /// `step0-<policy>.json` (elk-instance/1; with --expert-parallel, the instances with
    /// parallel sets, elk-instance/2), e.g. for `solve --exact --instance`.
    #[arg(long, value_name = "DIR")]
    pub emit_instances: Option<std::path::PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// `compare --routing`: the MoE load policies after the methods (as `elk-opt moe`).
#[derive(Args, Debug, Clone)]
pub struct CompareMoe {
    /// An MoE model: also run the load policies (load-all, on-demand, predicted-K, oracle)
    /// over sampled routing steps, as `elk-opt moe` does: uniform, zipf:S, balanced,
    /// grouped, grouped:S or trace:FILE (docs/moe.md).
    #[arg(long)]
    pub routing: Option<String>,
    /// With --routing: the routing steps sampled.
    #[arg(long, default_value_t = 100, value_parser = positive_count, allow_negative_numbers = true)]
    pub steps: u64,
    /// With --routing: the seed of the samples.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// With --routing: the policies, comma-separated (as `elk-opt moe --policies`).
    #[arg(long, value_delimiter = ',')]
    pub policies: Vec<String>,
}

/// `compare --routing`'s section: the policies of `request`.
pub fn run_section(request: &MoeRequest) -> anyhow::Result<MoeSection> {
    let prepared = prepare(request)?;
    let report = run_with_progress(&prepared.model, &prepared.spec, request.step_bound())?;
    Ok(prepared.section(report))
}

/// [`elk_app::moe::run_with_bound`] with a bar on stderr (on a terminal, as every long
/// command): the routing steps built, their bounds (unless the roofline), then the (step,
/// policy) instances scheduled, which is where the time goes.
fn run_with_progress(
    model: &ZooModel,
    spec: &MoeSpec,
    bound: StepBound,
) -> anyhow::Result<MoeReport> {
    let bar = super::progress::bar(spec.steps as u64, "moe");
    let report = elk_app::moe::run_with_bound(model, spec, bound, &|p| match p {
        MoeProgress::Built { done, of } => {
            bar.set_length(of as u64);
            bar.set_position(done as u64);
            bar.set_message("routing steps built");
        }
        MoeProgress::Bounded { done, of } => {
            if done == 1 {
                bar.reset_eta();
            }
            bar.set_length(of as u64);
            bar.set_position(done as u64);
            bar.set_message("distinct steps bounded");
        }
        MoeProgress::Scheduled { done, of, last } => {
            if done == 1 {
                bar.reset_eta();
            }
            bar.set_length(of as u64);
            bar.set_position(done as u64);
            bar.set_message(format!("policy instances scheduled (last: {last})"));
        }
    })?;
    bar.finish_and_clear();
    Ok(report)
}

/// The section's text table.
pub fn print_section(section: &MoeSection, tokens: u64) {
    let moe = elk_model::zoo::Moe {
        experts: section.experts,
        top_k: section.top_k,
        ..NO_EXPERTS
    };
    print(
        &section.title,
        &moe,
        (&section.routing, tokens),
        &section.report,
        false,
    );
}

/// A model without experts (never printed: `spec` refuses one).
const NO_EXPERTS: elk_model::zoo::Moe = elk_model::zoo::Moe::every_layer(0, 0, 0);

impl MoeArgs {
    /// The run the flags ask for.
    pub fn request(&self) -> MoeRequest {
        MoeRequest {
            model: self.model.clone(),
            batch: self.batch,
            kv: self.kv,
            num_layers: self.num_layers,
            dtype: self.dtype,
            chip: ChipRequest {
                dram_readers: self.dram_readers,
                ..ChipRequest::with_hbm(&self.chip, self.hbm_tbps)
            },
            routing: self.routing.clone(),
            steps: self.steps,
            seed: self.seed,
            policies: self.policies.clone(),
            methods: self.methods.clone(),
            load_order: self.load_order,
            noc_row: self.noc_row,
            expert_parallel: self.expert_parallel,
            bound: self.bound,
        }
    }
}

/// The model, the spec and the run's title of `request`, its warnings on stderr.
fn prepare(request: &MoeRequest) -> anyhow::Result<PreparedMoe> {
    request
        .prepare(
            super::plan_cache::get(),
            &mut super::notice::Stderr::default(),
        )
        .map_err(super::notice::cli_error)
}

pub fn run(a: MoeArgs) -> anyhow::Result<()> {
    let request = a.request();
    let prepared = prepare(&request)?;
    let (model, spec) = (&prepared.model, &prepared.spec);
    let report = run_with_progress(model, spec, request.step_bound())?;
    if let Some(dir) = &a.emit_instances {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        for (p, inst) in elk_app::moe::step_instances(model, spec, 0)? {
            let path = dir.join(format!("step0-{}.json", p.name()));
            super::output::write_atomic(&path, &inst.to_json()?)?;
        }
    }
    if a.json {
        let config = request.config(&prepared);
        let results = prepared.results(&report);
        return super::json::print_json("moe", &config, &results);
    }
    print(
        &prepared.title,
        &prepared.moe,
        (&spec.routing.label(), a.batch),
        &report,
        a.all_steps,
    );
    Ok(())
}

/// The text table of a run of `routing` with `tokens` tokens per layer.
pub fn print(
    title: &str,
    moe: &elk_model::zoo::Moe,
    (routing, tokens): (&str, u64),
    r: &MoeReport,
    all_steps: bool,
) {
    println!("{title}");
    for w in &r.warnings {
        println!("warning: {w}");
    }
    // The uniform expectation is the yardstick of every routing; under another one it is
    // named as a comparison, not as this run's routing.
    let uniform = format!(
        "E·(1 − (1 − k/E)^n) = {:.2}",
        r.uniform_expected_experts_per_layer
    );
    let yardstick = if routing == "uniform" {
        format!("uniform routing expects {uniform}")
    } else {
        format!("for comparison, uniform routing would give {uniform}")
    };
    println!(
        "{} experts per layer, top-{}, {tokens} {} per layer: {:.2} experts receive tokens per \
         layer on average ({yardstick})",
        moe.experts,
        moe.top_k,
        if tokens == 1 { "token" } else { "tokens" },
        r.mean_touched_experts_per_layer,
    );
    print_policies(r, all_steps);
    print_resident(r);
    if let Some(with) = &r.expert_parallel {
        println!(
            "\nWith expert parallelism (the experts with tokens side by side on groups of \
             cores; docs/core-groups.md):"
        );
        print_policies(with, all_steps);
        println!("\nExpert parallelism, mean ms without → with:");
        for (a, b) in r.summary.iter().zip(&with.summary) {
            println!(
                "{:<14} {:>10.4} → {:>10.4} ({:.2}× faster)",
                a.policy,
                a.mean_ms,
                b.mean_ms,
                a.mean_ms / b.mean_ms
            );
        }
    }
    let keeps = if r.resident.is_empty() {
        ""
    } else {
        "; with a resident policy's experts kept as it keeps them where that is faster"
    };
    println!(
        "vs oracle: mean over steps of makespan / the oracle's − 1 (the oracle knows the step's \
         routing: loads exactly the experts with tokens, whenever it likes{keeps})"
    );
    println!(
        "gap ≤ %: mean over steps of makespan / the step's certified {} − 1 (the bound of the \
         oracle's instance, below every policy's makespan of that step)",
        bounds_named(r)
    );
    println!(
        "experts/lyr: expert weights loaded per layer and step; loaded/step: their bytes. Each \
         policy's schedule is the best judged of the heuristics given (--methods); \
         {} operator shapes planned",
        r.planned_shapes
    );
}

/// The steps' bounds as the footer names them: "roofline bound", or where steps differ
/// "lower bound (per step: stage relaxation or roofline)".
fn bounds_named(r: &MoeReport) -> String {
    let mut names: Vec<String> = Vec::new();
    for s in &r.steps {
        let name = s.bound_source.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [one] => format!("{one} bound"),
        _ => format!("lower bound (per step: {})", names.join(" or ")),
    }
}

/// What each resident policy keeps in SRAM, and how resident-auto chose it.
fn print_resident(r: &MoeReport) {
    for x in &r.resident {
        let (lo, hi) = x
            .experts_per_layer
            .iter()
            .fold((usize::MAX, 0), |(lo, hi), &n| (lo.min(n), hi.max(n)));
        println!(
            "{}: {} of {} experts resident ({}–{} per MoE layer), {} per core ({:.1} % of its \
             SRAM), the others {}; they save {} of expert loads per step in expectation (the \
             set is the knapsack's optimum for that: certified gap {} %)",
            x.policy,
            x.experts,
            x.of_experts,
            lo.min(hi),
            hi,
            si(x.sram_bytes_per_core as f64, "B"),
            x.sram_pct,
            x.rest,
            si(x.expected_bytes_saved_per_step, "B"),
            x.knapsack_gap_pct,
        );
        const SHOWN: usize = 16;
        let named: Vec<String> = x.resident.iter().take(SHOWN).cloned().collect();
        if !named.is_empty() {
            let more = x.resident.len().saturating_sub(SHOWN);
            let rest = if more > 0 {
                format!(" and {more} more (all in --json's resident)")
            } else {
                String::new()
            };
            println!("  resident: {}{rest}", named.join(", "));
        }
        if let Some(c) = &x.calibration {
            println!(
                "  on its calibration steps: {:.4} ms against {:.4} ms for the better of \
                 load-all and on-demand ({:+.2} %)",
                c.chosen_mean_ms,
                c.without_resident_ms,
                100.0 * (c.chosen_mean_ms / c.without_resident_ms - 1.0)
            );
            let tried: Vec<String> = c
                .candidates
                .iter()
                .map(|k| match k.mean_ms {
                    Some(ms) => format!("{} {}: {ms:.4}", k.rest, k.experts),
                    None => format!("{} {}: no schedule", k.rest, k.experts),
                })
                .collect();
            println!(
                "  chosen by mean ms on {} calibration {} (apart from the run's; at most {} \
                 experts fit): {}",
                c.steps,
                if c.steps == 1 { "step" } else { "steps" },
                c.max_experts,
                tried.join(", ")
            );
        }
    }
}

/// The table of `r`'s policies, and with `all_steps` every step's makespans.
fn print_policies(r: &MoeReport, all_steps: bool) {
    println!(
        "{:<14} {:>10} {:>10} {:>10} {:>11} {:>13} {:>12} {:>10}",
        "policy",
        "mean ms",
        "p50 ms",
        "p99 ms",
        "vs oracle",
        "gap ≤ % mean",
        "experts/lyr",
        "loaded/step"
    );
    for s in &r.summary {
        println!(
            "{:<14} {:>10.4} {:>10.4} {:>10.4} {:>10.2}% {:>13.2} {:>12.2} {:>10}",
            s.policy,
            s.mean_ms,
            s.p50_ms,
            s.p99_ms,
            s.mean_vs_oracle_pct,
            s.mean_gap_pct,
            s.mean_experts_per_layer,
            si(s.mean_expert_bytes, "B"),
        );
    }
    if all_steps {
        println!(
            "\nstep  bound ms  {}",
            r.summary
                .iter()
                .map(|s| format!("{:>12}", s.policy))
                .collect::<Vec<_>>()
                .join("")
        );
        for st in &r.steps {
            println!(
                "{:>4} {:>9.4}  {}",
                st.index,
                st.bound_ms,
                st.policies
                    .iter()
                    .map(|p| format!("{:>12.4}", p.makespan_ms))
                    .collect::<Vec<_>>()
                    .join("")
            );
        }
    }
}
