//! The command line, as clap derives it. Nothing here acts: [`crate::run`] does.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

use crate::context::Context;

/// `rewind --help`'s opening, with `tail` after it.
macro_rules! long_about {
    ($($tail:literal)?) => {
        concat!(
            "Guard a VM with Zerto tagged checkpoints before an agent changes it, and recover from them.\n\nThe sites come from the configuration file ($XDG_CONFIG_HOME/zerto-ai-rewind/config.toml, or --config) merged with ZVM_URL, ZVM_CLIENT_ID + ZVM_CLIENT_SECRET or ZVM_USERNAME + ZVM_PASSWORD, ZVM_CA_CERT and ZVM_INSECURE."
            $(, $tail)?
        )
    };
}

/// A build with the demo points to it first.
#[cfg(feature = "demo")]
const LONG_ABOUT: &str =
    long_about!(" Try `rewind demo` first: it needs no configuration and no network.");
/// A build without the demo (`--no-default-features`) does not name a command it lacks.
#[cfg(not(feature = "demo"))]
const LONG_ABOUT: &str = long_about!();

/// rewind: pin Zerto tagged checkpoints before an agent changes a VM, and recover from them.
#[derive(Debug, Parser)]
#[command(
    name = "rewind",
    version,
    about = "Guard a VM with Zerto tagged checkpoints before an agent changes it, and recover from them.",
    long_about = LONG_ABOUT,
    after_help = crate::exit::help()
)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The ZVM to talk to, as the site named `default` (the same as ZVM_URL; credentials still come
    /// from ZVM_CLIENT_ID + ZVM_CLIENT_SECRET or ZVM_USERNAME + ZVM_PASSWORD, or from [sites.default]).
    #[arg(long, global = true, value_name = "URL")]
    pub zvm: Option<String>,
    /// Ask only this configured site (repeatable), e.g. while another is down: a VM name is then
    /// resolved at these sites alone, and every answer says so. Commands that ask no ZVM ignore it.
    #[arg(long = "site", global = true, value_name = "NAME")]
    pub sites: Vec<String>,
    /// Print one JSON document on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// The configuration file (default: $XDG_CONFIG_HOME/zerto-ai-rewind/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log more to stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Log less to stderr (-q errors only, -qq nothing).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub quiet: u8,
}

