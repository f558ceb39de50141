//! The `model_type` values elk-opt knows and does not read, with what the generator lacks for
//! each and the way forward: a model file (docs/model-files.md), shipped under
//! `examples/models/` where one matches the published counts. Any other type gets the list of
//! supported families alone.

use super::{Config, SUPPORTED};

/// A known family the reader refuses.
struct Refused {
    /// Its `model_type` values.
    types: &'static [&'static str],
    /// Why it is not read.
    why: &'static str,
    /// The config.json keys behind `why`, quoted with their values when the file has them.
    keys: &'static [&'static str],
    /// The way forward.
    instead: &'static str,
}

const REFUSED: [Refused; 2] = [
    Refused {
        types: &["phimoe"],
        why: "no supported family has Phi-3.5-MoE's LayerNorms with biases and biases on q, k, \
              v, o and the LM head",
        keys: &["attention_bias", "lm_head_bias"],
        instead: "the model file examples/models/phi-3.5-moe.toml describes it (all but the LM \
                  head's bias; docs/model-files.md)",
    },
    Refused {
        types: &["granitemoe"],
        why: "the generator does not emit Granite's scalings of the embedding, of each residual \
              branch and of the logits",
        keys: &[
            "embedding_multiplier",
            "residual_multiplier",
            "logits_scaling",
        ],
        instead: "the model file examples/models/granite-3.0-1b-a400m.toml describes \
                  Granite-3.0-1B-A400M without them (one elementwise operator each; \
                  docs/model-files.md)",
    },
];

/// The one-line refusal of `model_type`, which no supported family reads.
pub(super) fn refusal(model_type: &str, c: &Config) -> String {
    let supported = format!("supported: {}", SUPPORTED.join(", "));
    let Some(r) = REFUSED.iter().find(|r| r.types.contains(&model_type)) else {
        return format!("key 'model_type': \"{model_type}\" is not supported; {supported}");
    };
    let values: Vec<String> = r
        .keys
        .iter()
        .filter_map(|k| c.get(k).map(|v| format!("{k} = {v}")))
        .collect();
    let values = if values.is_empty() {
        String::new()
    } else {
        format!(" ({})", values.join(", "))
    };
    format!(
        "key 'model_type': \"{model_type}\" is not supported: {}{values}; {}; {supported}",
        r.why, r.instead
    )
}

#[cfg(test)]
mod tests {
    use super::{refusal, REFUSED, SUPPORTED};
    use crate::zoo::hf::Config;

    fn with(model_type: &str, json: &str) -> String {
        let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).unwrap();
        refusal(model_type, &Config { obj: &obj })
    }

    #[test]
    fn a_known_family_says_what_is_missing_with_the_config_s_values() {
        let e = with(
            "granitemoe",
            r#"{"embedding_multiplier": 12.0, "logits_scaling": null}"#,
        );
        assert!(
            e.starts_with(
                "key 'model_type': \"granitemoe\" is not supported: the generator does not emit \
                 Granite's scalings of the embedding, of each residual branch and of the logits \
                 (embedding_multiplier = 12.0); the model file"
            ),
            "{e}"
        );
        assert!(
            e.ends_with(&format!("supported: {}", SUPPORTED.join(", "))),
            "{e}"
        );
        assert!(with("phimoe", "{}").contains("examples/models/phi-3.5-moe.toml"));
        assert!(with("granitemoe", "{}").contains("examples/models/granite-3.0-1b-a400m.toml"));
        assert_eq!(
            with("gemma2", "{}"),
            format!(
                "key 'model_type': \"gemma2\" is not supported; supported: {}",
                SUPPORTED.join(", ")
            )
        );
    }

    #[test]
    fn every_example_a_refusal_names_exists() {
        for r in &REFUSED {
            for word in r.instead.split_whitespace() {
                if let Some(path) = word.strip_prefix("examples/") {
                    let file = format!("{}/../examples/{path}", env!("CARGO_MANIFEST_DIR"));
                    assert!(std::path::Path::new(&file).is_file(), "{file}");
                }
            }
        }
    }
}
