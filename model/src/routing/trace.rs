//! A routing trace file (`--routing trace:FILE`, docs/moe.md): the experts every token chose in
//! every layer of recorded steps, as a router logged them.
//!
//! ```json
//! { "format": "elk-routing-trace/1", "experts": 8, "top_k": 2,
//!   "steps": [ [ [[0, 3], [5, 1]], [[2, 7], [2, 4]] ] ] }
//! ```
//! `steps[s][l][t]` is the k experts of token t in layer l of step s. Every step has the same
//! layers and tokens; a token names k distinct experts below `experts`.

use crate::error::{ModelError, Result};
use crate::zoo::Moe;
use serde::Deserialize;

/// The format tag of trace files.
pub const TRACE_FORMAT: &str = "elk-routing-trace/1";

/// A checked trace.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingTrace {
    /// The file it was read from (for messages and labels).
    pub file: String,
    experts: u64,
    top_k: u64,
    steps: Vec<Vec<Vec<Vec<u32>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrace {
    format: String,
    experts: u64,
    top_k: u64,
    steps: Vec<Vec<Vec<Vec<u32>>>>,
}

impl RoutingTrace {
    /// Reads and checks a trace file.
    pub fn read(path: &std::path::Path) -> Result<RoutingTrace> {
        let text = crate::error::read_file(path)?;
        RoutingTrace::from_json(&path.display().to_string(), &text)
    }

