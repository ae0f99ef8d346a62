//! `rewind check-tool` and `rewind catalog ...`: the tool catalog. These read and write only the
//! catalog file; they never call a ZVM.

use std::path::PathBuf;

use rewind_core::catalog::{CatalogStore, ListedEntry};
use rewind_core::{Classification, ErrorKind, ToolClass};
use serde::Serialize;

use crate::cli::CatalogCommand;
use crate::exit::CliError;
use crate::output::{Reply, Table};

/// The result of `check-tool` is the core's `Classification`. An unknown tool exits with the refused
/// code: a human has to answer the question before it runs.
pub fn check_tool(
    catalog: &CatalogStore,
    server: &str,
    tool: &str,
    vm: Option<&str>,
) -> Result<Reply, CliError> {
    let c = catalog.classify(server, tool, vm)?;
    let reply = Reply::new(&c, classification_text(&c))?;
    Ok(if c.class == ToolClass::Unknown {
        reply.failed(
            ErrorKind::Refused,
            format!(
                "{}/{} is not in the tool catalog: put the question to a human before it runs, then record the answer with `rewind catalog add-mutating` or `add-read-only`",
                c.server, c.tool
            ),
        )
    } else {
        reply
    })
}

/// A classification as people read it: the core's headline, then what it means.
pub fn classification_text(c: &Classification) -> String {
    let mut out = format!("{}\n", c.headline());
    match c.class {
        ToolClass::ReadOnly => out.push_str("It does not change a guest: no guard is needed.\n"),
        ToolClass::Mutating => {
            out.push_str(&format!(
                "It changes a guest: guard {} before running it.\n",
                c.vm.as_deref().unwrap_or("the VM it changes")
            ));
            if let Some(arg) = &c.vm_arg {
                out.push_str(&format!("The VM is named by its argument `{arg}`.\n"));
            }
        }
        ToolClass::Unknown => {
            if let Some(q) = &c.question {
                out.push_str(&format!("Ask the human: {q}\n"));
            }
        }
    }
    out
}

/// What `catalog add-mutating`, `add-read-only` and `remove` print: the catalog file, whether an entry
/// was removed (for `remove`), and how the tool is classified now.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct CatalogChanged {
    /// The catalog file.
    catalog: PathBuf,
    /// For `remove`: whether the file had an entry for the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    removed: Option<bool>,
    /// How the tool is classified after the change.
    now: Classification,
}

/// `rewind catalog ...`.
pub fn catalog(catalog: &CatalogStore, command: &CatalogCommand) -> Result<Reply, CliError> {
    let changed = |server: &str, tool: &str, removed: Option<bool>| {
        let now = catalog.classify(server, tool, None)?;
        let mut text = match removed {
            Some(true) => format!("removed {}/{} from the catalog\n", now.server, now.tool),
            Some(false) => format!(
                "{}/{} had no entry in the catalog; nothing was changed\n",
                now.server, now.tool
            ),
            None => String::new(),
        };
        text.push_str(&classification_text(&now));
        text.push_str(&format!("catalog: {}\n", catalog.path().display()));
        Reply::new(
            &CatalogChanged {
                catalog: catalog.path().to_path_buf(),
                removed,
                now,
            },
            text,
        )
    };
    match command {
        CatalogCommand::List => {
            let listing = catalog.list()?;
            let mut t = Table::new(&["CLASS", "SERVER", "TOOL", "VM ARG", "SOURCE"]);
            let mut add = |class: &str, e: &ListedEntry| {
                t.row(vec![
                    class.into(),
                    e.entry.server.clone(),
                    e.entry.tool.clone(),
                    e.entry.vm_arg.clone().unwrap_or_default(),
                    if e.builtin { "built in" } else { "catalog" }.into(),
                ]);
            };
            for e in &listing.mutating {
                add("mutating", e);
            }
            for e in &listing.read_only {
                add("read-only", e);
            }
            let text = format!("{}\n{}\n", t.render(), listing.headline());
            Reply::new(&listing, text)
        }
        CatalogCommand::AddMutating {
            server,
            tool,
            vm_arg,
        } => {
            catalog.add_mutating(server, tool, vm_arg.as_deref())?;
            changed(server, tool, None)
        }
        CatalogCommand::AddReadOnly { server, tool } => {
            catalog.add_read_only(server, tool)?;
            changed(server, tool, None)
        }
        CatalogCommand::Remove { server, tool } => {
            let removed = catalog.remove(server, tool)?;
            changed(server, tool, Some(removed))
        }
    }
}
