//! The plan cache of this run: `$XDG_CACHE_HOME/elk-opt` (else `~/.cache/elk-opt`) unless
//! `--no-cache` is given. Chosen once per process, before any command runs; every command
//! hands it to the library explicitly (instance options, sweep runs, report headers).

use elk_model::plan::{CacheStats, PlanCache};
use std::sync::OnceLock;

static CHOICE: OnceLock<Option<PlanCache>> = OnceLock::new();

/// Chooses the cache for the rest of the process (the first call wins).
pub fn choose(no_cache: bool) {
    let cache = if no_cache {
        None
    } else {
        PlanCache::default_location()
    };
    let _ = CHOICE.set(cache);
}

/// The cache chosen, if any.
pub fn get() -> Option<PlanCache> {
    CHOICE.get().cloned().flatten()
}

/// The bound cache beside the plan cache chosen, if any.
pub fn bounds() -> Option<elk_app::bound::BoundCache> {
    get().map(|c| elk_app::bound::BoundCache::beside(&c))
}

/// Warns on stderr when the cache could not be written (the results are unaffected).
pub fn warn_on_write_error(stats: &CacheStats) {
    if let Some(e) = &stats.write_error {
        eprintln!("warning: plan cache not updated: {e} (pass --no-cache to skip it)");
    }
}
