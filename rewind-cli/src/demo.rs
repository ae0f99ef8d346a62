//! `rewind demo`: the whole rewind loop on a simulated ZVM started in this process, with short
//! narration. It needs no configuration and no network: the simulator listens on loopback ports the
//! system picks, and the configuration, the catalog and the journal live in a temporary folder that is
//! removed at the end, so the user's own files are never touched.
//!
//! This is the only place a front links `zvm-sim`. The demo talks to it as any client would: the core
//! over `/v1`, and the simulator's `/_sim` control API (over HTTP, with its own JSON) to change a guest
//! file as the agent would, and to move its clock past the next checkpoint as time passing would.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use rewind_core::{
    CancellationToken, Config, DiffReport, DiffRequest, ErrorKind, GuardReport, GuardRequest,
    JournalFilter, Protection, RecoverFileReport, RecoverFileRequest, RecoveryTaskReport,
    RestoreRequest, RestoreTarget, Rewind, SiteConfig, TagList, Verdict,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::commands::journal::journal_text;
use crate::commands::protection::{guard_text, protection_text, tags_text};
use crate::commands::recover::file_text;
use crate::exit::CliError;
use crate::output::{self, Reply, Table};
use crate::progress::ProgressLine;

/// The VM the demo guards: in three VPGs of the default world (one locally replicated, two to Denver).
const VM: &str = "web-01";
/// The guest file the agent changes.
const GUEST_FILE: &str = "sda1/etc/app/app.conf";
/// The change id of the demo's change.
const CHANGE_ID: &str = "demo-app-conf";
/// The new VM the demo's restore makes beside the original.
const RESTORED_AS: &str = "web-01-rewound";
/// How far the demo moves the simulator's clock after the change: past its next automatic
/// checkpoint (one every 5 s), which then holds the change.
const PAST_NEXT_CHECKPOINT_SECS: u64 = 10;
/// The simulator's service client (its default world's).
const CLIENT_ID: &str = "rewind";
const CLIENT_SECRET: &str = "rewind-secret";
/// Zerto tasks of the demo run this long: long enough to watch the progress line, short enough that
/// the whole demo takes seconds.
const TASK_DURATION: Duration = Duration::from_millis(800);
const LISTING_LAG: Duration = Duration::from_millis(200);

/// The sha256 of the guest file at each point of the loop.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Checksums {
    /// Before the change (read from the guest).
    original: String,
    /// After the change (read from the guest, which keeps the change).
    changed: String,
    /// As recovered from the tagged checkpoint into the local folder.
    recovered: String,
}

/// What `rewind demo --json` prints as its result.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct DemoResult {
    seed: u64,
    /// Each simulated site's URL (they are gone when the demo ends).
    sites: Vec<DemoSite>,
    vm: &'static str,
    change_id: &'static str,
    guest_file: &'static str,
    protection: Protection,
    guard: GuardReport,
    tags: TagList,
    diff: DiffReport,
    recovery: RecoverFileReport,
    checksums: Checksums,
    restore: RecoveryTaskReport,
    journal: rewind_core::audit_journal::JournalRead,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct DemoSite {
    name: String,
    url: String,
}

/// Narration: printed as the demo goes, for people; silent with `--json`, where only the final
/// document is printed. A reader that goes away only stops the narration.
struct Narrator {
    json: bool,
}

impl Narrator {
    fn say(&self, text: &str) {
        if !self.json {
            let _ = output::write_stdout(text);
        }
    }

    fn step(&self, n: u32, title: &str) {
        self.say(&format!("\n== {n}. {title}\n"));
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn internal(what: &str) -> impl Fn(reqwest::Error) -> CliError + '_ {
    move |e| {
        CliError::new(
            ErrorKind::Internal,
            format!("the demo could not {what}: {e}"),
        )
    }
}

/// The simulator's control API, as the agent's own tools would reach the guest.
struct Guest {
    http: reqwest::Client,
    base: String,
}

impl Guest {
    /// Moves the simulator's clock on `seconds`, as time passing would.
    async fn advance_clock(&self, seconds: u64) -> Result<(), CliError> {
        let what = "move the simulator's clock on";
        self.http
            .post(format!("{}/_sim/clock/advance", self.base))
            .json(&serde_json::json!({ "Seconds": seconds }))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(internal(what))?;
        Ok(())
    }

    fn file_url(&self, vm_id: &str) -> String {
        format!("{}/_sim/vms/{vm_id}/files", self.base)
    }

