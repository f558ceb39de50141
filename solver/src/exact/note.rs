//! A fact an exact solve reports, with what it is about: readers (the CLI's footer under
//! `gap`'s table, the tests) choose notes by kind, never by matching their text.

use serde::{Deserialize, Serialize};

/// What a [`Note`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteAbout {
    /// Anything else: the fixed-order restriction, the LP relaxation, the window search, …
    General,
    /// How the segment relaxation's bound of a whole model was had (segments, the coupled
    /// LP, or why there is none).
    SegmentRelaxation,
    /// The same, reached by pricing load work across layer boundaries (a price μ searched).
    SegmentPrices,
    /// A disagreement between a backend and the simulator: a bug to report.
    Bug,
}

/// One note: what it is about, and its text (one line, no wall-clock times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// What it is about.
    pub about: NoteAbout,
    /// The line.
    pub text: String,
}

impl Note {
    /// A note about anything else.
    pub fn general(text: impl Into<String>) -> Note {
        Note::about(NoteAbout::General, text)
    }

    /// A note of kind `about`.
    pub fn about(about: NoteAbout, text: impl Into<String>) -> Note {
        Note {
            about,
            text: text.into(),
        }
    }

    /// It is about the segment relaxation (priced or not).
    pub fn is_segment(&self) -> bool {
        matches!(
            self.about,
            NoteAbout::SegmentRelaxation | NoteAbout::SegmentPrices
        )
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The notes' lines, as the JSON results print them.
pub fn texts(notes: &[Note]) -> Vec<String> {
    notes.iter().map(|n| n.text.clone()).collect()
}
