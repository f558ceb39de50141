//! `compare --dram-readers auto` (docs/chips.md, "DRAM-reader cores"): the same model on the
//! chip with each count of DRAM-reader cores worth trying. A count is a chip of its own (fewer
//! compute cores, another DRAM rate), so no count's schedules contain another's: each method
//! keeps its fastest schedule over the counts, and the lowest of the counts' certified bounds
//! bounds every schedule of every count, so the choice of count is certified with them.

pub use super::rows::ReaderCount;
use super::rows::{fill_ratios, CompareReport, Row};
use elk_stage::units::Cycles;

/// What a count's compare ran on, besides its report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountChip {
    /// Reader cores.
    pub readers: u64,
    /// Compute cores.
    pub compute_cores: u64,
    /// DRAM rate with them, bytes/s.
    pub dram_bytes_per_s: f64,
}

/// The reports of every count merged: each method's fastest row (the fewer readers on a tie),
/// marked with its count; Ideal the smallest figure; the bound the lowest (with its roofline
/// parts); every ratio and gap measured again. The header (instance, chip, warnings, notes)
/// is the report of the count with the fastest schedule; each count's summary is in
/// `dram_reader_counts`. With the indices in `per` of that count and of the bound's. `None`
/// when `per` is empty.
pub fn best_over_counts(
    per: Vec<(CountChip, CompareReport)>,
) -> Option<(usize, usize, CompareReport)> {
    let summaries: Vec<ReaderCount> = per.iter().map(|(c, r)| summary(c, r)).collect();
    let kept = (0..per.len()).min_by(|&a, &b| {
        let t = |i: usize| best_row(&per[i].1).and_then(|r| r.makespan_cycles);
        match (t(a), t(b)) {
            (Some(x), Some(y)) => x.get().total_cmp(&y.get()).then(a.cmp(&b)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.cmp(&b),
        }
    })?;
    let bounded = (0..per.len())
        .min_by(|&a, &b| {
            per[a]
                .1
                .bound_cycles
                .get()
                .total_cmp(&per[b].1.bound_cycles.get())
                .then(a.cmp(&b))
        })
        .expect("per is not empty");
    let mut rows: Vec<Row> = per[kept].1.methods.clone();
    for row in rows.iter_mut() {
        let fastest = per
            .iter()
            .filter_map(|(c, r)| {
                Some((
                    c.readers,
                    r.methods.iter().find(|m| m.method == row.method)?,
                ))
            })
            .filter(|(_, r)| r.makespan_cycles.is_some())
            .min_by(|(_, a), (_, b)| cycles(a).total_cmp(&cycles(b)));
        if let Some((readers, r)) = fastest {
            *row = r.clone();
            row.dram_readers = Some(readers);
        }
    }
    let bound = &per[bounded].1;
    fill_ratios(&mut rows, bound.bound_cycles);
    let report = CompareReport {
        methods: rows,
        bound_ms: bound.bound_ms,
        bound_source: bound.bound_source,
        bound_cycles: bound.bound_cycles,
        roofline_bound_ms: bound.roofline_bound_ms,
        roofline: bound.roofline,
        dram_reader_counts: summaries,
        ..per[kept].1.clone()
    };
    Some((kept, bounded, report))
}

fn cycles(r: &Row) -> f64 {
    r.makespan_cycles.map_or(f64::INFINITY, Cycles::get)
}

/// The fastest schedule's row of a report (Ideal is not a schedule).
fn best_row(report: &CompareReport) -> Option<&Row> {
    report
        .methods
        .iter()
        .filter(|r| r.method != "ideal" && r.makespan_cycles.is_some())
        .min_by(|a, b| cycles(a).total_cmp(&cycles(b)))
}

fn summary(chip: &CountChip, report: &CompareReport) -> ReaderCount {
    let best = best_row(report);
    ReaderCount {
        readers: chip.readers,
        compute_cores: chip.compute_cores,
        dram_gb_per_s: chip.dram_bytes_per_s / 1e9,
        best_method: best.map(|r| r.method.clone()),
        best_ms: best.and_then(|r| r.makespan_ms),
        bound_ms: report.bound_ms,
    }
}
