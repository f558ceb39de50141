//! Requests: what a user asks for, as the CLI's flags and Python's keyword arguments both
//! describe it, with the defaults, the validation and the one-line refusals in one place.
