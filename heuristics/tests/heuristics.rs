//! Integration tests of elk-heuristics: every method's schedule validates, and the reference
//! comparison on the artifact's own instance.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

#[path = "heuristics/elk_by_hand.rs"]
mod elk_by_hand;
#[path = "heuristics/fixtures.rs"]
mod fixtures;
#[path = "heuristics/group_sizing.rs"]
mod group_sizing;
#[path = "heuristics/reference.rs"]
mod reference;
#[path = "heuristics/valid_on_random.rs"]
mod valid_on_random;
