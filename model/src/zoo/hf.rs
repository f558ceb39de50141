//! A Hugging Face transformers `config.json` read as a model file (docs/model-files.md,
//! "Hugging Face config.json").
//!
//! The JSON is mapped to a model file's TOML text, which the model-file parser then reads: every
//! check of a model file applies once, and `elk-opt models from-hf` prints the same text for the
//! user to keep and edit. A key that changes the graph or the parameter count in a way the
//! generator does not model is refused, naming it: building a neighbouring model instead would
//! give plausible, wrong numbers. Keys known not to matter are ignored. Keys not recognised at
//! all come back as one warning line, neither refused (real files carry many: tokenizer ids,
//! training flags, a newer transformers' additions) nor dropped silently.

mod deepseek;
mod family;
mod refused;

use super::ZooModel;
use crate::error::{ModelError, Result};
use family::Family;
use serde_json::{Map, Value};
use std::path::Path;

pub use family::{IGNORED, SUPPORTED};

/// A config.json read: the model, the model file it maps to and the warnings about it.
#[derive(Clone, Debug)]
pub struct HfModel {
    /// The model, as [`ZooModel::load`] gives it.
    pub model: ZooModel,
    /// The equivalent model file (TOML), a comment on each value naming its config.json key.
    pub model_file: String,
    /// Lines for stderr (the keys not recognised); empty when every key is known.
    pub warnings: Vec<String>,
}

/// Reads the config.json text `text`; `file` (its path) names it in errors and names the model
/// when the JSON does not (`_name_or_path`).
pub fn read(file: &str, text: &str) -> Result<HfModel> {
    let bad = |detail: String| ModelError::ModelFile {
        file: file.into(),
        detail,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("malformed JSON: {e}")))?;
    let obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(ModelError::WrongKind {
                file: file.into(),
                detail: "a JSON list: this looks like a graph in the reference format, which \
                         --import FILE reads (--model reads a model file FILE.toml or a Hugging \
                         Face config.json)"
                    .into(),
            })
        }
        _ => {
            return Err(bad(
                "not a Hugging Face config.json: the top level is not an object".into(),
            ))
        }
    };
    let cfg = Config { obj: &obj };
    let model_type = match obj.get("model_type") {
        None | Some(Value::Null) => {
            return Err(bad("no key 'model_type': not a Hugging Face transformers \
                 config.json (a model file is TOML, docs/model-files.md)"
                .into()))
        }
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(bad(format!("key 'model_type': {v}: expected a string"))),
    };
    let family = Family::of(model_type).ok_or_else(|| bad(refused::refusal(model_type, &cfg)))?;
    let name = model_name(file, cfg.string("_name_or_path").map_err(&bad)?);
    let lines = family::map(family, &cfg).map_err(&bad)?;
    let model_file = emit(file, family, &name, &lines);
    let model = super::file::parse(file, &model_file).map_err(|e| match e {
        ModelError::ModelFile { file, detail } => ModelError::ModelFile {
            file,
            detail: in_json_terms(&detail, &lines),
        },
        other => other,
    })?;
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !family.reads(k) && !IGNORED.contains(k))
        .collect();
    let mut warnings = if unknown.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "{file}: ignoring keys elk-opt does not know for model_type \"{model_type}\": {} \
             (docs/model-files.md lists the keys it reads and ignores)",
            unknown.join(", ")
        )]
    };
    if family.deepseek() {
        warnings.extend(deepseek::mtp_note(file, &cfg).map_err(&bad)?);
    }
    Ok(HfModel {
        model,
        model_file,
        warnings,
    })
}

/// A config.json's keys, a `null` value read as an absent key (transformers' `None`: the
/// default).
pub(super) struct Config<'a> {
    obj: &'a Map<String, Value>,
}

