//! Integration tests of elk-sim: hand-worked instances, the reference's own schedules,
//! properties of random schedules, file formats and traces.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

#[path = "simulator/by_hand.rs"]
mod by_hand;
#[path = "simulator/detailed.rs"]
mod detailed;
#[path = "simulator/fixtures.rs"]
mod fixtures;
#[path = "simulator/formats.rs"]
mod formats;
#[path = "simulator/noc_saturation.rs"]
mod noc_saturation;
#[path = "simulator/properties.rs"]
mod properties;
#[path = "simulator/reference_schedules.rs"]
mod reference_schedules;
#[path = "simulator/regions.rs"]
mod regions;