    /// Parses and checks a trace's text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<RoutingTrace> {
        let bad = |detail: String| ModelError::Invalid(format!("{file}: {detail}"));
        let raw: RawTrace = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if raw.format != TRACE_FORMAT {
            return Err(bad(format!(
                "format '{}': expected '{TRACE_FORMAT}'",
                raw.format
            )));
        }
        RoutingTrace::new(file, raw.experts, raw.top_k, raw.steps)
    }

    /// A trace of `steps` (`steps[s][l][t]`, as in the file), checked as a file is: every
    /// step the same layers and tokens, every token k distinct experts below `experts`.
    /// `file` names it in errors.
    pub fn new(
        file: &str,
        experts: u64,
        top_k: u64,
        steps: Vec<Vec<Vec<Vec<u32>>>>,
    ) -> Result<RoutingTrace> {
        let bad = |detail: String| ModelError::Invalid(format!("{file}: {detail}"));
        if experts == 0 || top_k == 0 || top_k > experts {
            return Err(bad(format!(
                "experts {experts} and top_k {top_k}: need 1 ≤ top_k ≤ experts"
            )));
        }
        let Some(first) = steps.first() else {
            return Err(bad("no steps".into()));
        };
        let (layers, tokens) = (first.len(), first.first().map_or(0, Vec::len));
        if layers == 0 || tokens == 0 {
            return Err(bad("step 0 has no layers or no tokens".into()));
        }
        for (s, step) in steps.iter().enumerate() {
            if step.len() != layers {
                return Err(bad(format!(
                    "step {s} has {} layers, step 0 has {layers}",
                    step.len()
                )));
            }
            for (l, layer) in step.iter().enumerate() {
                if layer.len() != tokens {
                    return Err(bad(format!(
                        "step {s} layer {l} has {} tokens, step 0 layer 0 has {tokens}",
                        layer.len()
                    )));
                }
                for (t, chosen) in layer.iter().enumerate() {
                    let mut d = chosen.clone();
                    d.sort_unstable();
                    d.dedup();
                    let in_range = d.iter().all(|&e| u64::from(e) < experts);
                    if d.len() as u64 != top_k || chosen.len() != d.len() || !in_range {
                        return Err(bad(format!(
                            "step {s} layer {l} token {t}: {chosen:?} is not {top_k} distinct \
                             experts below {experts}"
                        )));
                    }
                }
            }
        }
        Ok(RoutingTrace {
            file: file.into(),
            experts,
            top_k,
            steps,
        })
    }

    /// The trace as an `elk-routing-trace/1` file: one step per line, so a diff shows which
    /// steps changed; the same trace always gives the same bytes.
    pub fn to_json(&self) -> String {
        let mut out = format!(
            "{{\"format\": \"{TRACE_FORMAT}\", \"experts\": {}, \"top_k\": {}, \"steps\": [\n",
            self.experts, self.top_k
        );
        for (s, step) in self.steps.iter().enumerate() {
            let sep = if s + 1 < self.steps.len() { "," } else { "" };
            // Vec<Vec<Vec<u32>>> always serializes.
            let line = serde_json::to_string(step).unwrap_or_default();
            out.push_str(&format!("  {line}{sep}\n"));
        }
        out.push_str("]}\n");
        out
    }

    /// The number of experts every layer has.
    pub fn experts(&self) -> u64 {
        self.experts
    }

    /// The experts each token chose.
    pub fn top_k(&self) -> u64 {
        self.top_k
    }

    /// The layers of every step.
    pub fn layers(&self) -> usize {
        self.steps[0].len()
    }

    /// The tokens of every layer of every step.
    pub fn tokens(&self) -> usize {
        self.steps[0][0].len()
    }

    /// Recorded steps.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Checks that the trace was recorded for this model and run.
    pub fn check(&self, moe: &Moe, layers: usize, tokens: u64) -> Result<()> {
        let bad = |detail: String| ModelError::Invalid(format!("{}: {detail}", self.file));
        if self.experts != moe.experts || self.top_k != moe.top_k {
            return Err(bad(format!(
                "recorded {} experts with top-{}, the model has {} with top-{}",
                self.experts, self.top_k, moe.experts, moe.top_k
            )));
        }
        let (l, t) = (self.steps[0].len(), self.steps[0][0].len());
        if l != layers || t as u64 != tokens {
            return Err(bad(format!(
                "recorded {l} layers of {t} tokens, the run has {layers} layers of {tokens} \
                 tokens (decode: one per sequence, so --batch {t})"
            )));
        }
        Ok(())
    }

    /// Step `i` (cycling through the recorded steps).
    pub fn step(&self, i: usize) -> Vec<Vec<Vec<u32>>> {
        self.steps[i % self.steps.len()].clone()
    }

    /// How often each of layer `l`'s `e` experts was chosen over the whole trace.
    pub fn frequencies(&self, l: usize, e: usize) -> Vec<f64> {
        let mut f = vec![0.0; e];
        for step in &self.steps {
            for &x in step.get(l).into_iter().flatten().flatten() {
                if let Some(v) = f.get_mut(x as usize) {
                    *v += 1.0;
                }
            }
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_token_is_named_by_step_layer_and_token() {
        let text = r#"{"format": "elk-routing-trace/1", "experts": 4, "top_k": 2,
            "steps": [[[[0, 1], [2, 2]]]]}"#;
        let e = RoutingTrace::from_json("t.json", text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.json: step 0 layer 0 token 1: [2, 2] is not 2 distinct experts below 4"
        );
        let text = r#"{"format": "elk-routing-trace/1", "experts": 4, "top_k": 2,
            "steps": [[[[0, 1]]], [[[0, 1]], [[1, 2]]]]}"#;
        let e = RoutingTrace::from_json("t.json", text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("step 1 has 2 layers, step 0 has 1"), "{e}");
    }

    #[test]
    fn a_trace_for_another_model_is_refused() {
        let text = r#"{"format": "elk-routing-trace/1", "experts": 4, "top_k": 2,
            "steps": [[[[0, 1], [2, 3]]]]}"#;
        let t = RoutingTrace::from_json("t.json", text).unwrap();
        let moe = Moe::every_layer(8, 2, 1);
        let e = t.check(&moe, 1, 2).unwrap_err().to_string();
        assert!(
            e.contains("recorded 4 experts with top-2, the model has 8"),
            "{e}"
        );
        assert_eq!(t.frequencies(0, 4), vec![1.0, 1.0, 1.0, 1.0]);
    }
}