impl Config<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    /// The value of `key` as `read` takes it, `None` when absent; an error says what was
    /// `expected`.
    fn typed<'s, T>(
        &'s self,
        key: &str,
        read: fn(&'s Value) -> Option<T>,
        expected: &str,
    ) -> std::result::Result<Option<T>, String> {
        self.get(key)
            .map(|v| read(v).ok_or_else(|| format!("key '{key}': {v}: expected {expected}")))
            .transpose()
    }

    /// A whole number ≥ `least`, `None` when absent; a negative number, a smaller one or
    /// another type is refused naming that least value, so that -24 and 0 get the same
    /// message where the least is 1.
    fn at_least(&self, key: &str, least: u64) -> std::result::Result<Option<u64>, String> {
        let expected = format!("a whole number ≥ {least}");
        match self.typed(key, Value::as_u64, &expected)? {
            Some(n) if n < least => Err(format!("key '{key}': {n}: expected {expected}")),
            n => Ok(n),
        }
    }

    /// A whole number ≥ 0 (a layer index, a step, a width that may be 0), `None` when absent.
    fn uint(&self, key: &str) -> std::result::Result<Option<u64>, String> {
        self.at_least(key, 0)
    }

    /// A count or width ≥ 1 (layers, heads, sizes), `None` when absent.
    fn count(&self, key: &str) -> std::result::Result<Option<u64>, String> {
        self.at_least(key, 1)
    }

    /// A count or width ≥ 1 that must be there.
    fn required(&self, key: &str) -> std::result::Result<u64, String> {
        self.count(key)?
            .ok_or_else(|| format!("missing key '{key}'"))
    }

    /// A whole number ≥ 0 that must be there.
    fn required_uint(&self, key: &str) -> std::result::Result<u64, String> {
        self.uint(key)?
            .ok_or_else(|| format!("missing key '{key}'"))
    }

    fn boolean(&self, key: &str) -> std::result::Result<Option<bool>, String> {
        self.typed(key, Value::as_bool, "true or false")
    }

    fn string(&self, key: &str) -> std::result::Result<Option<&str>, String> {
        self.typed(key, Value::as_str, "a string")
    }
}

/// One value of the model file: `table.key = value  # comment`, and the config.json key it
/// comes from (`None` for what the family fixes), which errors about it name. With a key, the
/// comment is the key followed by `comment` (which starts with its own separator: `: …`,
/// ` absent: …`).
#[derive(Debug)]
pub(super) struct Line {
    table: &'static str,
    key: &'static str,
    value: String,
    json: Option<&'static str>,
    comment: String,
}

impl Line {
    fn new(table: &'static str, key: &'static str, value: impl ToString, comment: &str) -> Line {
        Line {
            table,
            key,
            value: value.to_string(),
            json: None,
            comment: comment.into(),
        }
    }

    /// The comment after the config.json key's name (`: …`).
    fn with_comment(mut self, comment: &str) -> Line {
        self.comment = comment.into();
        self
    }

    /// The value comes from config.json key `json`.
    fn read_from(mut self, json: &'static str) -> Line {
        self.json = Some(json);
        self
    }

    fn path(&self) -> String {
        if self.table.is_empty() {
            self.key.to_string()
        } else {
            format!("{}.{}", self.table, self.key)
        }
    }
}

