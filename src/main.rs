//! `elk-opt`: the command line. Wiring only — every computation lives in the library crates.
//!
//! Exit codes: 0 ok, 1 runtime failure, 2 bad input (unknown names, malformed files, bad flags).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line, whatever the message quotes.
            eprintln!("error: {}", elk_model::error::one_line(&format!("{err:#}")));
            ExitCode::from(cli::exit_code(&err))
        }
    }
}
