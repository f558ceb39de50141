//! Hard time limits: the exact solve runs in a child process that is killed when the limit
//! (plus a grace period) passes, whatever the backend is doing. HiGHS honours its own limit
//! between nodes but can overrun inside presolve or a long LP; a killed process always stops.
//!
//! The child is any command that runs [`serve`] (the `elk-opt` binary has a hidden
//! subcommand for it): it reads one [`WorkerRequest`] as JSON on stdin and writes one
//! [`WorkerResponse`] on stdout.

use crate::error::{Result, SolverError};
use crate::exact::{solve_exact, ExactOptions, ExactReport, ExactStop};
use elk_stage::instance::Instance;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the parent sends.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerRequest {
    /// The instance.
    pub instance: Instance,
    /// How to solve it.
    pub options: ExactOptions,
}

/// What the child answers.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerResponse {
    /// The report.
    Ok(Box<ExactReport>),
    /// The solve failed; one line.
    Error(String),
}

/// The child's side: one request in, one response out.
pub fn serve(mut input: impl Read, mut output: impl Write) -> Result<()> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| SolverError::Worker(format!("reading the request: {e}")))?;
    let request: WorkerRequest = serde_json::from_str(&text)
        .map_err(|e| SolverError::Worker(format!("bad request: {e}")))?;
    let response = match solve_exact(&request.instance, &request.options) {
        Ok(report) => WorkerResponse::Ok(Box::new(report)),
        Err(e) => WorkerResponse::Error(e.to_string()),
    };
    let json = serde_json::to_string(&response)
        .map_err(|e| SolverError::Worker(format!("encoding the response: {e}")))?;
    output
        .write_all(json.as_bytes())
        .map_err(|e| SolverError::Worker(format!("writing the response: {e}")))
}

/// How a supervised solve ended.
#[derive(Debug)]
pub enum Supervised {
    /// The worker answered in time.
    Finished(Box<ExactReport>),
    /// The worker overran and was killed after this many seconds.
    Killed {
        /// Wall-clock seconds until the kill.
        after_s: f64,
    },
}

impl Supervised {
    /// The report either way: a killed worker leaves the warm start (judged) and the
    /// roofline bound.
    pub fn into_report(self, instance: &Instance, options: &ExactOptions) -> ExactReport {
        match self {
            Supervised::Finished(report) => *report,
            Supervised::Killed { after_s } => ExactReport::without_solving(
                instance,
                options.backend,
                options.warm_start.clone(),
                ExactStop::Killed,
                after_s,
            ),
        }
    }
}

/// Runs the solve in `worker` (a command that calls [`serve`]) and kills it `grace` after
/// the options' time limit (never, without a limit).
pub fn solve_supervised(
    worker: &mut Command,
    instance: &Instance,
    options: &ExactOptions,
    grace: Duration,
) -> Result<Supervised> {
    let started = Instant::now();
    let request = serde_json::to_string(&WorkerRequest {
        instance: instance.clone(),
        options: options.clone(),
    })
    .map_err(|e| SolverError::Worker(format!("encoding the request: {e}")))?;
    let mut child = worker
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| SolverError::Worker(format!("starting: {e}")))?;
    let (tx, rx) = mpsc::channel();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    std::thread::spawn(move || {
        let mut text = String::new();
        let written = stdin
            .take()
            .map(|mut s| s.write_all(request.as_bytes()))
            .unwrap_or(Ok(()));
        let read = stdout
            .as_mut()
            .map(|s| s.read_to_string(&mut text).map(|_| ()))
            .unwrap_or(Ok(()));
        let _ = tx.send(written.and(read).map(|_| text));
    });
    let deadline = options.time_limit.map(|limit| limit + grace);
    let received = match deadline {
        Some(d) => rx.recv_timeout(d.saturating_sub(started.elapsed())),
        None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(Ok(text)) => {
            let _ = child.wait();
            match serde_json::from_str::<WorkerResponse>(&text) {
                Ok(WorkerResponse::Ok(report)) => Ok(Supervised::Finished(report)),
                Ok(WorkerResponse::Error(e)) => Err(SolverError::Worker(e)),
                Err(e) => Err(SolverError::Worker(format!(
                    "unreadable answer ({e}); the worker may have crashed"
                ))),
            }
        }
        Ok(Err(e)) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(SolverError::Worker(format!("pipe: {e}")))
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Ok(Supervised::Killed {
                after_s: started.elapsed().as_secs_f64(),
            })
        }
    }
}