/// A TOML string literal.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The model's name: `_name_or_path`'s last component, else the directory of a file called
/// config.json (the Hub's layout: one directory per model), else the file's stem; one word.
fn model_name(file: &str, name_or_path: Option<&str>) -> String {
    let path = Path::new(file);
    let from_json = name_or_path.and_then(|n| n.split(['/', '\\']).rfind(|c| !c.is_empty()));
    let from_dir = || {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = match parent {
            Some(p) => Some(p.to_path_buf()),
            // `config.json` in the working directory: the directory's own name.
            None => std::fs::canonicalize(path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
        };
        parent.and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    };
    let name = match from_json {
        Some(n) => Some(n.to_string()),
        None if path.file_name().is_some_and(|n| n == "config.json") => from_dir(),
        None => None,
    }
    .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
    .unwrap_or_default();
    let word: String = name
        .trim()
        .chars()
        .map(|c| if c.is_whitespace() { '-' } else { c })
        .collect();
    if word.is_empty() {
        "model".into()
    } else {
        word
    }
}

/// The model file's text: a header, the top-level keys, then each table.
fn emit(file: &str, family: Family, name: &str, lines: &[Line]) -> String {
    let mut out = format!(
        "# A model file (docs/model-files.md) made by `elk-opt models from-hf` from a Hugging \
         Face\n# config.json (model_type \"{}\"): keep it, edit it, pass it as --model FILE.toml. \
         Each\n# comment names the config.json key its value comes from.\n",
        family.name()
    );
    out.push_str(&format!("name = {}\n", quoted(name)));
    let source = format!(
        "Hugging Face config.json (model_type {}): {file}",
        family.name()
    );
    out.push_str(&format!("source = {}\n", quoted(&source)));
    out.push_str(
        "# A config.json states no parameter count: add the published one (published_params, \
         and\n# published_active_params with [moe]) to have elk-opt warn when the graph's \
         differs.\n\n",
    );
    let mut table = "";
    for l in lines {
        if l.table != table {
            table = l.table;
            out.push_str(&format!("\n[{table}]\n"));
        }
        out.push_str(&format!("{} = {}", l.key, l.value));
        let comment = match l.json {
            Some(j) => format!("{j}{}", l.comment),
            None => l.comment.clone(),
        };
        if !comment.is_empty() {
            out.push_str(&format!("  # {comment}"));
        }
        out.push('\n');
    }
    out
}

/// A model-file error about the generated text (`line N: key 'heads': …`) in the config.json's
/// terms: the key the value came from, without the line of a text the user has not seen.
fn in_json_terms(detail: &str, lines: &[Line]) -> String {
    let rest = match detail.strip_prefix("line ") {
        Some(r) => r.split_once(": ").map_or(detail, |(_, r)| r),
        None => detail,
    };
    let Some((path, msg)) = rest.strip_prefix("key '").and_then(|r| r.split_once("': ")) else {
        return detail.to_string();
    };
    match lines.iter().find(|l| l.path() == path) {
        Some(Line {
            json: Some(j),
            comment,
            ..
        }) if comment.is_empty() => format!("key '{j}': {msg}"),
        Some(Line {
            json: Some(j),
            comment,
            ..
        }) => format!(
            "key '{j}' ({}): {msg}",
            comment.trim_start_matches(':').trim()
        ),
        Some(l) => format!("model-file key '{path}' ({}): {msg}", l.comment),
        None => format!("model-file key '{path}': {msg}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{model_name, read};

    const TINY: &str = r#"{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128}"#;

    fn error(text: &str) -> String {
        read("c.json", text).unwrap_err().to_string()
    }

    #[test]
    fn the_name_comes_from_the_json_then_the_directory_then_the_stem() {
        assert_eq!(
            model_name("x/config.json", Some("org/My Model/")),
            "My-Model"
        );
        assert_eq!(model_name("hub/Llama-3/config.json", None), "Llama-3");
        assert_eq!(model_name("hub/llama.json", None), "llama");
        assert_eq!(model_name("hub/llama.json", Some("")), "llama");
    }

    #[test]
    fn a_small_llama_maps_to_a_model_file_with_its_defaults() {
        let m = read("d/config.json", TINY).unwrap();
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.model.name, "d");
        assert_eq!(m.model.published_params, None);
        let t = &m.model_file;
        assert!(
            t.contains("kv_heads = 4  # num_key_value_heads absent: "),
            "{t}"
        );
        assert!(t.contains("head_dim = 16  # head_dim absent: "), "{t}");
        assert!(t.contains("dim = 128  # intermediate_size\n"), "{t}");
    }

    #[test]
    fn an_error_of_the_mapped_file_names_the_json_key() {
        let text = TINY.replace("\"num_attention_heads\": 4", "\"num_attention_heads\": 5");
        assert_eq!(
            error(&text),
            "c.json: key 'num_attention_heads': 5 heads do not divide hidden 64"
        );
        let text = TINY.replace("\"vocab_size\": 100", "\"vocab_size\": \"100\"");
        assert_eq!(
            error(&text),
            "c.json: key 'vocab_size': \"100\": expected a whole number ≥ 1"
        );
        let text = TINY.replace("\"vocab_size\": 100,", "");
        assert_eq!(error(&text), "c.json: missing key 'vocab_size'");
    }

    #[test]
    fn a_negative_number_and_zero_are_refused_naming_the_same_least_value() {
        for v in ["-24", "0", "2.5"] {
            let text = TINY.replace("\"hidden_size\": 64", &format!("\"hidden_size\": {v}"));
            assert_eq!(
                error(&text),
                format!("c.json: key 'hidden_size': {v}: expected a whole number ≥ 1")
            );
        }
        // A key that may be 0 names 0.
        let qwen = TINY.replace(
            "\"llama\"",
            "\"qwen2_moe\", \"num_key_value_heads\": 4, \"num_experts\": 4, \
             \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, \
             \"shared_expert_intermediate_size\": -1",
        );
        assert_eq!(
            error(&qwen),
            "c.json: key 'shared_expert_intermediate_size': -1: expected a whole number ≥ 0"
        );
        assert!(read("c.json", &qwen.replace("-1", "0")).is_ok());
    }

    #[test]
    fn null_is_the_default_and_unknown_keys_are_one_warning() {
        let text = TINY.replace('}', r#", "head_dim": null, "foo": 1, "bar": {}}"#);
        let m = read("c.json", &text).unwrap();
        assert_eq!(
            m.warnings,
            [
                "c.json: ignoring keys elk-opt does not know for model_type \"llama\": bar, foo \
              (docs/model-files.md lists the keys it reads and ignores)"
            ]
        );
    }

    #[test]
    fn what_is_not_a_config_is_told_apart() {
        assert!(error("[[1, \"x\", \"Dot\", []]]")
            .contains("reference format, which --import FILE reads"));
        assert!(error("{\"hidden_size\": 1}").contains("no key 'model_type'"));
        assert!(error("{").starts_with("c.json: malformed JSON: "));
    }
}
