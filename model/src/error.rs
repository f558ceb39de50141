//! The one error type of `elk-model`: every variant names where the problem is.

use std::path::PathBuf;

/// Errors raised while building, importing or reading models and chip specifications.
///
/// Every variant carries what locates the problem (file, entry id, key, operator), so the CLI
/// can print it as one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A file could not be read.
    #[error("{path}: cannot read: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error (not a `source`: the message already says it, and the
        /// CLI prints one line).
        error: std::io::Error,
    },
    /// A JSON file (reference graph, instance, schedule) is malformed.
    #[error("{file}: malformed JSON: {}", one_line(.detail))]
    GraphJson {
        /// The file.
        file: String,
        /// What was wrong, with the position or entry index.
        detail: String,
    },
    /// One entry of a reference graph cannot be imported.
    #[error("{file}: entry id {id} ({}): {}", one_line(.op_type), one_line(.detail))]
    Entry {
        /// The file.
        file: String,
        /// The entry's node id.
        id: i64,
        /// The entry's op type.
        op_type: String,
        /// What is wrong with it.
        detail: String,
    },
    /// An ONNX file cannot be imported: malformed, or a node that cannot be mapped (the
    /// detail names it: `node 'NAME' (OpType): …`).
    #[error("{file}: {}", one_line(.detail))]
    Onnx {
        /// The file.
        file: String,
        /// What is wrong, naming the node or input.
        detail: String,
    },
    /// A chip specification (TOML) is invalid.
    #[error("{file}: {}", one_line(.detail))]
    Chip {
        /// The file (or `preset NAME`).
        file: String,
        /// The key and what was expected.
        detail: String,
    },
    /// A model file (TOML, or a Hugging Face config.json read as one; docs/model-files.md) is
    /// invalid.
    #[error("{file}: {}", one_line(.detail))]
    ModelFile {
        /// The file (`model/zoo/NAME.toml` for the built-in ones).
        file: String,
        /// The line, the key (a config.json's own) and what was expected.
        detail: String,
    },
    /// A file given as one kind of input is another kind (a config.json to `--import`, a
    /// graph to `--model`); the detail says what reads it.
    #[error("{file}: {}", one_line(.detail))]
    WrongKind {
        /// The file.
        file: String,
        /// What the file looks like and which flag reads it.
        detail: String,
    },
    /// A name (model, chip, mode) is not known.
    #[error("unknown {what} '{}'; known: {known}", one_line(.name))]
    Unknown {
        /// What kind of name.
        what: &'static str,
        /// The name given.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// No plan of an operator fits the chip's SRAM: this configuration cannot run (for a
    /// sweep a result, not a failure).
    #[error("operator {}: no plan fits {sram_bytes_per_core} B of SRAM per core on {cores} cores: {}", one_line(.op), one_line(.why))]
    NoPlanFits {
        /// The operator.
        op: String,
        /// SRAM per core.
        sram_bytes_per_core: u64,
        /// Cores.
        cores: u64,
        /// Which tensor does not fit ([`crate::plan::why_no_plan_fits`]).
        why: String,
    },
    /// An imported graph does not have the number of identical layers the user gave.
    #[error(
        "{file}: cannot find {layers} identical layers among its {ops} operators \
         (detection without a count finds {})",
        describe_layers(.detected)
    )]
    LayerCount {
        /// The graph file.
        file: String,
        /// The layer count asked for.
        layers: usize,
        /// Operators in the graph.
        ops: usize,
        /// What detection finds without the count.
        detected: elk_stage::period::LayerStructure,
    },
    /// A parameter is out of range or does not apply.
    #[error("{}", one_line(.0))]
    Invalid(String),
    /// An instance or schedule is malformed (from the stage-model contract).
    #[error(transparent)]
    Stage(#[from] elk_stage::StageError),
}

/// `P prologue + L × K + E epilogue operators`, or `1 × N operators` when nothing repeats.
pub fn describe_layers(s: &elk_stage::period::LayerStructure) -> String {
    if s.layers <= 1 {
        return format!("1 × {} operators", s.total());
    }
    format!(
        "{} prologue + {} × {} + {} epilogue operators",
        s.prologue, s.layers, s.ops_per_layer, s.epilogue
    )
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, ModelError>;

pub use elk_stage::error::one_line;

/// Reads a whole text file, naming it in the error.
pub fn read_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|error| ModelError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// A TOML parse error as one line: `line N: key 'k': message`.
pub fn toml_error_line(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().replace('\n', " ");
    let Some(span) = e.span() else {
        return msg;
    };
    // An error about the whole document (a missing top-level key or table) has no line:
    // naming line 1 and its key would point at the wrong place.
    if span.start == 0 && span.end >= text.trim_end().len() {
        return msg;
    }
    let start = span.start.min(text.len());
    let mut line_no = text[..start].matches('\n').count() + 1;
    // Inside a tagged table (`[cost_model]` with its `kind`) the span is the table's: an
    // unknown variant is found by its value instead, so the error names its key.
    if let Some(value) = msg
        .strip_prefix("unknown variant `")
        .and_then(|r| r.split('`').next())
    {
        let quoted = format!("\"{value}\"");
        let at = text.lines().position(|l| {
            l.split('#').next().is_some_and(|code| {
                code.split_once('=')
                    .is_some_and(|(_, v)| v.trim() == quoted)
            })
        });
        if let Some(i) = at {
            line_no = i + 1;
        }
    }
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let key = line
        .split('=')
        .next()
        .map(str::trim)
        .filter(|k| !k.is_empty() && line.contains('=') && !k.starts_with('['))
        .map(|k| format!("key '{k}': "))
        .unwrap_or_default();
    format!("line {line_no}: {key}{msg}")
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // only parsed
    struct Doc {
        name: String,
        table: std::collections::BTreeMap<String, u64>,
    }

    #[test]
    fn an_error_about_the_whole_document_names_no_line() {
        let text = "name = \"x\"\n";
        let e = toml::from_str::<Doc>(text).unwrap_err();
        let line = super::toml_error_line(text, &e);
        assert_eq!(line, "missing field `table`");
        let text = "name = 3\n[table]\n";
        let e = toml::from_str::<Doc>(text).unwrap_err();
        assert!(super::toml_error_line(text, &e).starts_with("line 1: key 'name': "));
    }
}
