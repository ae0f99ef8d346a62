//! One module per command family. Each command calls the core and returns a [`crate::output::Reply`]:
//! the core's serializable result, and the same for people.

pub mod approvals;
pub mod capture;
pub mod diff;
pub mod doctor;
pub mod journal;
pub mod parity;
pub mod protection;
pub mod recover;
pub mod restore;
pub mod sites;
pub mod tools;
pub mod trust;
pub mod watch;
