//! `rewind capture [--anonymize] [--out FILE]`: the configured ZVMs' inventory as a world file that
//! `zvm-sim --world` serves.

use std::path::{Path, PathBuf};

use rewind_core::capture::{self, WorldFile};
use rewind_core::{ErrorKind, Rewind};
use serde::Serialize;

use crate::exit::CliError;
use crate::output::Reply;

/// What `capture` read and where it went.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Captured {
    /// The file written, or `None` when the world went to stdout.
    pub file: Option<PathBuf>,
    /// Whether names and addresses were replaced.
    pub anonymized: bool,
    /// The world's two sites.
    pub sites: Vec<String>,
    /// How many VMs and VPGs it holds.
    pub vms: usize,
    /// See [`Captured::vms`].
    pub vpgs: usize,
    /// The world, in the world file's keys.
    #[schemars(with = "serde_json::Value")]
    pub world: WorldFile,
}

/// Reads the inventory and writes it, whole, to `out` (never over a file that exists) or stdout.
pub async fn capture(
    rewind: &Rewind,
    anonymize: bool,
    out: Option<&Path>,
) -> Result<Reply, CliError> {
    rewind.config().require_sites()?;
    crate::output::refuse_existing(out, "capture")?;
    let mut world = capture::capture(&rewind.clients()).await?;
    if anonymize {
        world = capture::anonymize(&world);
    }
    let text = capture::world_text(&world, anonymize).map_err(|e| {
        CliError::new(
            ErrorKind::Internal,
            format!("cannot write the world as TOML: {e}"),
        )
    })?;
    if let Some(out) = out {
        crate::output::write_new_file(out, &text)?;
    }
    let captured = Captured {
        file: out.map(Path::to_path_buf),
        anonymized: anonymize,
        sites: world.sites.iter().map(|s| s.name.clone()).collect(),
        vms: world.vms.len(),
        vpgs: world.vpgs.len(),
        world,
    };
    let human = match &captured.file {
        Some(file) => format!(
            "captured {} VMs and {} VPGs of sites {} into {}{}; serve it with `zvm-sim --world {}`\n",
            captured.vms,
            captured.vpgs,
            captured.sites.join(" and "),
            file.display(),
            if anonymize { " (anonymized)" } else { "" },
            file.display()
        ),
        None => text,
    };
    Reply::new(&captured, human)
}
