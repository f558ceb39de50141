//! Routing logs people publish, per token and per layer the expert ids (CSV or JSON lines),
//! turned into an `elk-routing-trace/1` file (docs/moe.md, "Routing traces from the real
//! world"): tokens grouped into decode steps of `batch` tokens, the file's layer ids mapped
//! in sorted order to the MoE layers, experts and k read from the file and checked.
//!
//! ```
//! use elk_model::routing::import::{import, ImportOptions};
//! let csv = "token,layer,experts\n0,1,0 3\n1,1,2 3\n0,2,1 2\n1,2,0 1\n";
//! let imported = import("t.csv", csv, &ImportOptions { batch: 2, experts: Some(4) }).unwrap();
//! assert_eq!((imported.trace.steps(), imported.trace.layers()), (1, 2));
//! assert_eq!(imported.summary.file_layers, [1, 2]);
//! ```

mod csv;
mod jsonl;
mod rows;

use crate::error::{ModelError, Result};
use crate::routing::RoutingTrace;
use rows::Row;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the import is told beside the file.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// Tokens per step: decode runs one token of each of `batch` sequences per step.
    pub batch: u64,
    /// The experts of a layer, when the file may not use the last one (else max id + 1).
    pub experts: Option<u64>,
}

/// An imported trace and what the importer read to make it.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The trace, checked as a trace file is.
    pub trace: RoutingTrace,
    /// What was read, kept and dropped.
    pub summary: ImportSummary,
}

/// What the importer read, kept and dropped (printed by `elk-opt routing import`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportSummary {
    /// `csv` or `jsonl`.
    pub format: &'static str,
    /// Token-and-layer rows skipped because every id was -1 (a layer without routed
    /// experts, as SGLang pads dense layers).
    pub placeholder_layers: usize,
    /// Columns or keys not read.
    pub ignored_fields: Vec<String>,
    /// Distinct tokens in the file.
    pub tokens: usize,
    /// How tokens became steps: `step column`, `sequences` or `token order`.
    pub steps_from: &'static str,
    /// Steps of `batch` tokens.
    pub steps: usize,
    /// Tokens per step.
    pub batch: u64,
    /// Tokens left out of every step (a ragged last step, or the surplus of longer
    /// sequences).
    pub dropped_tokens: usize,
    /// The file's layer ids, sorted: MoE layer l of the trace is `file_layers[l]`.
    pub file_layers: Vec<u64>,
    /// Layer ids missing between the smallest and the largest (a gap; the first 1,000).
    pub missing_layers: Vec<u64>,
    /// Experts per layer.
    pub experts: u64,
    /// `file` (max id + 1) or `flag`.
    pub experts_from: &'static str,
    /// Experts each token chose (k).
    pub top_k_experts: u64,
    /// Per MoE layer, its most chosen experts over the trace's steps.
    pub layers: Vec<LayerUse>,
}

/// A layer's most chosen experts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerUse {
    /// The layer's id in the file.
    pub layer: u64,
    /// Experts chosen at least once.
    pub used_experts: usize,
    /// The three most chosen, most first (ties: lower id first).
    pub top_experts: Vec<ExpertShare>,
}

/// One expert's share of a layer's choices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExpertShare {
    /// The expert's id.
    pub index: u32,
    /// Its share of the layer's tokens × k choices, in percent.
    pub share_pct: f64,
}

/// Reads a routing log at `path` (CSV, or JSON lines when its first non-blank character is
/// `{`) into a trace.
pub fn import_file(path: &std::path::Path, options: &ImportOptions) -> Result<Imported> {
    let text = crate::error::read_file(path)?;
    import(&path.display().to_string(), &text, options)
}

