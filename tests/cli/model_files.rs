//! `--model FILE.toml`: a user's model file builds what the zoo's embedded file builds, a bad
//! file is one error line naming the file, line and key (exit 2), and `models list` shows the
//! added models with their sources.

use super::common::{elk, elk_ok, scratch, small_instance_args};

/// The embedded file of `name`, as the repository holds it.
fn zoo_file(name: &str) -> String {
    let path = format!("{}/model/zoo/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn models_list_shows_the_added_models_and_their_sources() {
    let text = String::from_utf8(elk_ok(&["models", "list"]).stdout).unwrap();
    for (name, source) in [
        ("llama3-8b", "HF meta-llama/Meta-Llama-3-8B"),
        ("mistral-7b", "HF mistralai/Mistral-7B-v0.1"),
        ("qwen2-7b", "HF Qwen/Qwen2-7B"),
        ("phi3-mini", "HF microsoft/Phi-3-mini-4k-instruct"),
    ] {
        let row = text.lines().find(|l| l.starts_with(name));
        assert!(
            row.is_some_and(|r| r.contains(source)),
            "{name}: {row:?}\n{text}"
        );
    }
}

#[test]
fn a_model_file_gives_the_same_instance_as_the_zoo_name() {
    let dir = scratch("model-files");
    let file = dir.join("my-llama3.toml");
    std::fs::write(&file, zoo_file("llama3-8b")).unwrap();
    let (a, b) = (dir.join("zoo.json"), dir.join("file.json"));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    elk_ok(&small_instance_args("llama3-8b", "0..6", a_s));
    elk_ok(&small_instance_args(file.to_str().unwrap(), "0..6", b_s));
    let strip = |p: &std::path::Path| {
        // The instance records its inputs; the operators and options must be identical.
        let mut j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        j.as_object_mut().unwrap().retain(|k, _| k == "ops");
        j
    };
    assert!(strip(&a)["ops"].as_array().is_some_and(|o| o.len() == 6));
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn a_bad_model_file_is_one_line_naming_file_line_and_key() {
    let dir = scratch("model-files-bad");
    let text = zoo_file("mistral-7b");
    let line_of = |t: &str, key: &str| 1 + t.lines().position(|l| l.starts_with(key)).unwrap();
    for (tag, edited, key, what) in [
        (
            "unknown",
            text.replacen("rotary", "rotory", 1),
            "rotory",
            "unknown field",
        ),
        (
            "type",
            text.replacen("layers = 32", "layers = 32.5", 1),
            "layers",
            "invalid type",
        ),
        (
            "heads",
            text.replacen("heads = 32", "heads = 24", 1),
            "heads",
            "24 heads do not divide hidden 4096",
        ),
    ] {
        let file = dir.join(format!("{tag}.toml"));
        std::fs::write(&file, &edited).unwrap();
        let out = elk(&["models", "show", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{tag}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{tag}: {err}");
        let want = format!(
            "{}: line {}: key '{key}': ",
            file.display(),
            line_of(&edited, key)
        );
        assert!(err.contains(&want) && err.contains(what), "{tag}: {err}");
    }
}