impl GlobalArgs {
    /// The context of these global options, which every command starts from.
    pub fn context(&self) -> Context {
        Context {
            zvm: self.zvm.clone(),
            config_file: self.config.clone(),
            sites: self.sites.clone(),
            json: self.json,
            quiet: self.quiet > 0,
        }
    }
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find a VM (name, host name, IP address or vmIdentifier) and every VPG it is in.
    Find {
        /// The VM.
        vm: String,
    },
    /// Guard a VM before it is changed: a tagged checkpoint in every protecting VPG, each Zerto task
    /// read until it Completed and each checkpoint seen listed.
    Guard {
        /// The VM.
        vm: String,
        /// Who is about to change it, e.g. `claude-code` or your name.
        #[arg(long, env = "REWIND_AGENT")]
        agent: String,
        /// What is about to be done, e.g. "upgrade nginx".
        #[arg(long)]
        action: String,
        /// The change id that ties this change's tags together, e.g. `nginx-upgrade-2026-11-29`.
        #[arg(long = "change", value_name = "ID")]
        change_id: String,
    },
    /// List the tagged checkpoints of a VM in every VPG it is in, each with how long it stays
    /// recoverable or what became of it; or, with `--expiring`, the open changes whose way back
    /// ends soon.
    Tags {
        /// The VM.
        #[arg(required_unless_present = "expiring")]
        vm: Option<String>,
        /// Only the tags of this change: its change id, or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change_id: Option<String>,
        /// List the open changes (guarded, not said done) whose way back ends within this span
        /// (`30m`, `2h`, `1d`), from the journal alone; exit 3 when there is any, for cron and
        /// scripts.
        #[arg(long, value_name = "WITHIN", value_parser = span, conflicts_with_all = ["vm", "change_id"])]
        expiring: Option<chrono::Duration>,
    },
    /// Keep a change's tags past the journal: an Extended Journal Copy of each VPG's tagged
    /// checkpoint into its repository, so files can be recovered from it once the journal has lost
    /// the tag.
    Keep {
        /// The VM.
        vm: String,
        /// The change id of the guard, or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// Who keeps it (journaled; your own name when left out).
        #[arg(long, env = "REWIND_AGENT")]
        agent: Option<String>,
    },
    /// What the agent changed: the VM's files under the paths given, compared between the change's
    /// tagged checkpoint and a later checkpoint (the VPG's latest by default), each mounted in turn
    /// by FLR at the VPG's recovery site and unmounted, on errors and Ctrl-C too. Lists each file
    /// added, removed or changed (size and write time, at the tag and later); nothing is written to
    /// the VM.
    Diff {
        /// The VM.
        vm: String,
        /// The change id of the guard (its newest tag is used), or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// A guest path to compare, partition-rooted and `/`-separated (`sda1/etc/app`,
        /// `C:/ProgramData/App`); a folder is walked (bounded by `[diff]` max_entries and
        /// max_depth). Repeat for more; leave it out for every partition.
        #[arg(long = "path", value_name = "P")]
        paths: Vec<String>,
        /// Compare the tag with `latest` (the VPG's newest checkpoint: the VM as it is now, within
        /// the RPO) or with this checkpoint identifier of the same VPG.
        #[arg(long, value_name = "latest|CHECKPOINT", default_value = "latest")]
        against: String,
        /// Diff the tag in this VPG (name or identifier) instead of the one rewind prefers (a
        /// locally replicated VPG first).
        #[arg(long, value_name = "VPG")]
        vpg: Option<String>,
        /// Also show a unified diff of each changed text file up to `[diff]` content_max_bytes
        /// (binary files are said as binary). Downloads only the changed files, from both
        /// checkpoints: one more mount.
        #[arg(long)]
        content: bool,
    },
    /// Say that a change is good: it is closed, and `rewind tags --expiring` no longer lists it.
    Done {
        /// The change id.
        change_id: String,
    },
    /// Say whether a tool is read-only, mutating (guard first) or unknown (ask the human).
    CheckTool {
        /// The MCP server (`claude-code` for Claude Code's own tools).
        server: String,
        /// The tool.
        tool: String,
        /// The VM the call would act on, to name it in the answer.
        #[arg(long)]
        vm: Option<String>,
    },
    /// Show or change the tool catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// The calls held for a person's approval: those of the team server with `[hook.team]`, else
    /// this machine's (a stdio gateway's).
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Bounded recover from a change's tagged checkpoint: file-level recovery, failover test, offsite
    /// clone. The production VM keeps running; Failover Live and Move are never used.
    #[command(subcommand)]
    Recover(RecoverCommand),
    /// Rewind a VM to a change's tag by a journal VM restore, in two steps: `restore vm` restores
    /// it (beside it as a new VM, or in place) and waits; only `restore commit` keeps it, and
    /// `restore rollback` undoes it. Only from a VPG whose journal is at the VM's own site. Asks
    /// you at a terminal; a script confirms with `--yes`.
    #[command(subcommand)]
    Restore(RestoreCommand),
    /// Read the audit journal: every guard and recovery, oldest first. `rewind journal archive`
    /// moves old records to a file of their own.
    #[command(args_conflicts_with_subcommands = true)]
    Journal {
        #[command(subcommand)]
        command: Option<JournalCommand>,
        /// Read this journal file instead of the configured one: an archive, a copy from another
        /// machine.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// Only the records of this VM (name, host name, IP address or vmIdentifier).
        #[arg(long)]
        vm: Option<String>,
        /// Only the records of this change id.
        #[arg(long = "change", value_name = "ID")]
        change_id: Option<String>,
        /// Only the records a team server made for this signed-in person: their user name (any
        /// case) or their token subject.
        #[arg(long, value_name = "WHO")]
        person: Option<String>,
        /// Only records written since TIME: 2026-12-01T08:00:00Z, a day (2026-12-01), or a time ago
        /// (90m, 12h, 7d). Found by bisecting the journal, so a journal of years is not read whole.
        #[arg(long, value_name = "TIME", value_parser = rewind_core::audit_journal::since_of)]
        since: Option<chrono::DateTime<chrono::Utc>>,
        /// Only the last N matching records (1 or more; leave it out for all of them).
        #[arg(long, value_name = "N", value_parser = record_count)]
        last: Option<usize>,
        /// The records as a timeline: each change of each VM, oldest first, with who guarded it
        /// for whom and every step after (recoveries, restores, keeps, done).
        #[arg(long)]
        timeline: bool,
    },
    /// Show each configured ZVM: reachable, version, local site.
    Sites,
    /// Read the configured ZVMs' inventory (sites, hosts, datastores, VPGs with their status,
    /// history and RPO, VMs with OS, size, address and VPGs) into a world file `zvm-sim --world`
    /// serves. Nothing secret is read or written.
    Capture {
        /// Replace every name and address, consistently, so the file can be shared.
        #[arg(long)]
        anonymize: bool,
        /// Write the world to this new file (never over one that exists) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Compare the shape of a site's answers with a simulator serving its capture (`rewind capture`,
    /// `zvm-sim --world`): fields, types, casing, enum values, identifier formats; one line per
    /// difference.
    Parity {
        /// The appliance's site, as configured.
        site: String,
        /// The simulator's URL (it logs in with the simulator's own test client).
        #[arg(long, value_name = "URL")]
        against: String,
        /// Write the report to this new file, to attach to an issue.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Check everything a first run against a ZVM needs, site by site, and say the fix of each
    /// problem: reachable, TLS trusted, the credential, the version, what the account may read, each
    /// VPG, the recovery sites, the catalog, the journal and the hook. It only reads.
    Doctor,
    /// Show the TLS certificate a site presents and keep it as the site's ca_cert, on your yes or
    /// on the fingerprint a script gives; a certificate that changes later is refused.
    Trust {
        /// The site, as configured (`default` for ZVM_URL).
        site: String,
        /// The SHA-256 fingerprint expected (hex, colons optional): trust without asking, and only
        /// that certificate.
        #[arg(long, value_name = "SHA256")]
        fingerprint: Option<String>,
        /// Replace a certificate kept earlier (the appliance's was renewed).
        #[arg(long)]
        replace: bool,
    },
    /// Walk the whole rewind loop on a simulated ZVM started in this process: no configuration, no
    /// network, well under a minute.
    #[cfg(feature = "demo")]
    Demo {
        /// The simulator's seed (identifiers and timings follow from it).
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Agent-host hooks.
    #[command(subcommand)]
    Hook(HookCommand),
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `rewind journal ...`.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Move the records written before TIME to the end of an archive file, so a journal that grows
    /// for years stays small. Guards wait meanwhile and append to the journal that is left; records
    /// the guard and the hook still read (the change-id horizon, the hook window) are refused.
    Archive {
        /// Records written before TIME move: 2026-06-01T00:00:00Z, a day (2026-06-01), or a time ago
        /// (90d).
        #[arg(long, value_name = "TIME", value_parser = rewind_core::audit_journal::since_of)]
        before: chrono::DateTime<chrono::Utc>,
        /// The archive, a JSON-lines file they are appended to (made, readable by you only, when
        /// missing); `rewind journal --file FILE` reads it. Default: `journal-until-<day>.jsonl`
        /// beside the journal.
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
    },
    /// Write every line of the journal, oldest first, as JSON lines (the format of a journal file
    /// and of an archive): to move a team's journal out of its database, or to keep a copy.
    Export {
        /// Write to this new file (never over one that exists, readable by you only) instead of
        /// stdout. A journal file of its own: `rewind journal --file FILE` reads it.
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
    },
    /// Append the lines of a journal file, an archive or an export that the journal does not hold
    /// yet: to move a team's file journal into its database. Importing twice adds nothing; a
    /// journal file takes an import only while it is empty.
    Import {
        /// The JSON-lines file to read.
        #[arg(long = "from", value_name = "FILE")]
        from: PathBuf,
    },
}

/// `rewind catalog ...`.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// List every entry, built-in read-only ones included.
    List,
    /// Mark a tool as mutating: a call must be preceded by a guard of the VM it changes.
    AddMutating {
        /// The MCP server (`claude-code` for Claude Code's own tools).
        server: String,
        /// The tool, or `*` for every tool of the server.
        tool: String,
        /// The tool argument that names the VM (a dotted path for nested arguments), read by the hook.
        #[arg(long, value_name = "ARG")]
        vm_arg: Option<String>,
    },
    /// Mark a tool as read-only: it does not change a guest.
    AddReadOnly {
        /// The MCP server.
        server: String,
        /// The tool, or `*` for every tool of the server.
        tool: String,
    },
    /// Remove a tool's entry; it becomes unknown again.
    Remove {
        /// The MCP server.
        server: String,
        /// The tool.
        tool: String,
    },
}

/// `rewind approvals ...`.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List the held calls, those still waiting first.
    List,
    /// Show one held call, its arguments included.
    Show {
        /// The held call's id (`h-...`).
        id: String,
    },
    /// Approve a held call: the requester's identical call, made again, runs once.
    Approve {
        /// The held call's id.
        id: String,
        /// What to tell the agent.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Deny a held call; the comment reaches the agent.
    Deny {
        /// The held call's id.
        id: String,
        /// Why, for the agent.
        #[arg(long)]
        comment: Option<String>,
    },
}

/// `rewind restore ...`.
#[derive(Debug, Subcommand)]
pub enum RestoreCommand {
    /// Restore the VM from the change's tagged checkpoint: `--as NAME` as a new VM beside it (the
    /// VM keeps running as it is), or `--in-place` (its writes after the tag are lost once
    /// committed). It then waits for `restore commit` or `restore rollback`; nobody committing it
    /// rolls it back by itself after `[recover] restore_wait_secs`.
    Vm {
        /// The VM.
        vm: String,
        /// The change id of the guard (its newest tag is used), or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// Restore it as a new VM of this name, beside the VM.
        #[arg(
            long = "as",
            value_name = "NAME",
            conflicts_with = "in_place",
            required_unless_present = "in_place"
        )]
        as_name: Option<String>,
        /// Restore the VM itself to the tag.
        #[arg(long)]
        in_place: bool,
        /// Restore from the tag in this VPG (name or identifier) instead of the one rewind prefers.
        #[arg(long, value_name = "VPG")]
        vpg: Option<String>,
        /// Who restores, journaled beside you (the person at this machine): an agent's name, or
        /// yours when left out.
        #[arg(long, env = "REWIND_AGENT")]
        agent: Option<String>,
        /// Confirm without a terminal: the change id again, exactly as `--change`.
        #[arg(long, value_name = "CHANGE_ID")]
        yes: Option<String>,
    },
    /// Keep what the VM's waiting restore restored.
    Commit {
        /// The VM.
        vm: String,
        /// Confirm without a terminal: the VM again, exactly as given.
        #[arg(long, value_name = "VM")]
        yes: Option<String>,
        /// Who commits, journaled beside you.
        #[arg(long, env = "REWIND_AGENT")]
        agent: Option<String>,
    },
    /// Undo the VM's waiting restore: the VM as it was before it, or the new VM removed.
    Rollback {
        /// The VM.
        vm: String,
        /// Confirm without a terminal: the VM again, exactly as given.
        #[arg(long, value_name = "VM")]
        yes: Option<String>,
        /// Who rolls back, journaled beside you.
        #[arg(long, env = "REWIND_AGENT")]
        agent: Option<String>,
    },
    /// The restores this machine journaled that wait for a commit or a rollback, with their
    /// task's state at Zerto and when each rolls back by itself.
    Status,
}

