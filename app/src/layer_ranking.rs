//! Why the main job's two sections may name different best heuristics: the whole model's
//! table and one layer cut from it (`compare --layer-exact`).
//!
//! A layer alone starts with its SRAM empty, so the loads a method makes before the first
//! operator runs (the schedule's first stage) overlap nothing, and it is short: that start
//! weighs far more in one layer than in a whole model, which pays it once. On the main job
//! (Llama2-13B decode B32 KV2048, ipu-pod4 at 16 TB/s), before issue 45's core groups (with
//! them Elk-Full-greedy is the best of both sections and the note does not print),
//! Elk-Full-greedy loaded 0.0522 ms before
//! the layer's first operator and Elk-Full 0.0134 ms; the rest of the layer took them
//! 0.1699 and 0.1949 ms. So Elk-Full was the better on the layer (0.2082 against 0.2220 ms)
//! and Elk-Full-greedy on the whole model (7.3435 against 7.6917 ms), where it overlaps loads
//! with execution in every layer after the first (docs/heuristics.md).

use crate::compare::{heuristic_names, Row};
use crate::gap::GapRow;

/// The fastest of the registry's heuristics (no re-timed row, no exact row): its name,
/// makespan and first stage, ms.
fn fastest<'a>(
    rows: impl Iterator<Item = (&'a str, Option<f64>, Option<f64>)>,
) -> Option<(&'a str, f64, f64)> {
    rows.filter(|(m, _, _)| heuristic_names().any(|h| h == *m))
        .filter_map(|(m, t, first)| Some((m, t?, first?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// One footer line when the best heuristic of the whole model (`whole`, the compare rows)
/// is not the best of the layer (`layer`, its gap rows): each one's first stage and the rest
/// of the layer, measured; `None` when they agree.
pub fn note(whole: &[Row], layer: &[GapRow]) -> Option<String> {
    let (w, _, _) = fastest(
        whole
            .iter()
            .map(|r| (r.method.as_str(), r.makespan_ms, r.first_stage_ms)),
    )?;
    let rows: Vec<(&str, Option<f64>, Option<f64>)> = layer
        .iter()
        .map(|r| (r.method.as_str(), r.makespan_ms, r.first_stage_ms))
        .collect();
    let (l, l_ms, l_first) = fastest(rows.iter().copied())?;
    if w == l {
        return None;
    }
    let (_, w_ms, w_first) = rows.iter().find(|r| r.0 == w)?;
    let (w_ms, w_first) = ((*w_ms)?, (*w_first)?);
    if w_ms <= l_ms * (1.0 + 1e-9) {
        // A tie on the layer (the first of equals is named): the whole model's best is a
        // best of the layer too.
        return None;
    }
    // The start explains the order when the whole model's best waits longer before the
    // layer's first operator and is no slower after it.
    let explained = w_first > l_first && w_ms - w_first <= l_ms - l_first;
    Some(format!(
        "why the best heuristic differs ({w} on the whole model, {l} on this layer): a layer \
         alone starts with its SRAM empty, and the loads made before its first operator runs \
         overlap nothing: {w} {w_first:.4} ms, {l} {l_first:.4} ms; the rest of the layer takes \
         {w} {:.4} ms, {l} {:.4} ms{}",
        w_ms - w_first,
        l_ms - l_first,
        if explained {
            "; the whole model pays that start once, not per layer"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::note;
    use crate::compare::Row;
    use crate::gap::GapRow;

    fn row(method: &str, ms: f64, first: f64) -> Row {
        Row {
            method: method.into(),
            status: crate::compare::RowStatus::Heuristic,
            makespan_cycles: None,
            makespan_ms: Some(ms),
            speedup_vs_basic_x: None,
            ideal_pct: None,
            hbm_util_pct: None,
            noc_util_pct: None,
            tflops: None,
            compile_s: None,
            gap_le_pct: None,
            notes: Vec::new(),
            parallel_sets: None,
            dram_readers: None,
            first_stage_ms: Some(first),
        }
    }

    fn gap_row(method: &str, ms: f64, first: f64) -> GapRow {
        GapRow {
            method: method.into(),
            makespan_cycles: None,
            makespan_ms: Some(ms),
            gap_pct: None,
            reference_is_optimum: false,
            compile_s: None,
            status: None,
            parallel_sets: None,
            first_stage_ms: Some(first),
        }
    }

    #[test]
    fn a_longer_start_explains_a_layer_that_ranks_the_other_way() {
        // The main job's figures: the re-timed row (faster still) is no heuristic of its own.
        let whole = [
            row("elk-full", 7.6917, 0.0631),
            row("elk-full-greedy", 7.3435, 0.0706),
            row("elk-full+retime", 7.0, 0.01),
        ];
        let mut layer = vec![
            gap_row("elk-full", 0.2082, 0.0134),
            gap_row("elk-full-greedy", 0.2220, 0.0522),
            gap_row("elk-full+retime", 0.2052, 0.0134),
        ];
        assert_eq!(
            note(&whole, &layer).unwrap(),
            "why the best heuristic differs (elk-full-greedy on the whole model, elk-full on \
             this layer): a layer alone starts with its SRAM empty, and the loads made before \
             its first operator runs overlap nothing: elk-full-greedy 0.0522 ms, elk-full \
             0.0134 ms; the rest of the layer takes elk-full-greedy 0.1698 ms, elk-full 0.1948 \
             ms; the whole model pays that start once, not per layer"
        );
        // A start that does not explain it is not claimed to.
        layer[1] = gap_row("elk-full-greedy", 0.2220, 0.0100);
        let n = note(&whole, &layer).unwrap();
        assert!(!n.contains("pays that start once"), "{n}");
        // The same best heuristic: nothing to explain.
        layer[1] = gap_row("elk-full-greedy", 0.2000, 0.0522);
        assert_eq!(note(&whole, &layer), None);
        // Tied on the layer (elk-full comes first of the two): nothing to explain either.
        layer[1] = gap_row("elk-full-greedy", 0.2082, 0.0522);
        assert_eq!(note(&whole, &layer), None);
    }
}