/// Reads routing log `text` (CSV, or JSON lines when its first non-blank character is `{`)
/// into a trace; `file` names it in errors.
pub fn import(file: &str, text: &str, options: &ImportOptions) -> Result<Imported> {
    let bad = |detail: String| ModelError::Invalid(format!("{file}: {detail}"));
    if options.batch == 0 {
        return Err(bad("--batch 0: a step needs at least one token".into()));
    }
    let is_jsonl = text.trim_start().starts_with('{');
    let read = if is_jsonl {
        jsonl::read(file, text)?
    } else {
        csv::read(file, text)?
    };
    if read.rows.is_empty() {
        return Err(bad("no routed token (no row with expert ids)".into()));
    }
    let (experts, top_k) = experts_and_k(file, &read.rows, options.experts)?;
    let file_layers: Vec<u64> = {
        let mut ids: Vec<u64> = read.rows.iter().map(|r| r.layer).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let tokens = tokens(file, &read.rows, &file_layers)?;
    let grouped = steps(file, &read.rows, &tokens, options.batch)?;
    let trace_steps: Vec<Vec<Vec<Vec<u32>>>> = grouped
        .steps
        .iter()
        .map(|step| {
            (0..file_layers.len())
                .map(|l| step.iter().map(|t| tokens.layers[t][l].clone()).collect())
                .collect()
        })
        .collect();
    let layers = layer_use(&trace_steps, &file_layers);
    let trace = RoutingTrace::new(file, experts, top_k, trace_steps)?;
    let summary = ImportSummary {
        format: if is_jsonl { "jsonl" } else { "csv" },
        placeholder_layers: read.placeholders,
        ignored_fields: read.ignored,
        tokens: tokens.layers.len(),
        steps_from: grouped.from,
        steps: trace.steps(),
        batch: options.batch,
        dropped_tokens: tokens.layers.len() - trace.steps() * options.batch as usize,
        missing_layers: missing(&file_layers),
        file_layers,
        experts,
        experts_from: if options.experts.is_some() {
            "flag"
        } else {
            "file"
        },
        top_k_experts: top_k,
        layers,
    };
    Ok(Imported { trace, summary })
}

/// The ids between the smallest and the largest of sorted `ids` that are not among them: a
/// gap in the layers (at most the first 1,000, so a stray id of 4 billion costs nothing).
fn missing(ids: &[u64]) -> Vec<u64> {
    ids.windows(2)
        .flat_map(|w| w[0] + 1..w[1])
        .take(1000)
        .collect()
}

/// Experts per layer (the flag's, else max id + 1) and k (every row's count), checked: each
/// row k distinct ids below the experts.
fn experts_and_k(file: &str, rows: &[Row], flag: Option<u64>) -> Result<(u64, u64)> {
    let at = |r: &Row, detail: String| {
        ModelError::Invalid(format!(
            "{file}:{}: experts {:?}: {detail}",
            r.line, r.experts
        ))
    };
    let max = rows
        .iter()
        .flat_map(|r| &r.experts)
        .max()
        .copied()
        .unwrap_or(0);
    let experts = flag.unwrap_or(u64::from(max) + 1);
    let k = rows[0].experts.len();
    for r in rows {
        if r.experts.len() != k {
            return Err(at(
                r,
                format!(
                    "{} ids, line {} has {k}: k must be the same everywhere",
                    r.experts.len(),
                    rows[0].line
                ),
            ));
        }
        let mut d = r.experts.clone();
        d.sort_unstable();
        d.dedup();
        if d.len() != k {
            return Err(at(r, "an expert twice".into()));
        }
        if let Some(e) = r.experts.iter().find(|&&e| u64::from(e) >= experts) {
            return Err(at(
                r,
                format!("expert {e} is not below --experts {experts}"),
            ));
        }
    }
    Ok((experts, k as u64))
}

/// A token as the file identifies it: its step (if numbered), its sequence (by first
/// appearance, if named) and its index.
type TokenKey = (Option<u64>, Option<usize>, u64);

/// Every token's choices, per MoE layer.
struct Tokens {
    /// Token → `[l]` its experts in MoE layer l.
    layers: BTreeMap<TokenKey, Vec<Vec<u32>>>,
    /// Token → the first line it was read on (for messages).
    lines: BTreeMap<TokenKey, usize>,
}

/// Gathers each token's layers, checking each token has every layer exactly once and that
/// every row says the same about steps and sequences as the first.
fn tokens(file: &str, rows: &[Row], file_layers: &[u64]) -> Result<Tokens> {
    let bad = |line: usize, detail: String| ModelError::Invalid(format!("{file}:{line}: {detail}"));
    let (has_step, has_sequence) = (rows[0].step.is_some(), rows[0].sequence.is_some());
    // Sequence names in order of first appearance, and each name's place in it.
    let mut sequences: Vec<&str> = Vec::new();
    let mut sequence_index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen: BTreeMap<(TokenKey, u64), usize> = BTreeMap::new();
    let mut out = Tokens {
        layers: BTreeMap::new(),
        lines: BTreeMap::new(),
    };
    for r in rows {
        for (has, what, first) in [
            (r.step.is_some(), "step", has_step),
            (r.sequence.is_some(), "sequence", has_sequence),
        ] {
            if has != first {
                let (here, there) = if first { ("no", "one") } else { ("a", "none") };
                return Err(bad(
                    r.line,
                    format!(
                        "{here} {what}, line {} has {there}: give every row one or none",
                        rows[0].line
                    ),
                ));
            }
        }
        let sequence = r.sequence.as_deref().map(|s| {
            *sequence_index.entry(s).or_insert_with(|| {
                sequences.push(s);
                sequences.len() - 1
            })
        });
        let key = (r.step, sequence, r.token);
        if let Some(first) = seen.insert((key, r.layer), r.line) {
            return Err(bad(
                r.line,
                format!(
                    "{} layer {} again (first on line {first})",
                    describe(&key, &sequences),
                    r.layer
                ),
            ));
        }
        let l = file_layers.binary_search(&r.layer).unwrap_or(0);
        out.lines.entry(key).or_insert(r.line);
        out.layers
            .entry(key)
            .or_insert_with(|| vec![Vec::new(); file_layers.len()])[l] = r.experts.clone();
    }
    for (key, layers) in &out.layers {
        if let Some(l) = layers.iter().position(Vec::is_empty) {
            return Err(bad(
                out.lines[key],
                format!(
                    "{} has no row for layer {} (other tokens have one)",
                    describe(key, &sequences),
                    file_layers[l]
                ),
            ));
        }
    }
    Ok(out)
}

/// `step 3 sequence 'a' token 7`, as much as the file gives.
fn describe(key: &TokenKey, sequences: &[&str]) -> String {
    let mut s = String::new();
    if let Some(step) = key.0 {
        s.push_str(&format!("step {step} "));
    }
    if let Some(q) = key.1 {
        s.push_str(&format!("sequence {} ", rows::quoted(sequences[q])));
    }
    s + &format!("token {}", key.2)
}

/// Tokens grouped into steps of `batch`.
struct Steps {
    steps: Vec<Vec<TokenKey>>,
    from: &'static str,
}

/// Groups the tokens into steps of `batch` tokens:
/// - a `step` field: the file's steps in order, each its tokens by (sequence, token); a step
///   of another size is refused;
/// - sequences: `batch` sequences at a time in order of first appearance, step j being the
///   j-th token (by index) of each; as many steps as the group's shortest sequence has
///   tokens (the longer ones' surplus is dropped) and a last group of fewer sequences
///   dropped;
/// - else the tokens by index, `batch` at a time, a ragged last step dropped.
///
/// Refused when no step is left.
fn steps(file: &str, rows: &[Row], tokens: &Tokens, batch: u64) -> Result<Steps> {
    let b = batch as usize;
    let keys: Vec<TokenKey> = tokens.layers.keys().copied().collect();
    let (steps, from) = if rows[0].step.is_some() {
        let mut by_step: BTreeMap<u64, Vec<TokenKey>> = BTreeMap::new();
        for &k in &keys {
            by_step.entry(k.0.unwrap_or(0)).or_default().push(k);
        }
        for (step, ts) in &by_step {
            if ts.len() != b {
                return Err(ModelError::Invalid(format!(
                    "{file}:{}: step {step} has {} tokens, --batch is {batch}",
                    tokens.lines[&ts[0]],
                    ts.len()
                )));
            }
        }
        (by_step.into_values().collect(), "step column")
    } else if rows[0].sequence.is_some() {
        let mut by_sequence: BTreeMap<usize, Vec<TokenKey>> = BTreeMap::new();
        for &k in &keys {
            by_sequence.entry(k.1.unwrap_or(0)).or_default().push(k);
        }
        let sequences: Vec<Vec<TokenKey>> = by_sequence.into_values().collect();
        if sequences.len() < b {
            return Err(ModelError::Invalid(format!(
                "{file}: {}, fewer than --batch {batch}: a step is one token of each of B \
                 sequences",
                counted(sequences.len(), "sequence")
            )));
        }
        let mut steps = Vec::new();
        for group in sequences.chunks_exact(b) {
            let length = group.iter().map(Vec::len).min().unwrap_or(0);
            for j in 0..length {
                steps.push(group.iter().map(|q| q[j]).collect());
            }
        }
        (steps, "sequences")
    } else {
        let steps = keys.chunks_exact(b).map(<[TokenKey]>::to_vec).collect();
        (steps, "token order")
    };
    if steps.is_empty() {
        return Err(ModelError::Invalid(format!(
            "{file}: {}, fewer than --batch {batch}: no whole step",
            counted(keys.len(), "token")
        )));
    }
    Ok(Steps { steps, from })
}

/// `1 token`, `3 tokens`.
fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Each MoE layer's most chosen experts over the trace's steps (`steps[s][l][t]`), counted
/// per expert used (not per expert of a layer: a stray id of 4 billion costs no memory).
fn layer_use(steps: &[Vec<Vec<Vec<u32>>>], file_layers: &[u64]) -> Vec<LayerUse> {
    file_layers
        .iter()
        .enumerate()
        .map(|(l, &file_layer)| {
            let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
            let mut choices = 0u64;
            for &e in steps.iter().flat_map(|step| step[l].iter().flatten()) {
                *counts.entry(e).or_default() += 1;
                choices += 1;
            }
            let mut ranked: Vec<(u32, u64)> = counts.into_iter().collect();
            ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            LayerUse {
                layer: file_layer,
                used_experts: ranked.len(),
                top_experts: ranked
                    .iter()
                    .take(3)
                    .map(|&(index, c)| ExpertShare {
                        index,
                        share_pct: 100.0 * c as f64 / choices as f64,
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
