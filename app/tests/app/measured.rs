//! Study `measured`: its rows are the published numbers of the fixture it cites, and one row's
//! best schedule is finite and no faster than the certified bound.

use elk_app::studies::measured::{row, MEASUREMENTS, SOURCE};
use std::path::Path;

/// tests/fixtures/tenstorrent/e2e.csv: (model as listed, board, batch, t/s/u, source) of every
/// row.
fn published() -> Vec<(String, String, String, String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/tenstorrent/e2e.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (listed, board, batch, tsu, source) = (
        col("model_as_listed"),
        col("board"),
        col("batch"),
        col("tok_s_user"),
        col("source"),
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[listed].to_string(),
                r[board].to_string(),
                r[batch].to_string(),
                r[tsu].to_string(),
                r[source].to_string(),
            )
        })
        .collect()
}

#[test]
fn every_row_is_a_published_measurement_of_its_source() {
    let rows = published();
    for m in MEASUREMENTS {
        assert!(
            m.source.starts_with("tenstorrent/tt-metal@"),
            "{}",
            m.source
        );
        // The fixture's row from the cited commit and file, for this model and board.
        let found: Vec<_> = rows
            .iter()
            .filter(|r| r.0 == m.listed && r.1 == m.board && r.4.starts_with(SOURCE))
            .collect();
        assert_eq!(found.len(), 1, "{} on {}: {found:?}", m.listed, m.board);
        let r = found[0];
        assert_eq!(r.2, "32", "{} on {}: batch", m.listed, m.board);
        // A starred number ("under active development") is still the published one.
        let tsu: f64 = r.3.trim_end_matches('*').parse().unwrap();
        assert_eq!(tsu, m.tok_s_user, "{} on {}", m.listed, m.board);
        assert!((m.ms() - 1000.0 / tsu).abs() < 1e-12);
    }
}

#[test]
fn the_smallest_row_has_a_finite_ratio_and_its_best_schedule_is_above_the_bound() {
    let m = MEASUREMENTS
        .iter()
        .find(|m| m.model == "llama3.2-1b")
        .unwrap();
    let r = row(m, None).unwrap();
    let best = r.best_ms.unwrap();
    let ratio = r.ratio().unwrap();
    assert!(ratio.is_finite() && ratio > 0.0, "{ratio}");
    // The simulator judges the schedule; no schedule beats a certified lower bound.
    assert!(best >= r.bound_ms * (1.0 - 1e-9), "{best} < {}", r.bound_ms);
    assert!(r.bound_ms >= r.hbm_ms * (1.0 - 1e-9) && r.bound_ms >= r.exec_ms * (1.0 - 1e-9));
    assert!(r.overhead_ms > 0.0 && r.overhead_ms <= r.exec_ms, "{r:?}");
    assert!(r.needed_bytes_per_s() > 0.0 && r.bytes > 0.0);
}
