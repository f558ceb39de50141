//! Subcommands: one file each under `cli/`.

mod chip_choice;
mod chips;
mod compare_table;
mod compare_watch;
mod detailed;
mod exact;
mod flags;
mod graph_table;
mod import;
mod instance;
mod instance_source;
mod json;
mod layer_exact;
mod method_rows;
mod models;
mod moe;
mod notice;
mod output;
mod plan_cache;
mod plans;
mod progress;
mod routing;
mod simulate;
mod solve;
mod source;
mod sweep;

use clap::{Parser, Subcommand};
pub use flags::parse_error;

/// elk-opt: schedule deep-learning models on inter-core connected AI chips, and tell how far
/// the schedule is from the best possible one.
#[derive(Parser, Debug)]
#[command(
    name = "elk-opt",
    version,
    about,
    after_help = "With no command: the main job, `elk-opt compare --bound segment --layer-exact 10 \
                  --work-limit 1` on Llama2-13B decode B32 KV2048 on ipu-pod4 (16 TB/s HBM): every \
                  method beside the segment relaxation's certified lower bound, then one layer \
                  solved exactly (proven optimal in under a second: stage-lp+queue's schedule \
                  meets the roofline bound) with each heuristic's gap there."
)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Enumerate plan tables afresh instead of reading and writing the plan cache
    /// ($XDG_CACHE_HOME/elk-opt, else ~/.cache/elk-opt).
    #[arg(long, global = true)]
    no_cache: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The built-in model zoo.
    #[command(subcommand)]
    Models(models::ModelsCmd),
    /// Import a graph in the reference JSON format and print its operator table.
    Import(import::ImportArgs),
    /// Chip presets and chip TOML files.
    #[command(subcommand)]
    Chips(chips::ChipsCmd),
    /// Intra-operator plans: per operator, plans evaluated, Pareto size, options, c_min.
    Plans(plans::PlansArgs),
    /// Build a stage-model instance (elk-instance/1) from a graph and a chip.
    Instance(instance::InstanceArgs),
    /// Validate and evaluate a schedule against its instance.
    Simulate(simulate::SimulateArgs),
    /// Schedule with one method; the simulator judges the result.
    Solve(solve::SolveArgs),
    /// Every available method side by side, with Elk's Ideal figure.
    Compare(solve::CompareArgs),
    /// Every heuristic's gap to the exact optimum (or to the certified lower bound).
    Gap(exact::GapArgs),
    /// MoE models: expert-loading policies (load-all, on-demand, predicted-M, oracle) over
    /// sampled routing steps, each judged, against the oracle and its certified bound.
    Moe(moe::MoeArgs),
    /// Routing traces: `routing import` turns a published routing log into a trace file.
    #[command(subcommand)]
    Routing(routing::RoutingCmd),
    /// Run a grid of configurations × methods (a preset fig17 … fig24 or a TOML file) into
    /// JSON lines; resumable, shardable.
    Sweep(sweep::SweepArgs),
    /// Turn sweep results into a Markdown report with SVG plots; `report merge` joins shards.
    Report(sweep::ReportArgs),
    /// Answer one reviewer question: gap, gap-whole, ideal, hbm-emulation, order-pruning,
    /// cost-noise, ablation, replay-fidelity, moe, resident, measured (a Markdown report with
    /// SVG plots).
    Study(sweep::StudyArgs),
    /// Internal: runs one exact solve read from stdin (used by `solve --exact` and `gap`
    /// so the time limit can be enforced by killing it).
    #[command(hide = true)]
    ExactWorker,
}

/// The main job, run with no arguments.
///
/// The layer's solve has a work budget (one branch-and-bound node) under a 10-s hard stop, so
/// its section is the same on every machine whatever proves the layer: today the best
/// heuristic (`stage-lp+queue`) meets the roofline bound; where none did, the LP relaxation
/// would run to its end and its options, queued, be tried (docs/exact.md, "The LP relaxation's
/// options"), where a time limit alone gives the LP a quarter of it, and whether it finished
/// would depend on the host's load.
const MAIN_JOB: [&str; 8] = [
    "elk-opt",
    "compare",
    "--bound",
    "segment",
    "--layer-exact",
    "10",
    "--work-limit",
    "1",
];

/// Runs the parsed command; with no subcommand, the main job ([`MAIN_JOB`]) on Llama2-13B
/// decode B32 KV2048 on ipu-pod4 (16 TB/s).
pub fn run(args: Args) -> anyhow::Result<()> {
    plan_cache::choose(args.no_cache);
    match args.command {
        None => run(Args::parse_from(MAIN_JOB)),
        Some(Command::Models(cmd)) => models::run(cmd),
        Some(Command::Import(a)) => import::run(a),
        Some(Command::Chips(cmd)) => chips::run(cmd),
        Some(Command::Plans(a)) => plans::run(a),
        Some(Command::Instance(a)) => instance::run(a),
        Some(Command::Simulate(a)) => simulate::run(a),
        Some(Command::Solve(a)) => solve::solve(a),
        Some(Command::Compare(a)) => solve::compare(a),
        Some(Command::Gap(a)) => exact::gap(a),
        Some(Command::Moe(a)) => moe::run(a),
        Some(Command::Routing(cmd)) => routing::run(cmd),
        Some(Command::Sweep(a)) => sweep::sweep(a),
        Some(Command::Report(a)) => sweep::run(a),
        Some(Command::Study(a)) => sweep::study(a),
        Some(Command::ExactWorker) => Ok(elk_solver::worker::serve(
            std::io::stdin(),
            std::io::stdout(),
        )?),
    }
}

/// 2 for bad input (anything the user can fix in their files or flags), 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    let bad_report_input = matches!(
        err.downcast_ref::<elk_app::AppError>(),
        Some(
            elk_app::AppError::Grid { .. }
                | elk_app::AppError::NoGrid { .. }
                | elk_app::AppError::Results { .. }
                | elk_app::AppError::Refused { .. }
        )
    );
    if err.downcast_ref::<elk_model::ModelError>().is_some()
        || err.downcast_ref::<simulate::Invalid>().is_some()
        || err.downcast_ref::<flags::Usage>().is_some()
        || err.downcast_ref::<elk_stage::StageError>().is_some()
        || err
            .downcast_ref::<elk_stage::method::MethodError>()
            .is_some_and(|e| e.exit_code() == 2)
        || bad_report_input
    {
        2
    } else {
        1
    }
}