    async fn read(&self, vm_id: &str, path: &str) -> Result<Vec<u8>, CliError> {
        let what = format!("read {path} of {vm_id} from the simulator");
        let resp = self
            .http
            .get(self.file_url(vm_id))
            .query(&[("path", path)])
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(internal(&what))?;
        Ok(resp.bytes().await.map_err(internal(&what))?.to_vec())
    }

    async fn write(&self, vm_id: &str, path: &str, content: Vec<u8>) -> Result<(), CliError> {
        let what = format!("write {path} of {vm_id} in the simulator");
        self.http
            .put(self.file_url(vm_id))
            .query(&[("path", path)])
            .body(content)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(internal(&what))?;
        Ok(())
    }
}

/// Runs the demo. Human narration goes to stdout as it happens; the returned reply closes it (and is
/// the whole `--json` document).
pub async fn demo(seed: u64, json: bool, quiet: bool) -> Result<Reply, CliError> {
    let say = Narrator { json };
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let sim = zvm_sim::start(zvm_sim::Options {
        listen: loopback,
        peer_listen: loopback,
        seed,
        task_duration: TASK_DURATION,
        listing_lag: LISTING_LAG,
        ..zvm_sim::Options::default()
    })
    .await
    .map_err(|e| {
        CliError::new(
            ErrorKind::Internal,
            format!("the demo could not start its simulated ZVM: {e}"),
        )
    })?;
    let dir = tempfile::tempdir().map_err(|e| {
        CliError::new(
            ErrorKind::Internal,
            format!("the demo could not make a temporary folder: {e}"),
        )
    })?;
    let result = walk(&sim, dir.path(), seed, &say, quiet).await;
    sim.shutdown().await;
    result
}

async fn walk(
    sim: &zvm_sim::Simulator,
    dir: &Path,
    seed: u64,
    say: &Narrator,
    quiet: bool,
) -> Result<Reply, CliError> {
    let (boston, denver) = (sim.local(), sim.peer());
    say.say(&format!(
        "rewind demo: a simulated ZVM in this process (zvm-sim, seed {seed}), two paired sites:\n  {} at {}\n  {} at {}\nThe configuration, tool catalog and audit journal are in a temporary folder, removed at the end.",
        boston.name, boston.url, denver.name, denver.url
    ));
    let walk = Walk::connect(sim, dir, seed, say, quiet).await?;
    let protection = walk.find_protection().await?;
    let guard = walk.guard().await?;
    let tags = walk.list_tags().await?;
    let change = walk.change_guest_file(&protection.vm.id).await?;
    let diff = walk.diff().await?;
    let (recovery, recovered) = walk.recover_file().await?;
    let checksums = walk.compare(&change, &recovered)?;
    let restore = walk.restore_beside().await?;
    let journal = walk.read_journal()?;
    let result = DemoResult {
        seed,
        sites: [boston, denver]
            .iter()
            .map(|s| DemoSite {
                name: s.name.clone(),
                url: s.url.clone(),
            })
            .collect(),
        vm: VM,
        change_id: CHANGE_ID,
        guest_file: GUEST_FILE,
        protection,
        guard,
        tags,
        diff,
        recovery,
        checksums,
        restore,
        journal,
    };
    Reply::new(
        &result,
        format!(
            "\nDone: {VM} was guarded before the change, the change was made and listed by a diff, {GUEST_FILE} came back from the tag byte for byte while the VM kept running, and a restore of {VM} beside it as {RESTORED_AS} waits for a person's commit or rollback (a demo never commits one). To run the same loop on your own ZVM, see `rewind --help`."
        ),
    )
}

/// One walk through the loop: the client connected to both simulated sites, and what each stage
/// needs to narrate and to report a failure with the seed that replays it.
struct Walk<'a> {
    rewind: Rewind,
    guest: Guest,
    dir: &'a Path,
    seed: u64,
    say: &'a Narrator,
    quiet: bool,
}

/// The guest file before and after the agent's change, both read from the guest.
struct Change {
    original: Vec<u8>,
    changed: Vec<u8>,
}

