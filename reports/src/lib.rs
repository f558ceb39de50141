//! `elk-reports`: the presentation of elk-opt's results (SPEC §7). [`report`] turns a sweep's
//! results (`elk_app::sweep`'s JSON lines) into Markdown tables and SVG or PNG plots
//! ([`plot`]), [`html`] makes one self-contained page of a report, [`csv_text`] writes every
//! CSV, [`finding`] each report's headline, [`summary`] the results summary from them, and [`studies`] write the
//! reviewers' questions, each one command, from the results `elk_app::studies` computes. It
//! runs nothing itself: every computation is `elk-app`'s, and its errors are
//! `elk_app::AppError`.
//!
//! ```
//! use elk_reports::plot::{bars, Series, Style};
//! let series = [Series { name: "basic".into(), points: vec![(0.0, Some(1.5))] }];
//! let figure = bars("doc", &["llama2-13b".into()], &series, "latency (ms)", &Style::default()).unwrap();
//! let [svg, csv] = figure.files("doc");
//! assert_eq!(svg.0, "doc.svg");
//! assert!(String::from_utf8(csv.1).unwrap().contains("basic"));
//! ```
#![deny(missing_docs)]

pub mod csv_text;
pub mod finding;
pub mod html;
pub mod plot;
pub mod report;
pub mod studies;
pub mod summary;