/// `rewind recover ...`.
#[derive(Debug, Subcommand)]
pub enum RecoverCommand {
    /// Pull files back from the tagged checkpoint (FLR at the VPG's recovery site) into a local folder;
    /// the VM keeps running.
    File {
        // The VM, who recovers, and from which VPG's tag.
        #[command(flatten)]
        from: RecoverFrom,
        /// The change id of the guard (its newest tag is used), or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// A guest path, partition-rooted and `/`-separated (`sda1/etc/app/app.conf`,
        /// `C:/ProgramData/App/app.ini`); a folder is recovered whole. Repeat for more.
        #[arg(long = "path", value_name = "P", required = true, num_args = 1..)]
        paths: Vec<String>,
        /// The local folder to write into (created when missing); each file lands under its guest
        /// path.
        #[arg(long = "to", value_name = "DIR")]
        to: PathBuf,
        /// Replace files that already exist in the folder.
        #[arg(long)]
        overwrite: bool,
        /// Write nothing: say what would be written where, with each file's size and write time at
        /// the tag and now (the VPG's latest checkpoint), and print a plan id for `--plan`.
        #[arg(long, conflicts_with = "plan")]
        dry_run: bool,
        /// Run only the recovery a `--dry-run` printed this plan id for: refused, naming what
        /// differs, when the tag or the files changed since.
        #[arg(long, value_name = "ID")]
        plan: Option<String>,
    },
    /// Start or stop a failover test of the VM at the tagged checkpoint.
    Test {
        // The VM, who recovers, and from which VPG's tag.
        #[command(flatten)]
        from: RecoverFrom,
        /// The change id of the guard, or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// Start or stop.
        #[command(subcommand)]
        action: TestAction,
    },
    /// Start or abort an offsite clone of the VM at the tagged checkpoint.
    Clone {
        // The VM, who recovers, and from which VPG's tag.
        #[command(flatten)]
        from: RecoverFrom,
        /// The change id of the guard, or a tag exactly.
        #[arg(long = "change", value_name = "ID")]
        change: String,
        /// Start or abort.
        action: CloneActionArg,
    },
}

