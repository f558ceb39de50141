//! Routing logs as JSON lines: one object per token and layer,
//! `{"token": 12, "layer": 3, "experts": [5, 17]}`, or one per token with every layer,
//! `{"token": 12, "experts": [[5, 17], [3, 4]]}` (layer ids 0, 1, … as SGLang's
//! `routed_experts` array is laid out), with optional `step` or `sequence` keys.

use super::rows::{expert_ids, At, Field, Row, Rows};
use crate::error::{ModelError, Result};
use serde_json::Value;
use std::collections::BTreeSet;

/// Reads the rows of JSONL `text`; `file` names it in errors.
pub fn read(file: &str, text: &str) -> Result<Rows> {
    let mut rows = Rows::default();
    let mut ignored = BTreeSet::new();
    let mut objects = 0u64;
    for (i, text) in text.lines().enumerate() {
        let line = i + 1;
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(text).map_err(|e| {
            // serde's message ends with its own "at line 1 column C": the line is the file's.
            let message = e.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m);
            ModelError::Invalid(format!(
                "{file}:{line}: character {}: {message}",
                e.column()
            ))
        })?;
        let Value::Object(object) = value else {
            return Err(ModelError::Invalid(format!(
                "{file}:{line}: not a JSON object"
            )));
        };
        let at = |name: &'static str| At {
            file,
            line,
            kind: "key",
            name,
        };
        let mut keys: Vec<(Field, &'static str, &Value)> = Vec::new();
        for (key, v) in &object {
            match Field::ALL
                .into_iter()
                .find_map(|f| f.names().iter().find(|n| *n == key).map(|n| (f, *n)))
            {
                Some((field, name)) => {
                    if let Some((_, other, _)) = keys.iter().find(|(f, _, _)| *f == field) {
                        return Err(at(name).error(format!("'{other}' gives it too")));
                    }
                    keys.push((field, name, v));
                }
                None => {
                    ignored.insert(key.clone());
                }
            }
        }
        let get = |field: Field| keys.iter().find(|(f, _, _)| *f == field);
        let index = |field: Field| -> Result<Option<u64>> {
            get(field)
                .map(|&(_, name, v)| {
                    v.as_u64()
                        .ok_or_else(|| at(name).error(format!("{v} is not a whole number ≥ 0")))
                })
                .transpose()
        };
        let Some(&(_, experts_name, experts)) = get(Field::Experts) else {
            return Err(at("experts").error("missing (or expert_ids, topk_ids, indices)"));
        };
        let Some(list) = experts.as_array() else {
            return Err(at(experts_name).error(format!("{experts} is not a list of expert ids")));
        };
        let sequence = get(Field::Sequence).map(|(_, _, v)| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let (step, token, layer) = (
            index(Field::Step)?,
            index(Field::Token)?,
            index(Field::Layer)?,
        );
        // One list per layer: every layer of this token.
        let per_layer = list.first().is_some_and(Value::is_array);
        let layers: Vec<(u64, &Vec<Value>)> = if per_layer {
            if let Some(&(_, name, _)) = get(Field::Layer) {
                return Err(at(name).error("given beside a list of layers' experts"));
            }
            list.iter()
                .enumerate()
                .map(|(l, v)| {
                    v.as_array().map(|ids| (l as u64, ids)).ok_or_else(|| {
                        at(experts_name).error(format!("layer {l}: {v} is not a list"))
                    })
                })
                .collect::<Result<_>>()?
        } else {
            let Some(layer) = layer else {
                return Err(at("layer").error("missing (or layer_id)"));
            };
            vec![(layer, list)]
        };
        let token = match (token, per_layer) {
            (Some(t), _) => t,
            (None, true) => objects,
            (None, false) => return Err(at("token").error("missing (or position)")),
        };
        objects += 1;
        for (layer, ids) in layers {
            let texts: Vec<String> = ids.iter().map(Value::to_string).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            match expert_ids(&at(experts_name), &texts)? {
                Some(experts) => rows.rows.push(Row {
                    line,
                    step,
                    sequence: sequence.clone(),
                    token,
                    layer,
                    experts,
                }),
                None => rows.placeholders += 1,
            }
        }
    }
    rows.ignored = ignored.into_iter().collect();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_per_line_with_every_layer_reads_as_rows_per_layer() {
        let per_layer = "{\"token\": 0, \"layer\": 0, \"experts\": [1, 2]}\n\n\
                         {\"token\": 0, \"layer\": 1, \"indices\": [3, 0], \"scores\": [0.6, 0.4]}\n";
        let all = "{\"experts\": [[1, 2], [3, 0], [-1, -1]]}\n";
        let (a, b) = (
            read("a.jsonl", per_layer).unwrap(),
            read("b.jsonl", all).unwrap(),
        );
        let key = |r: &Rows| {
            r.rows
                .iter()
                .map(|r| (r.token, r.layer, r.experts.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&a), key(&b));
        assert_eq!(a.rows[1].line, 3);
        assert_eq!(a.ignored, ["scores"]);
        assert_eq!(b.placeholders, 1);
    }

    #[test]
    fn a_bad_value_is_named_by_line_and_key() {
        let e = |text: &str| read("t.jsonl", text).unwrap_err().to_string();
        assert_eq!(
            e("{\"token\": 0, \"layer\": 0, \"experts\": [1, 2]}\n{\"token\": -1, \"layer\": 0, \"experts\": [1]}"),
            "t.jsonl:2: key 'token': -1 is not a whole number ≥ 0"
        );
        assert_eq!(
            e("{\"token\": 0, \"experts\": [1, 2]}"),
            "t.jsonl:1: key 'layer': missing (or layer_id)"
        );
        assert_eq!(
            e("{\"token\": 0, \"layer\": 2, \"experts\": [1, \"a\"]}"),
            "t.jsonl:1: key 'experts': '\"a\"' is not an expert id (a whole number ≥ 0)"
        );
        assert!(e("[1]").starts_with("t.jsonl:1: not a JSON object"));
        assert_eq!(
            e("{\"token\": 0, \"layer\": 0, \"experts\": [1, 2]}\n{\"token\": 1 \"layer\": 0}"),
            "t.jsonl:2: character 13: expected `,` or `}`"
        );
    }
}
