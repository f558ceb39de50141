//! Results → a Markdown report with SVG plots, one layout per figure type (SPEC §7):
//! `bars` (Fig 17: latency per configuration and method), `breakdown` (Fig 18/20: where the
//! time goes, utilisation, TFLOP/s), `vs-hbm` / `vs-noc` / `vs-cores` (Fig 19/21/22/23:
//! latency against the swept quantity) and `training` (Fig 24: TFLOP/s against compute speed).
//! Numbers are printed and plotted exactly as measured.

use crate::cell::{CellResult, MethodStatus};
use crate::error::Result;
use crate::finding::Finding;
use crate::grid::Cell;
use crate::plot::{bars, lines, Series};
use std::collections::BTreeMap;

/// Where a report came from: printed at its top.
#[derive(Clone, Debug)]
pub struct Header {
    /// The command that made it.
    pub command: String,
    /// Its inputs (files, presets).
    pub inputs: String,
    /// The date (YYYY-MM-DD).
    pub date: String,
}

impl Header {
    /// The Markdown lines.
    pub fn markdown(&self, title: &str) -> String {
        format!(
            "# {title}\n\n- command: `{}`\n- inputs: {}\n- date: {}\n\n",
            self.command, self.inputs, self.date
        )
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A report: its files (name → contents), `README.md` first.
pub type Files = Vec<(String, String)>;

fn label(c: &Cell) -> String {
    let mut s = format!("{} B{} S{}", c.model, c.batch, c.kv);
    if let Some(t) = &c.topology {
        s.push_str(&format!(" {t}"));
    }
    s
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn methods_of(results: &[CellResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in results {
        for m in &r.methods {
            if !names.contains(&m.method) {
                names.push(m.method.clone());
            }
        }
    }
    names
}

fn ms(r: &CellResult, method: &str) -> Option<f64> {
    r.methods
        .iter()
        .find(|m| m.method == method)
        .and_then(|m| m.makespan_ms)
}

/// Builds the report for results of one grid.
pub fn report(results: &[CellResult], title: &str, header: &Header) -> Result<Files> {
    let figure = results.first().map_or("bars", |r| r.figure.as_str());
    let mut md = header.markdown(title);
    let mut files: Files = Vec::new();
    let errors: Vec<&CellResult> = results.iter().filter(|r| r.error.is_some()).collect();
    let ok: Vec<CellResult> = results
        .iter()
        .filter(|r| r.error.is_none())
        .cloned()
        .collect();
    md.push_str(&format!(
        "{} cells ({} with results). Latencies are the simulator's makespans in ms; Ideal is Elk's figure (not a schedule, not a bound).\n\n",
        results.len(),
        ok.len()
    ));
    let mut finding = match figure {
        "breakdown" => breakdown(&ok, &mut md, &mut files)?,
        "vs-hbm" | "vs-noc" | "vs-cores" | "training" => {
            sweep_lines(figure, &ok, &mut md, &mut files)?
        }
        _ => latency_bars(&ok, &mut md, &mut files)?,
    };
    finding.question = format!("{title}: {}", finding.question);
    if !errors.is_empty() {
        finding.finding.push_str(&format!(
            " {} of {} cells have no result (listed in the report).",
            errors.len(),
            results.len()
        ));
    }
    files.push(finding.file());
    if !errors.is_empty() {
        md.push_str("\n## Cells without results\n\n| cell | why |\n|---|---|\n");
        for r in errors {
            md.push_str(&format!(
                "| {} | {} |\n",
                label(&r.cell),
                r.error.as_deref().unwrap_or("").replace('|', "/")
            ));
        }
    }
    let unscheduled: Vec<_> = ok
        .iter()
        .flat_map(|r| r.methods.iter().map(move |m| (r, m)))
        .filter(|(_, m)| m.makespan_ms.is_none())
        .collect();
    if !unscheduled.is_empty() {
        md.push_str("\n## Methods without a schedule\n\n| cell | method | status | why |\n|---|---|---|---|\n");
        for (r, m) in unscheduled {
            let status = match m.status {
                Some(MethodStatus::Infeasible) => "infeasible (proven)",
                Some(MethodStatus::NoSchedule) => "no schedule found",
                Some(MethodStatus::Scheduled) => "scheduled, not evaluated",
                None => "no schedule (not recorded why)",
            };
            md.push_str(&format!(
                "| {} | {} | {status} | {} |\n",
                label(&r.cell),
                m.method,
                m.reason.as_deref().unwrap_or("").replace('|', "/")
            ));
        }
    }
    files.insert(0, ("README.md".into(), md));
    Ok(files)
}

/// The method a headline quotes: Elk-Full when the grid ran it, else the last method.
fn headline_method(methods: &[String]) -> Option<&String> {
    methods
        .iter()
        .find(|m| m.as_str() == "elk-full")
        .or(methods.last())
}

fn latency_bars(results: &[CellResult], md: &mut String, files: &mut Files) -> Result<Finding> {
    let methods = methods_of(results);
    md.push_str("## Latency (ms)\n\n| configuration |");
    for m in &methods {
        md.push_str(&format!(" {m} |"));
    }
    md.push_str(" ideal |");
    for m in &methods {
        md.push_str(&format!(" {m} % of Ideal |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(2 * methods.len() + 1));
    md.push('\n');
    let mut pct_sum: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for r in results {
        md.push_str(&format!("| {} |", label(&r.cell)));
        for m in &methods {
            md.push_str(&format!(" {} |", fmt(ms(r, m), 4)));
        }
        md.push_str(&format!(" {} |", fmt(r.ideal_ms, 4)));
        for m in &methods {
            let pct = ms(r, m).zip(r.ideal_ms).map(|(t, i)| 100.0 * i / t);
            if let Some(p) = pct {
                let e = pct_sum.entry(m.clone()).or_insert((0.0, 0));
                e.0 += p;
                e.1 += 1;
            }
            md.push_str(&format!(" {} |", fmt(pct, 1)));
        }
        md.push('\n');
    }
    md.push_str("\nMean % of Ideal: ");
    let mean = |m: &String| pct_sum.get(m).map(|(s, n)| (s / *n as f64, *n));
    let means: Vec<String> = methods
        .iter()
        .filter_map(|m| mean(m).map(|(p, n)| format!("{m} {p:.1}% ({n} cells)")))
        .collect();
    md.push_str(&means.join(", "));
    md.push_str(" (Elk's paper: Elk reaches 94% of its Ideal on average).\n\n");
    let headline = headline_method(&methods).and_then(|m| mean(m).map(|(p, _)| (m, p)));
    let finding = Finding {
        question: "how close is each method to Elk's Ideal?".into(),
        finding: format!(
            "Mean % of Ideal over the configurations with results: {} (Elk's paper: 94 % for Elk).",
            means.join(", ")
        ),
        number: headline.map_or("-".into(), |(m, p)| format!("{p:.1} % ({m})")),
    };
    let categories: Vec<String> = results.iter().map(|r| label(&r.cell)).collect();
    let mut series: Vec<Series> = methods
        .iter()
        .map(|m| Series {
            name: m.clone(),
            points: results
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64, ms(r, m)))
                .collect(),
        })
        .collect();
    series.push(Series {
        name: "ideal".into(),
        points: results
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, r.ideal_ms))
            .collect(),
    });
    let svg = bars(
        "Latency per configuration",
        &categories,
        &series,
        "latency (ms)",
    )?;
    files.push(("latency.svg".into(), svg));
    md.push_str("![latency](latency.svg)\n");
    Ok(finding)
}

fn breakdown(results: &[CellResult], md: &mut String, files: &mut Files) -> Result<Finding> {
    md.push_str("## Breakdown, utilisation, throughput\n\n| configuration | HBM TB/s | method | latency ms | preload-only % | overlapped % | execute-only % | NoC-bound % | HBM util % | NoC util % | TFLOP/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in results {
        for m in &r.methods {
            let t = m.makespan_ms.unwrap_or(f64::NAN);
            let b = m.breakdown;
            let total = b.map(|b| b.preload_only + b.overlapped + b.execute_only + b.noc_bound);
            let pct = |f: fn(&elk_sim::Breakdown) -> elk_stage::Cycles| {
                b.zip(total)
                    .map(|(b, tot)| 100.0 * f(&b).get() / tot.get().max(f64::MIN_POSITIVE))
            };
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                label(&r.cell),
                fmt(r.cell.hbm_tbps, 1),
                m.method,
                fmt(Some(t).filter(|t| t.is_finite()), 4),
                fmt(pct(|b| b.preload_only), 1),
                fmt(pct(|b| b.overlapped), 1),
                fmt(pct(|b| b.execute_only), 1),
                fmt(pct(|b| b.noc_bound), 1),
                fmt(m.hbm_util.map(|u| 100.0 * u), 1),
                fmt(m.noc_util.map(|u| 100.0 * u), 1),
                fmt(m.tflops, 2)
            ));
        }
    }
    let methods = methods_of(results);
    let categories: Vec<String> = results
        .iter()
        .map(|r| match r.cell.hbm_tbps {
            Some(h) => format!("{} {h} TB/s", label(&r.cell)),
            None => label(&r.cell),
        })
        .collect();
    for (what, file, f) in [
        (
            "HBM utilisation (%)",
            "hbm_util.svg",
            (|m: &crate::cell::MethodResult| m.hbm_util.map(|u| 100.0 * u))
                as fn(&crate::cell::MethodResult) -> Option<f64>,
        ),
        ("NoC utilisation (%)", "noc_util.svg", |m| {
            m.noc_util.map(|u| 100.0 * u)
        }),
    ] {
        let series: Vec<Series> = methods
            .iter()
            .map(|name| Series {
                name: name.clone(),
                points: results
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        (
                            i as f64,
                            r.methods.iter().find(|m| &m.method == name).and_then(f),
                        )
                    })
                    .collect(),
            })
            .collect();
        let svg = bars(what, &categories, &series, what)?;
        files.push((file.into(), svg));
        md.push_str(&format!("\n![{what}]({file})\n"));
    }
    let util: Vec<String> = headline_method(&methods)
        .map(|name| {
            results
                .iter()
                .filter_map(|r| {
                    let m = r.methods.iter().find(|m| &m.method == name)?;
                    Some(format!(
                        "{}: {name} HBM {} % / NoC {} %",
                        label(&r.cell),
                        fmt(m.hbm_util.map(|u| 100.0 * u), 1),
                        fmt(m.noc_util.map(|u| 100.0 * u), 1)
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Finding {
        question: "where does the time go?".into(),
        finding: util.join("; "),
        number: format!("{} cells", results.len()),
    })
}

/// The swept quantity of a line figure and its axis description.
fn x_of(figure: &str, c: &Cell) -> (f64, &'static str) {
    match figure {
        "vs-noc" => (c.noc_scale, "NoC bandwidth (× the chip's)"),
        "vs-cores" => (c.cores.unwrap_or(0) as f64, "cores"),
        "training" => (c.compute_scale, "compute speed (× the chip's)"),
        _ => (c.hbm_tbps.unwrap_or(f64::NAN), "HBM bandwidth (TB/s)"),
    }
}

/// Everything but the swept quantity: one chart per group.
fn group_of(figure: &str, c: &Cell) -> String {
    let mut g = label(c);
    match figure {
        "vs-noc" | "training" => g.push_str(&format!(" at HBM {} TB/s", fmt(c.hbm_tbps, 1))),
        _ => {}
    }
    g
}

fn sweep_lines(
    figure: &str,
    results: &[CellResult],
    md: &mut String,
    files: &mut Files,
) -> Result<Finding> {
    let methods = methods_of(results);
    let mut groups: BTreeMap<String, Vec<&CellResult>> = BTreeMap::new();
    for r in results {
        groups.entry(group_of(figure, &r.cell)).or_default().push(r);
    }
    let training = figure == "training";
    let y_desc = if training {
        "throughput (TFLOP/s)"
    } else {
        "latency (ms)"
    };
    let value = |r: &CellResult, m: &str| -> Option<f64> {
        let mr = r.methods.iter().find(|x| x.method == m)?;
        if training {
            mr.tflops
        } else {
            mr.makespan_ms
        }
    };
    for (n, (group, rows)) in groups.iter().enumerate() {
        let x_desc = rows.first().map_or("", |r| x_of(figure, &r.cell).1);
        md.push_str(&format!("## {group}\n\n| {x_desc} |"));
        let unit = if training { "TFLOP/s" } else { "ms" };
        for m in &methods {
            md.push_str(&format!(" {m} {unit} |"));
        }
        if !training {
            md.push_str(" ideal ms |");
        }
        md.push_str(&format!(
            "\n|---|{}\n",
            "---|".repeat(methods.len() + usize::from(!training))
        ));
        for r in rows {
            md.push_str(&format!("| {} |", x_of(figure, &r.cell).0));
            for m in &methods {
                md.push_str(&format!(" {} |", fmt(value(r, m), 4)));
            }
            if !training {
                md.push_str(&format!(" {} |", fmt(r.ideal_ms, 4)));
            }
            md.push('\n');
        }
        let mut series: Vec<Series> = methods
            .iter()
            .map(|m| Series {
                name: m.clone(),
                points: rows
                    .iter()
                    .map(|r| (x_of(figure, &r.cell).0, value(r, m)))
                    .collect(),
            })
            .collect();
        if !training {
            series.push(Series {
                name: "ideal".into(),
                points: rows
                    .iter()
                    .map(|r| (x_of(figure, &r.cell).0, r.ideal_ms))
                    .collect(),
            });
        }
        let file = format!("{figure}-{n}.svg");
        let svg = lines(group, x_desc, y_desc, &series)?;
        files.push((file.clone(), svg));
        md.push_str(&format!("\n![{group}]({file})\n\n"));
    }
    // Headline: the quoted method (and Ideal) from the first to the last swept value.
    let unit = if training { "TFLOP/s" } else { "ms" };
    let Some(name) = headline_method(&methods) else {
        return Ok(Finding {
            question: format!("{y_desc} against the swept quantity"),
            finding: "no results".into(),
            number: "-".into(),
        });
    };
    let mut parts = Vec::new();
    let mut number = "-".to_string();
    for (group, rows) in &groups {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            continue;
        };
        let (x0, x1) = (x_of(figure, &first.cell), x_of(figure, &last.cell));
        let (v0, v1) = (value(first, name), value(last, name));
        let mut part = format!(
            "{group}: {name} {} → {} {unit} from {} to {} ({})",
            fmt(v0, 2),
            fmt(v1, 2),
            x0.0,
            x1.0,
            x0.1
        );
        if !training {
            part.push_str(&format!(
                "; ideal {} → {}",
                fmt(first.ideal_ms, 2),
                fmt(last.ideal_ms, 2)
            ));
        }
        if number == "-" {
            if let Some((a, b)) = v0.zip(v1).filter(|(_, b)| *b > 0.0) {
                number = format!("{:.1}× ({group})", if training { b / a } else { a / b });
            }
        }
        parts.push(part);
    }
    Ok(Finding {
        question: format!("how does {name}'s {y_desc} change with the swept quantity?"),
        finding: format!("{}.", parts.join(". ")),
        number,
    })
}
