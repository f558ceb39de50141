//! The model files under `examples/models/`: families the config.json reader refuses
//! (Phi-3.5-MoE's `phimoe`, Granite-MoE's `granitemoe`), written by hand, as the refusals
//! point to. Each builds and matches its published total and active counts.

use elk_model::zoo::ZooModel;

/// `examples/models/*.toml`, by file name.
pub fn all() -> Vec<ZooModel> {
    let dir = format!("{}/../examples/models", env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            ZooModel::from_toml_str(&p.display().to_string(), &text).unwrap()
        })
        .collect()
}

#[test]
fn each_example_matches_its_published_counts() {
    let models = all();
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["granite-3.0-1b-a400m", "phi-3.5-moe"]);
    for m in &models {
        assert!(m.published_params.is_some(), "{}", m.name);
        assert!(m.published_active_params.is_some(), "{}", m.name);
        assert_eq!(m.count_mismatches().unwrap(), Vec::<String>::new());
    }
    // Phi-3.5-MoE per layer: q and o (4096² + 4096 bias each), k and v (4096 · 1024 + 1024
    // each), two LayerNorms (scale and bias), the router (4096 · 16) and 16 experts of
    // 3 · 4096 · 6400, 2 of them active; untied embedding and LM head, a final LayerNorm.
    // Only lm_head_bias (32,064) is missing from the checkpoint's count.
    let h = 4096u64;
    let attention = 2 * (h * h + h) + 2 * (h * 1024 + 1024) + 2 * 2 * h + h * 16;
    let expert = 3 * h * 6400;
    let outside = 2 * 32064 * h + 2 * h;
    let (total, active) = models[1].parameter_counts().unwrap();
    assert_eq!(total, 32 * (attention + 16 * expert) + outside);
    assert_eq!(active, 32 * (attention + 2 * expert) + outside);
    // Granite: RMSNorm, no biases, 32 experts of 3 · 1024 · 512 (8 active), a tied table.
    let h = 1024u64;
    let attention = 2 * h * h + 2 * h * 512 + 2 * h + h * 32;
    let expert = 3 * h * 512;
    let outside = 49155 * h + h;
    let (total, active) = models[0].parameter_counts().unwrap();
    assert_eq!(total, 24 * (attention + 32 * expert) + outside);
    assert_eq!(active, 24 * (attention + 8 * expert) + outside);
}