/// What every recover command takes first: the VM, who recovers, and from which VPG's tag.
#[derive(Debug, Args)]
pub struct RecoverFrom {
    /// The VM.
    pub vm: String,
    /// Who recovers, journaled beside you (the person at this machine): an agent's name, or
    /// yours when left out.
    #[arg(long, env = "REWIND_AGENT")]
    pub agent: Option<String>,
    /// Recover from the tag in this VPG (name or identifier) instead of the one rewind
    /// prefers (a locally replicated VPG first).
    #[arg(long, value_name = "VPG")]
    pub vpg: Option<String>,
}

/// `rewind recover test ... start|stop`.
#[derive(Debug, Subcommand)]
pub enum TestAction {
    /// Start the failover test.
    Start,
    /// Stop the running failover test, recording whether it passed.
    // One of the two is required, and clap names both when neither is given.
    #[command(group(clap::ArgGroup::new("outcome").required(true).args(["passed", "failed"])))]
    Stop {
        /// The test passed.
        #[arg(long)]
        passed: bool,
        /// The test failed.
        #[arg(long)]
        failed: bool,
        /// What the tester found.
        #[arg(long, default_value = "")]
        summary: String,
    },
}

/// `rewind recover clone ... start|abort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CloneActionArg {
    /// Start the offsite clone.
    Start,
    /// Abort the clone running for the VM.
    Abort,
}

