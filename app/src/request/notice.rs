//! What resolving a request tells its user besides its result.

/// What resolving a request tells its user besides its result: warnings (a chip value out of
/// the plausible range, a model file whose counts miss the published ones, …) and the long
/// step (planning every operator) a front end may show progress for.
pub trait Notice {
    /// One warning, on one line, without `warning: `.
    fn warn(&mut self, line: String);
    /// The plan tables of `what` (`llama2-13b decode b32 kv2048 on ipu-pod4`) are being
    /// built: the one step of a build that can take seconds.
    fn planning(&mut self, _what: &str) {}
    /// The plan tables are built.
    fn planned(&mut self) {}
}

/// A [`Notice`] that keeps the warnings (Python's, which raises them after the call).
#[derive(Debug, Default)]
pub struct Collected(pub Vec<String>);

impl Notice for Collected {
    fn warn(&mut self, line: String) {
        self.0.push(line);
    }
}
