//! Bad input gives one line naming the file and the entry id, never a panic.

use super::fixtures::fixtures;
use elk_model::graph::Mode;
use elk_model::import::{import_str, ImportOptions};
use serde_json::Value;

/// Replaces entry `pos` of `list` using `f` and imports the result.
fn import_corrupted(list: &[Value], pos: usize, f: impl Fn(&mut Vec<Value>)) -> String {
    let mut list = list.to_vec();
    let mut entry = list[pos].as_array().unwrap().clone();
    f(&mut entry);
    list[pos] = Value::Array(entry);
    let text = serde_json::to_string(&list).unwrap();
    let opts = ImportOptions::new(Mode::Decode, 8, 512);
    match import_str("g.json", &text, &opts) {
        Ok(_) => panic!("corrupted entry #{pos} imported without error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_file_with_a_corrupted_entry_names_that_entry() {
    let dir = fixtures().join("models");
    for name in [
        "bert-base",
        "llama2-7",
        "llama2-13",
        "llama2-13-layers",
        "opt-1.3",
        "resnet",
        "vit-small",
        "nerf",
        "retnet",
        "decode_attn",
        "decode_kv",
        "prefill_attn",
        "prefill_kv",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
        let list: Vec<Value> = serde_json::from_str(&text).unwrap();
        // The last operator entry with an expression (not folded away).
        let pos = list
            .iter()
            .rposition(|e| {
                matches!(
                    e[2].as_str(),
                    Some("Dot" | "BatchMatMul" | "Add" | "Relu" | "Convolution")
                )
            })
            .unwrap();
        let id = list[pos][0].as_i64().unwrap();
        let want = format!("g.json: entry id {id} ");
        let unknown = import_corrupted(&list, pos, |e| e[2] = Value::from("Frobnicate"));
        assert!(
            unknown.starts_with(&want) && unknown.contains("unknown op type"),
            "{name}: {unknown}"
        );
        let unparsable = import_corrupted(&list, pos, |e| {
            e[1] = Value::from(e[1].as_str().unwrap().replacen("output0[", "output0[[", 1))
        });
        assert!(
            unparsable.starts_with(&want) && unparsable.contains("expression"),
            "{name}: {unparsable}"
        );
        let contradicting = import_corrupted(&list, pos, |e| {
            e[1] = Value::from(e[1].as_str().unwrap().replacen(
                "\"shape\" : [",
                "\"shape\" : [7, ",
                1,
            ))
        });
        assert!(
            contradicting.starts_with(&want) && contradicting.contains("axes"),
            "{name}: {contradicting}"
        );
        assert!(
            !unknown.contains('\n') && !unparsable.contains('\n') && !contradicting.contains('\n')
        );
    }
}

#[test]
fn malformed_json_names_the_file_and_position() {
    let opts = ImportOptions::new(Mode::Decode, 8, 512);
    let err = import_str("bad.json", "[[1, \"x\", \"Dot\"", &opts)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("bad.json: malformed JSON: "), "{err}");
    let err = import_str("bad.json", "[[1, 2, \"Dot\", []]]", &opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("entry #0"), "{err}");
}

#[test]
fn absurd_extents_are_an_error_not_an_overflow() {
    let opts = ImportOptions::new(Mode::Prefill, 8, 512);
    let text = r#"[[5, " - einstein_v2(\" output0[N, M] +=! input0[N, K] * input1[K, M]; \", input_dict={ \"input0\" : { \"dtype\" : \"float32\", \"shape\" : [4000000000, 4000000000]} , \"input1\" : { \"dtype\" : \"float32\", \"shape\" : [4000000000, 4000000000]} })", "Dot", [[1, 0], [2, 0]]]]"#;
    let err = import_str("big.json", text, &opts).unwrap_err().to_string();
    assert!(
        err.contains("entry id 5") && err.contains("too large"),
        "{err}"
    );
}

/// Fuzzing found it: an unknown field whose name holds a line break made a two-line error.
#[test]
fn error_quoting_a_line_break_stays_one_line() {
    // The key is `preload_w` + an escaped line break (`\n` in the JSON text).
    let text = r#"{"format":"elk-instance/1","name":"x","sram_bytes":1,"clock_hz":1,"load_order":"fixed","preload_w\n":null,"ops":[]}"#;
    let err = elk_stage::instance::Instance::from_json("fuzz.json", text)
        .unwrap_err()
        .to_string();
    assert!(!err.contains('\n') && err.contains("preload_w\\n"), "{err}");
}
