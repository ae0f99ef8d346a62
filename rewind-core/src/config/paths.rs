//! Where rewind keeps its files by default: the XDG config and state folders of the app.

use std::path::PathBuf;

/// The folder name under the XDG config and state directories.
pub const APP_DIR: &str = "zerto-ai-rewind";

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", APP_DIR)
}

/// The configuration file looked for when none is given: `$XDG_CONFIG_HOME/zerto-ai-rewind/config.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The default catalog file: `$XDG_CONFIG_HOME/zerto-ai-rewind/catalog.toml`.
pub fn default_catalog_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("catalog.toml"))
}

/// The default journal file: `$XDG_STATE_HOME/zerto-ai-rewind/journal.jsonl` (the local data
/// directory on platforms without a state directory).
pub fn default_journal_path() -> Option<PathBuf> {
    project_dirs().map(|d| {
        d.state_dir()
            .unwrap_or_else(|| d.data_local_dir())
            .join("journal.jsonl")
    })
}
