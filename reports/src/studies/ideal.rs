//! Study `ideal`: how loose is Elk's Ideal baseline? Ideal vs the exact optimum and vs the LP
//! relaxation bound on the gap study's corpus. Ideal is not a proven bound: where it is
//! above the optimum it over-states the best achievable latency. Its run is the gap study's
//! (`elk_app::studies::gap`, whose rows carry Ideal and the LP bound); this is its report.

use super::budget::{budget_paragraph, cut_by_time};
use crate::finding::Finding;
use crate::plot::cdf;
use crate::report::{Files, Header};
use elk_app::studies::gap::{is_random, Row, BUDGET};
use elk_app::studies::{summary, OnStep};
use elk_app::Result;

/// Runs the study (the gap study's rows) and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let rows = elk_app::studies::gap::run(header.plan_cache.as_ref(), progress)?;
    let proven: Vec<_> = rows.iter().filter(|r| r.optimal).collect();
    let mut md = header.markdown("Study: Elk's Ideal vs the exact optimum and the LP bound");
    md.push_str("Ideal (Elk's definition: fastest option per operator with the whole SRAM, loads never contend) compared with the proven optimum T* and the LP relaxation bound, on the gap study's corpus (instances proven optimal only). Δ = 100·(Ideal − X)/X.\n\n");
    md.push_str(&budget_paragraph("ideal", BUDGET, &cut_by_time(&rows)));
    let vs_opt: Vec<f64> = proven
        .iter()
        .filter_map(|r| r.exact.map(|x| 100.0 * (r.ideal - x) / x))
        .collect();
    let vs_lp: Vec<f64> = proven
        .iter()
        .filter_map(|r| r.lp.map(|l| 100.0 * (r.ideal - l) / l))
        .collect();
    let above = vs_opt.iter().filter(|d| **d > 1e-6).count();
    let below = vs_opt.iter().filter(|d| **d < -1e-6).count();
    let (m1, p1, x1) = summary(&vs_opt);
    let (m2, p2, x2) = summary(&vs_lp);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    md.push_str(&format!(
        "| comparison | min Δ % | median Δ % | p90 Δ % | max Δ % |\n|---|---|---|---|---|\n| Ideal vs optimum | {:.2} | {m1:.2} | {p1:.2} | {x1:.2} |\n| Ideal vs LP bound | {:.2} | {m2:.2} | {p2:.2} | {x2:.2} |\n\n",
        min(&vs_opt),
        min(&vs_lp)
    ));
    md.push_str(&format!(
        "Ideal is **below** the optimum on {below} of {} instances (there it is a valid but loose target: the gap between a heuristic and Ideal overstates its distance from the best possible schedule), **equal** on {}, and **above** it on {above} (there Ideal is not a lower bound at all: a real schedule beats it).\n\n",
        vs_opt.len(),
        vs_opt.len() - above - below
    ));
    md.push_str("| instance | Ideal cycles | optimum cycles | LP bound cycles | Ideal vs optimum % |\n|---|---|---|---|---|\n");
    for r in &proven {
        if let Some(x) = r.exact {
            md.push_str(&format!(
                "| {} | {:.1} | {x:.1} | {} | {:.2} |\n",
                r.name,
                r.ideal,
                r.lp.map_or("-".into(), |l| format!("{l:.1}")),
                unsigned_zero(100.0 * (r.ideal - x) / x)
            ));
        }
    }
    // The distributions, real layer windows apart from random instances.
    let delta = |real: bool, f: &dyn Fn(&Row) -> Option<f64>| -> Vec<f64> {
        proven
            .iter()
            .filter(|r| is_random(&r.name) != real)
            .filter_map(|r| f(r).map(|x| 100.0 * (r.ideal - x) / x))
            .collect()
    };
    let samples: Vec<(String, Vec<f64>)> = [
        ("vs optimum, real layer windows", true, false),
        ("vs optimum, random instances", false, false),
        ("vs LP bound, real layer windows", true, true),
        ("vs LP bound, random instances", false, true),
    ]
    .iter()
    .map(|(name, real, lp)| {
        let f: &dyn Fn(&Row) -> Option<f64> = if *lp { &|r| r.lp } else { &|r| r.exact };
        (name.to_string(), delta(*real, f))
    })
    .collect();
    let [svg, csv] = cdf(
        "Ideal relative to the optimum and to the LP bound (proven instances)",
        "Ideal − reference (% of reference)",
        &samples,
        &header.style,
    )?
    .files("ideal");
    md.push_str("\n![ideal](ideal.svg)\n");
    let equal = vs_opt.len() - above - below;
    let finding = Finding {
        question: "Is Elk's Ideal a fair baseline?".into(),
        finding: format!(
            "Against the exact optimum on {} proven instances, Ideal is above it (so not a lower bound: a real schedule beats it) on {above}, equal on {equal} and below it on {below}, by {:.2} % to {x1:.2} % (median {m1:.2} %): \"% of Ideal\" can understate how close a schedule is to the best possible one.",
            vs_opt.len(),
            min(&vs_opt)
        ),
        number: format!("{:.1} … {x1:.1} %", min(&vs_opt)),
    };
    Ok(vec![
        ("README.md".into(), md.into_bytes()),
        svg,
        csv,
        finding.file(),
    ])
}

/// `v`, with what rounds to 0.00 as 0 (a difference of solver tolerances, 1e-14 %, would
/// print as "-0.00").
fn unsigned_zero(v: f64) -> f64 {
    if v.abs() < 0.005 {
        0.0
    } else {
        v
    }
}
