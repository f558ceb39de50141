//! `compare --dram-readers auto` (docs/chips.md, "DRAM-reader cores"): the same model on the
//! chip with each count of DRAM-reader cores worth trying. A count is a chip of its own (fewer
//! compute cores, another DRAM rate), so no count's schedules contain another's: each method
//! keeps its fastest schedule over the counts, and the lowest of the counts' certified bounds
//! bounds every schedule of every count, so the choice of count is certified with them.

pub use super::rows::ReaderCount;
use super::rows::{fill_ratios, CompareReport, Row};
use elk_model::chip::ChipSpec;
use elk_stage::units::Cycles;

/// The reports of every count merged, each given with its count of readers and the chip it
/// ran on: each method's fastest row (the fewer readers on a tie), marked with its count;
/// Ideal the smallest figure; the bound the lowest (with its roofline parts); every ratio
/// and gap measured again. The header (instance, chip, warnings, notes) is the report of the
/// count with the fastest schedule; each count's summary, filled from its chip and report,
/// is in `dram_reader_counts`. With the indices in `per` of that count and of the bound's.
/// `None` when `per` is empty.
pub fn best_over_counts(
    per: Vec<(u64, &ChipSpec, CompareReport)>,
) -> Option<(usize, usize, CompareReport)> {
    let summaries: Vec<ReaderCount> = per
        .iter()
        .map(|(k, chip, r)| summary(*k, chip, r))
        .collect();
    // The count of the fastest schedule (a count without any sorts last), the first of equals.
    let kept = (0..per.len()).min_by(|&a, &b| {
        let t = |i: usize| per[i].2.best().map_or(f64::INFINITY, cycles);
        t(a).total_cmp(&t(b)).then(a.cmp(&b))
    })?;
    let bounded = (0..per.len())
        .min_by(|&a, &b| {
            per[a]
                .2
                .bound_cycles
                .get()
                .total_cmp(&per[b].2.bound_cycles.get())
                .then(a.cmp(&b))
        })
        .expect("per is not empty");
    let mut rows: Vec<Row> = per[kept].2.methods.clone();
    for row in rows.iter_mut() {
        let fastest = per
            .iter()
            .filter_map(|(k, _, r)| Some((*k, r.methods.iter().find(|m| m.method == row.method)?)))
            .filter(|(_, r)| r.makespan_cycles.is_some())
            .min_by(|(_, a), (_, b)| cycles(a).total_cmp(&cycles(b)));
        if let Some((readers, r)) = fastest {
            *row = r.clone();
            row.dram_readers = Some(readers);
        }
    }
    let bound = &per[bounded].2;
    fill_ratios(&mut rows, bound.bound_cycles);
    let report = CompareReport {
        methods: rows,
        bound_ms: bound.bound_ms,
        bound_source: bound.bound_source,
        bound_cycles: bound.bound_cycles,
        roofline_bound_ms: bound.roofline_bound_ms,
        roofline: bound.roofline,
        dram_reader_counts: summaries,
        ..per[kept].2.clone()
    };
    Some((kept, bounded, report))
}

fn cycles(r: &Row) -> f64 {
    r.makespan_cycles.map_or(f64::INFINITY, Cycles::get)
}

/// What `dram_reader_counts` says of a count: its chip's cores and DRAM rate, its report's
/// fastest schedule and bound.
fn summary(readers: u64, chip: &ChipSpec, report: &CompareReport) -> ReaderCount {
    let best = report.best();
    ReaderCount {
        readers,
        compute_cores: chip.cores,
        dram_gb_per_s: chip.hbm.bandwidth_bytes_per_s / 1e9,
        best_method: best.map(|r| r.method.clone()),
        best_ms: best.and_then(|r| r.makespan_ms),
        bound_ms: report.bound_ms,
        roofline: report.roofline,
    }
}