impl<'a> Walk<'a> {
    /// Connects to both sites of `sim` with the simulator's service client, configured in `dir`.
    async fn connect(
        sim: &zvm_sim::Simulator,
        dir: &'a Path,
        seed: u64,
        say: &'a Narrator,
        quiet: bool,
    ) -> Result<Walk<'a>, CliError> {
        let (boston, denver) = (sim.local(), sim.peer());
        let site = |name, url: &str| SiteConfig::with_client(name, url, CLIENT_ID, CLIENT_SECRET);
        let config = Config {
            sites: vec![site("boston", &boston.url)?, site("denver", &denver.url)?],
            ..Config::new(dir.join("catalog.toml"), dir.join("journal.jsonl"))
        };
        Ok(Walk {
            rewind: Rewind::connect(config).await?,
            guest: Guest {
                http: reqwest::Client::new(),
                base: boston.url.clone(),
            },
            dir,
            seed,
            say,
            quiet,
        })
    }

    /// Step 1: find protection.
    async fn find_protection(&self) -> Result<Protection, CliError> {
        self.say
            .step(1, &format!("Find {VM}: every VPG it is in, at both sites"));
        let protection = self.rewind.find_protection(VM).await?;
        self.say.say(&protection_text(&protection));
        Ok(protection)
    }

    /// Step 2: guard, which in the default world must end guarded.
    async fn guard(&self) -> Result<GuardReport, CliError> {
        self.say.step(
            2,
            &format!(
                "Guard {VM} before the agent changes it: one tagged checkpoint in every protecting VPG, each Zerto task read until it Completed, each checkpoint seen listed"
            ),
        );
        let progress = ProgressLine::new(format!("guard {VM}"), self.quiet);
        let guard = self
            .rewind
            .guard(
                GuardRequest {
                    vm: VM.into(),
                    agent: "demo-agent".into(),
                    action: format!("edit {GUEST_FILE}"),
                    change_id: CHANGE_ID.into(),
                },
                &progress,
            )
            .await;
        progress.finish();
        let guard = guard?;
        self.say.say(&guard_text(&guard));
        if guard.verdict != Verdict::Guarded {
            return Err(CliError::new(
                ErrorKind::Internal,
                format!(
                    "the demo's guard of {VM} ended {:?} instead of guarded, which the default world should never do; please report it with seed {}",
                    guard.verdict, self.seed
                ),
            ));
        }
        Ok(guard)
    }

    /// Step 3: the tagged checkpoints the guard left.
    async fn list_tags(&self) -> Result<TagList, CliError> {
        self.say
            .step(3, &format!("The tagged checkpoints of change {CHANGE_ID}"));
        let tags = self.rewind.list_tags(VM, Some(CHANGE_ID)).await?;
        self.say.say(&tags_text(&tags));
        Ok(tags)
    }

    /// Step 4: the agent's change, a broken setting appended to the guest file.
    async fn change_guest_file(&self, vm_id: &str) -> Result<Change, CliError> {
        self.say.step(
            4,
            &format!(
                "The agent changes {GUEST_FILE} on {VM} (through the simulator's guest files)"
            ),
        );
        let original = self.guest.read(vm_id, GUEST_FILE).await?;
        let mut edited = original.clone();
        edited.extend_from_slice(
            b"\n# changed by demo-agent: a setting that breaks the app\nmax_connections = 0\n",
        );
        self.guest.write(vm_id, GUEST_FILE, edited).await?;
        let changed = self.guest.read(vm_id, GUEST_FILE).await?;
        self.say.say(&format!(
            "{GUEST_FILE} was {} bytes and is now {} bytes: the app is broken.",
            original.len(),
            changed.len()
        ));
        Ok(Change { original, changed })
    }

    /// Step 5: the simulator's clock past its next checkpoint, then what changed in the guest's
    /// folder between the tag and that checkpoint (each mounted by FLR in turn and unmounted).
    async fn diff(&self) -> Result<DiffReport, CliError> {
        self.say.step(
            5,
            &format!("What changed since the tag, once Zerto's next checkpoint holds the change ({PAST_NEXT_CHECKPOINT_SECS} s of the simulator's clock later)"),
        );
        self.guest.advance_clock(PAST_NEXT_CHECKPOINT_SECS).await?;
        let folder = GUEST_FILE
            .rsplit_once('/')
            .map_or(GUEST_FILE, |(dir, _)| dir);
        let request = DiffRequest {
            vm: VM.into(),
            change: CHANGE_ID.into(),
            paths: vec![folder.into()],
            against: None,
            content: false,
        };
        let progress = ProgressLine::new(format!("diff {VM}"), self.quiet);
        let diff = self
            .rewind
            .diff(request, &progress, &CancellationToken::new())
            .await;
        progress.finish();
        let diff = diff?;
        self.say.say(&crate::commands::diff::text(&diff));
        Ok(diff)
    }

    /// Step 8: a journal VM restore from the tag, beside the VM, left waiting for a person.
    async fn restore_beside(&self) -> Result<RecoveryTaskReport, CliError> {
        self.say.step(
            8,
            &format!("Restore {VM} to the tag beside it, as a new VM {RESTORED_AS}: it waits for a person"),
        );
        let request = RestoreRequest {
            vm: VM.into(),
            change: CHANGE_ID.into(),
            target: RestoreTarget::Alongside {
                name: RESTORED_AS.into(),
            },
        };
        let progress = ProgressLine::new(format!("restore {VM}"), self.quiet);
        let restore = self.rewind.restore_vm(request, &progress).await;
        progress.finish();
        let restore = restore?;
        self.say.say(&format!(
            "{}\nOnly a person ends it: `rewind restore commit {VM}` keeps {RESTORED_AS}, `rewind restore rollback {VM}` removes it. The demo never commits one.",
            restore.summary()
        ));
        Ok(restore)
    }

    /// Step 6: bounded recover of the guest file by FLR, into the temporary folder; with the
    /// recovered file's content.
    async fn recover_file(&self) -> Result<(RecoverFileReport, Vec<u8>), CliError> {
        self.say.step(
            6,
            &format!(
                "Recover {GUEST_FILE} from the tag of change {CHANGE_ID}: file-level recovery at the VPG's recovery site, while {VM} keeps running"
            ),
        );
        let progress = ProgressLine::new(format!("recover file {VM}"), self.quiet);
        let recovery = self
            .rewind
            .recover_file(
                RecoverFileRequest {
                    vm: VM.into(),
                    change: CHANGE_ID.into(),
                    paths: vec![GUEST_FILE.into()],
                    destination: self.dir.join("recovered"),
                    overwrite: false,
                    plan: None,
                },
                &progress,
            )
            .await;
        progress.finish();
        let recovery = recovery?;
        self.say.say(&file_text(&recovery));
        let recovered = self.read_recovered(&recovery)?;
        Ok((recovery, recovered))
    }

    /// The content of the file the recovery wrote.
    fn read_recovered(&self, recovery: &RecoverFileReport) -> Result<Vec<u8>, CliError> {
        let recovered_path = recovery
            .files
            .first()
            .map(|f| f.path.clone())
            .ok_or_else(|| {
                CliError::new(
                    ErrorKind::Internal,
                    format!(
                        "the demo's recovery of {GUEST_FILE} wrote no file; please report it with seed {}",
                        self.seed
                    ),
                )
            })?;
        std::fs::read(&recovered_path).map_err(|e| {
            CliError::new(
                ErrorKind::Internal,
                format!(
                    "the demo cannot read the recovered {}: {e}",
                    recovered_path.display()
                ),
            )
        })
    }

    /// Step 6: the recovered file must be the original, and the guest must still have the change.
    fn compare(&self, change: &Change, recovered: &[u8]) -> Result<Checksums, CliError> {
        self.say.step(
            7,
            "Compare: the recovered file is the original, the guest keeps the change",
        );
        let checksums = Checksums {
            original: sha256(&change.original),
            changed: sha256(&change.changed),
            recovered: sha256(recovered),
        };
        self.say.say(&checksums.table());
        if checksums.recovered != checksums.original || checksums.changed == checksums.original {
            return Err(CliError::new(
                ErrorKind::Internal,
                format!(
                    "the demo's checksums are wrong (original {}, changed {}, recovered {}); please report it with seed {}",
                    checksums.original, checksums.changed, checksums.recovered, self.seed
                ),
            ));
        }
        Ok(checksums)
    }

    /// Step 7: the audit journal, where the guard and the recovery share the change id.
    fn read_journal(&self) -> Result<rewind_core::audit_journal::JournalRead, CliError> {
        self.say.step(
            9,
            "The audit journal: the guard, the recovery and the restore, tied by the change id",
        );
        let journal = self.rewind.journal().read(&JournalFilter::default())?;
        self.say.say(&journal_text(&journal));
        Ok(journal)
    }
}

impl Checksums {
    /// The three checksums side by side, each later one said to match the original or not.
    fn table(&self) -> String {
        let same = |sum: &str| {
            if sum == self.original {
                "same as the original"
            } else {
                "differs from the original"
            }
        };
        let mut t = Table::new(&["FILE", "SHA256", ""]);
        t.row(vec![
            "original".into(),
            self.original.clone(),
            String::new(),
        ]);
        t.row(vec![
            "changed (on the guest now)".into(),
            self.changed.clone(),
            same(&self.changed).into(),
        ]);
        t.row(vec![
            "recovered from the tag".into(),
            self.recovered.clone(),
            same(&self.recovered).into(),
        ]);
        t.render()
    }
}