/// `rewind hook ...`.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// The pre-tool hook of an agent host (Claude Code, VS Code, Copilot CLI, Codex, Gemini CLI,
    /// Cursor): reads the host's JSON on stdin, answers allow, deny or ask in that host's own shape.
    /// Reads only the tool catalog and the audit journal; never calls a ZVM.
    PreToolUse {
        /// The host that runs the hook, when its input alone cannot tell (it usually can).
        #[arg(long, value_enum)]
        host: Option<crate::hook::Host>,
    },
    /// Write the hook into an agent host's settings (merged into what the file holds), or print it.
    Install {
        /// The agent host.
        #[arg(long, value_enum)]
        host: crate::hook::Host,
        /// The user's own settings (every project), or the current folder's.
        #[arg(long, value_enum, default_value = "user")]
        scope: crate::hook::install::Scope,
        /// Print the entry and the file it belongs in; change nothing.
        #[arg(long)]
        print: bool,
        /// The program the host runs (this rewind, by its absolute path, unless given).
        #[arg(long, value_name = "PROGRAM")]
        program: Option<String>,
    },
}

impl Command {
    /// The command's name as the `--json` envelope gives it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Find { .. } => "find",
            Command::Guard { .. } => "guard",
            Command::Tags { expiring: None, .. } => "tags",
            Command::Tags { .. } => "tags --expiring",
            Command::Done { .. } => "done",
            Command::Diff { .. } => "diff",
            Command::Keep { .. } => "keep",
            Command::CheckTool { .. } => "check-tool",
            Command::Approvals(ApprovalsCommand::List) => "approvals list",
            Command::Approvals(ApprovalsCommand::Show { .. }) => "approvals show",
            Command::Approvals(ApprovalsCommand::Approve { .. }) => "approvals approve",
            Command::Approvals(ApprovalsCommand::Deny { .. }) => "approvals deny",
            Command::Catalog(CatalogCommand::List) => "catalog list",
            Command::Catalog(CatalogCommand::AddMutating { .. }) => "catalog add-mutating",
            Command::Catalog(CatalogCommand::AddReadOnly { .. }) => "catalog add-read-only",
            Command::Catalog(CatalogCommand::Remove { .. }) => "catalog remove",
            Command::Recover(RecoverCommand::File { dry_run: true, .. }) => {
                "recover file --dry-run"
            }
            Command::Recover(RecoverCommand::File { .. }) => "recover file",
            Command::Recover(RecoverCommand::Test { .. }) => "recover test",
            Command::Restore(RestoreCommand::Vm { .. }) => "restore vm",
            Command::Restore(RestoreCommand::Commit { .. }) => "restore commit",
            Command::Restore(RestoreCommand::Rollback { .. }) => "restore rollback",
            Command::Restore(RestoreCommand::Status) => "restore status",
            Command::Recover(RecoverCommand::Clone { .. }) => "recover clone",
            Command::Journal {
                command: Some(JournalCommand::Archive { .. }),
                ..
            } => "journal archive",
            Command::Journal {
                command: Some(JournalCommand::Export { .. }),
                ..
            } => "journal export",
            Command::Journal {
                command: Some(JournalCommand::Import { .. }),
                ..
            } => "journal import",
            Command::Journal { timeline: true, .. } => "journal --timeline",
            Command::Journal { .. } => "journal",
            Command::Sites => "sites",
            Command::Trust { .. } => "trust",
            Command::Doctor => "doctor",
            Command::Capture { .. } => "capture",
            Command::Parity { .. } => "parity",
            #[cfg(feature = "demo")]
            Command::Demo { .. } => "demo",
            Command::Hook(HookCommand::PreToolUse { .. }) => "hook pre-tool-use",
            Command::Hook(HookCommand::Install { .. }) => "hook install",
            Command::Completions { .. } => "completions",
        }
    }
}

/// `--last N`: a number of records, at least one (`--last 0` would print nothing and look like an
/// empty journal).
fn record_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err(
            "0 records would show nothing; give 1 or more, or leave --last out for every record"
                .into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{text:?} is not a number of records; give a whole number from 1"
        )),
    }
}

/// A span as `--expiring` takes it: `30m`, `2h`, `1d`, `1h30m`.
fn span(text: &str) -> Result<chrono::Duration, String> {
    rewind_core::way_back::parse_span(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
