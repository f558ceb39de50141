//! `elk-opt`: the command line. Wiring only — every computation lives in the library crates.
//!
//! Exit codes: 0 ok, 1 runtime failure, 2 bad input (unknown names, malformed files, bad flags).

mod cli;

/// mimalloc instead of the system allocator: a `moe` step builds and drops about a million
/// small allocations (graph operators, instances, schedules) across the threads, and glibc's
/// malloc spent a quarter of the run in them (docs/moe.md, "What a run costs").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let args = match cli::Args::try_parse() {
        Ok(args) => args,
        Err(err) => return cli::parse_error(err),
    };
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line, whatever the message quotes.
            eprintln!("error: {}", elk_model::error::one_line(&format!("{err:#}")));
            ExitCode::from(cli::exit_code(&err))
        }
    }
}

/// A closed stdout (`elk-opt models show llama2-13b | head`) ends the process quietly with
/// 141, as SIGPIPE ends `cat`, instead of a panic and its backtrace: `println!` panics on a
/// broken pipe, and the workspace forbids the `unsafe` that restoring SIGPIPE would take.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
