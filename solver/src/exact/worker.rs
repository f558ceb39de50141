//! Hard time limits: the exact solve runs in a child process that is killed when the limit
//! (plus a grace period) passes, whatever the backend is doing. HiGHS honours its own limit
//! between nodes but can overrun inside presolve or a long LP; a killed process always stops.
//!
//! The child is any command that runs [`serve`] (the `elk-opt` binary has a hidden
//! subcommand for it): it reads one [`WorkerRequest`] as JSON on stdin and writes one
//! [`WorkerResponse`] on stdout. While it solves, it writes each [`ExactEvent`] on stderr
//! as a line `PROGRESS` + JSON, which [`solve_supervised_with`] hands to its callback.

use crate::error::{Result, SolverError};
use crate::exact::solve::solve;
use crate::exact::{ExactEvent, ExactOptions, ExactReport};
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod killed;

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

/// The prefix of a progress line on the worker's stderr (any other line is ignored).
pub const PROGRESS: &str = "elk-progress ";

/// The child's side: one request in, one response out, progress lines on stderr.
pub fn serve(mut input: impl Read, mut output: impl Write) -> Result<()> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| SolverError::Worker(format!("reading the request: {e}")))?;
    let request: WorkerRequest = serde_json::from_str(&text)
        .map_err(|e| SolverError::Worker(format!("bad request: {e}")))?;
    // A parent that stopped reading is no reason to stop solving: write errors are ignored.
    let progress = |e: &ExactEvent| {
        if let Ok(json) = serde_json::to_string(e) {
            let _ = writeln!(std::io::stderr().lock(), "{PROGRESS}{json}");
        }
    };
    let response = match solve(&request.instance, &request.options, &progress) {
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
        /// What its progress told before the kill: the last incumbent and the best bound.
        told: Told,
    },
}

/// What a worker's progress lines told: the last [`ExactEvent::Incumbent`] and the best
/// proven bound of any event. A killed worker's report is made of it, so a solve stopped at
/// its hard limit keeps what it had found (re-judged: the schedule is validated again).
#[derive(Debug, Default)]
pub struct Told {
    /// The last incumbent.
    pub incumbent: Option<Box<Schedule>>,
    /// The best lower bound any event carried.
    pub bound: Option<Cycles>,
}

impl Told {
    /// Takes in one event.
    pub fn hear(&mut self, e: &ExactEvent) {
        let bound = match e {
            ExactEvent::Phase { bound, .. } | ExactEvent::Segment { bound, .. } => *bound,
            // HiGHS's running bound is shown, not kept: after a warm start HiGHS 1.16 may
            // report an objective below its own columns (docs/exact.md, "The window
            // search"), and only the run's end is checked for it.
            ExactEvent::Milp { .. } => return,
            ExactEvent::Incumbent {
                schedule, bound, ..
            } => {
                self.incumbent = Some(schedule.clone());
                *bound
            }
        };
        self.bound = Some(self.bound.map_or(bound, |b| b.max(bound)));
    }
}

impl Supervised {
    /// The report either way: a killed worker leaves the better of the warm start and the
    /// last incumbent it told (judged again), and the best of the roofline and the bounds
    /// it told.
    pub fn into_report(self, instance: &Instance, options: &ExactOptions) -> ExactReport {
        match self {
            Supervised::Finished(report) => *report,
            Supervised::Killed { after_s, told } => {
                killed::after_kill(instance, options, told, after_s)
            }
        }
    }
}

/// What the supervisor's reader threads pass on.
enum Message {
    /// A progress line from the worker's stderr.
    Event(ExactEvent),
    /// The worker's whole stdout (or the pipe's error).
    Answer(std::io::Result<String>),
}

/// Runs the solve in `worker` (a command that calls [`serve`]) and kills it `grace` after
/// the options' time limit (never, without a limit).
pub fn solve_supervised(
    worker: &mut Command,
    instance: &Instance,
    options: &ExactOptions,
    grace: Duration,
) -> Result<Supervised> {
    solve_supervised_with(worker, instance, options, grace, &|_| {})
}

/// [`solve_supervised`], handing each progress line of the worker to `progress` (on this
/// thread, as it arrives).
pub fn solve_supervised_with(
    worker: &mut Command,
    instance: &Instance,
    options: &ExactOptions,
    grace: Duration,
    progress: &dyn Fn(&ExactEvent),
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
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SolverError::Worker(format!("starting: {e}")))?;
    let rx = listen(&mut child, request);
    let deadline = options.time_limit.map(|limit| limit + grace);
    let mut told = Told::default();
    let received = loop {
        let message = match deadline {
            Some(d) => rx.recv_timeout(d.saturating_sub(started.elapsed())),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match message {
            Ok(Message::Event(e)) => {
                told.hear(&e);
                progress(&e);
            }
            Ok(Message::Answer(answer)) => break Ok(answer),
            Err(e) => break Err(e),
        }
    };
    let Ok(answer) = received else {
        // The deadline passed (or every sender hung up without an answer): kill it, and
        // report what it told.
        let _ = child.kill();
        let _ = child.wait();
        return Ok(Supervised::Killed {
            after_s: started.elapsed().as_secs_f64(),
            told,
        });
    };
    conclude(child, answer)
}

/// Writes `request` to the child and starts the threads that read it: its stderr's progress
/// lines become [`Message::Event`]s, its whole stdout one [`Message::Answer`].
fn listen(child: &mut Child, request: String) -> mpsc::Receiver<Message> {
    let (tx, rx) = mpsc::channel();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    // The worker's stderr is always drained (a full pipe would stall it); lines that are not
    // progress lines are dropped, as they were when its stderr went nowhere.
    if let Some(stderr) = child.stderr.take() {
        let events = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let event = line
                    .strip_prefix(PROGRESS)
                    .and_then(|json| serde_json::from_str(json).ok());
                if let Some(e) = event {
                    if events.send(Message::Event(e)).is_err() {
                        break;
                    }
                }
            }
        });
    }
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
        let _ = tx.send(Message::Answer(written.and(read).map(|_| text)));
    });
    rx
}

/// The child answered in time: its report, or why there is none.
fn conclude(mut child: Child, answer: std::io::Result<String>) -> Result<Supervised> {
    let text = match answer {
        Ok(text) => text,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SolverError::Worker(format!("pipe: {e}")));
        }
    };
    let _ = child.wait();
    match serde_json::from_str::<WorkerResponse>(&text) {
        Ok(WorkerResponse::Ok(report)) => Ok(Supervised::Finished(report)),
        Ok(WorkerResponse::Error(e)) => Err(SolverError::Worker(e)),
        Err(e) => Err(SolverError::Worker(format!(
            "unreadable answer ({e}); the worker may have crashed"
        ))),
    }
}
