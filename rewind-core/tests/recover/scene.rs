//! The recovery tests' kit: a scene (a simulator with one VM guarded, and a folder to recover into),
//! the calls a test sends through it, and what it reads back from the simulator and the journal.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rewind_core::audit_journal::{JournalFilter, JournalRecord, RecordKind};
use rewind_core::{
    CloneAction, FailoverTestAction, NoProgress, RecoverFileReport, RecoverFileRequest,
    RecoveryNote, RecoveryRefusal, RecoveryTaskReport, RecoveryVerdict, Rewind, RewindError,
};
use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;

use crate::common::{TestEnv, guarded};

/// The guest file most recovery tests recover.
pub const APP_CONF: &str = "sda1/etc/app/app.conf";

/// An FLR session's downloads, as a fault rule names them.
pub const DOWNLOADS: &str = "/v1/flrs/*/downloads/*";

/// A recovery test's stage: a fresh simulator with `vm` guarded for `change`, its call log emptied
/// so that a test sees only what came after the guard, and the folder to recover into (not made
/// yet).
pub struct Scene {
    pub env: TestEnv,
    pub vm: &'static str,
    pub change: &'static str,
    pub out: PathBuf,
}

/// What a scene's failover test or clone action comes to.
pub type TaskOutcome = Result<RecoveryTaskReport, RewindError>;

impl Scene {
    /// The scene in a simulator of `seed` with Boston configured.
    pub async fn guarded(seed: u64, vm: &'static str, change: &'static str) -> Scene {
        Scene::guarded_in(TestEnv::start(seed).await, vm, change).await
    }

    /// The scene in `env`, which the test set up before the guard.
    pub async fn guarded_in(env: TestEnv, vm: &'static str, change: &'static str) -> Scene {
        guarded(&env.rewind, vm, change).await;
        env.control.clear_calls().await;
        let out = env.dir.path().join("recovered");
        Scene {
            env,
            vm,
            change,
            out,
        }
    }

    /// The request to recover `paths` of the VM at the change's tag into the folder.
    pub fn request(&self, paths: &[&str]) -> RecoverFileRequest {
        request(self.vm, self.change, paths, &self.out)
    }

    /// Recovers `paths` as [`Scene::request`] says, through the scene's Rewind.
    pub async fn recover(&self, paths: &[&str]) -> Result<RecoverFileReport, RewindError> {
        recover_file(&self.env.rewind, self.request(paths)).await
    }

    /// What a recovery wrote for guest path `path` in the folder.
    pub fn recovered(&self, path: &str) -> Vec<u8> {
        std::fs::read(self.out.join(path)).unwrap()
    }

    /// Guest file `path` of the VM as the simulator holds it now.
    pub async fn guest_file(&self, path: &str) -> Vec<u8> {
        self.env.control.file(self.vm, path).await
    }

    /// Changes guest file `path` of the VM to `bytes`, as an agent would, and gives back what it
    /// held before.
    pub async fn replace_guest_file(&self, path: &str, bytes: &[u8]) -> Vec<u8> {
        let before = self.guest_file(path).await;
        self.env.control.put_file(self.vm, path, bytes).await;
        before
    }

    /// Starts or stops a failover test of the VM at the change's tag.
    pub async fn failover_test(&self, action: FailoverTestAction) -> TaskOutcome {
        let (rewind, vm, change) = (&self.env.rewind, self.vm, self.change);
        rewind.failover_test(vm, change, action, &NoProgress).await
    }

    /// Starts or aborts a clone of the VM at the change's tag.
    pub async fn offsite_clone(&self, action: CloneAction) -> TaskOutcome {
        let (rewind, vm, change) = (&self.env.rewind, self.vm, self.change);
        rewind.offsite_clone(vm, change, action, &NoProgress).await
    }

    /// Makes the simulator's tasks take a minute from now on, and gives a Rewind that waits one
    /// second for a task.
    pub async fn impatient(&self) -> Rewind {
        self.env.control.timing(60_000, 20).await;
        self.env.rewind_with(|mut c| {
            c.guard.deadline = Duration::from_secs(1);
            c.recover.wait_floor = Duration::from_secs(1);
            c
        })
    }
}

/// The request to recover `paths` of `vm` at the tag of `change` into `destination`.
pub fn request(vm: &str, change: &str, paths: &[&str], destination: &Path) -> RecoverFileRequest {
    RecoverFileRequest {
        vm: vm.into(),
        change: change.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        destination: destination.to_path_buf(),
        overwrite: false,
        plan: None,
    }
}

/// Sends `req` through `rewind`, showing no progress.
pub async fn recover_file(
    rewind: &Rewind,
    req: RecoverFileRequest,
) -> Result<RecoverFileReport, RewindError> {
    rewind.recover_file(req, &NoProgress).await
}

/// The SHA-256 of `bytes` in hex, as a report gives it.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Every file under `dir`, relative, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Sets a fault rule: the next `method` call to `path` meets `action`, once.
pub async fn fault_once(
    env: &TestEnv,
    method: &str,
    path: &str,
    action: &str,
) -> serde_json::Value {
    env.control
        .fault(serde_json::json!({
            "Method": method, "Path": path, "Action": action, "Count": 1
        }))
        .await
}

/// A fault rule: the `method` calls to `path` are answered `status`, with a ZVM's error body saying
/// `message`.
pub fn answered(method: &str, path: &str, status: u16, message: &str) -> serde_json::Value {
    serde_json::json!({
        "Method": method, "Path": path, "Action": "Respond", "Status": status,
        "Body": {"Message": message}
    })
}

/// How many of the FLR calls the simulator logged `which` picks, by method, path and status.
pub async fn flr_calls(env: &TestEnv, which: impl Fn(&str, &str, i64) -> bool) -> usize {
    let calls = env.control.calls_to("/v1/flrs").await;
    calls.iter().filter(|(_, m, p, s)| which(m, p, *s)).count()
}

/// The statuses of the unmounts (`DELETE /v1/flrs/{id}`) the simulator logged, oldest first.
pub async fn unmounts(env: &TestEnv) -> Vec<i64> {
    let calls = env.control.calls_to("/v1/flrs/").await;
    let deletes = calls.into_iter().filter(|(_, m, ..)| m == "DELETE");
    deletes.map(|(.., status)| status).collect()
}

/// The first error of a recovery that failed after its mount, whose session was unmounted and
/// which says so.
pub fn unmounted_after(err: &RewindError) -> &RewindError {
    let RewindError::FlrAborted {
        error, unmounted, ..
    } = err
    else {
        panic!("{err:?}");
    };
    assert!(*unmounted, "{err}");
    assert!(err.to_string().contains("was unmounted"), "{err}");
    error
}

/// How many tasks of `kind` are in progress at either site.
pub async fn running_tasks(env: &TestEnv, kind: &str) -> usize {
    env.control
        .tasks()
        .await
        .iter()
        .filter(|t| t["Type"] == kind && crate::common::state_of(t) == 1)
        .count()
}

/// The state of the newest `FlrJournalUnmount` task.
pub async fn newest_unmount_state(env: &TestEnv) -> Option<i64> {
    env.control
        .tasks()
        .await
        .iter()
        .rev()
        .find(|t| t["Type"] == "FlrJournalUnmount")
        .map(crate::common::state_of)
}

/// Polls `done` every 10 ms until it holds; past `deadline` the test fails saying `what`.
pub async fn wait_until<F>(deadline: Instant, what: &str, done: impl Fn() -> F)
where
    F: Future<Output = bool>,
{
    while !done().await {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Makes the simulator's tasks take a minute, runs `call` on a task of its own, and waits until a
/// task of `kind` is in progress (the test fails saying `what` after 30 s); gives back the call
/// and that deadline.
pub async fn started<T: Send + 'static>(
    env: &TestEnv,
    kind: &str,
    what: &str,
    call: impl Future<Output = T> + Send + 'static,
) -> (JoinHandle<T>, Instant) {
    env.control.timing(60_000, 20).await;
    let call = tokio::spawn(call);
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_until(deadline, what, || async move {
        running_tasks(env, kind).await > 0
    })
    .await;
    (call, deadline)
}

/// The recovery records journaled for `change`, oldest first.
pub fn recoveries_of(env: &TestEnv, change: &str) -> Vec<JournalRecord> {
    let filter = JournalFilter {
        change_id: Some(change.into()),
        ..Default::default()
    };
    let journal = env.rewind.journal().read(&filter).unwrap();
    let records = journal.records.into_iter();
    records.filter(|r| r.kind == RecordKind::Recovery).collect()
}

/// Why a recovery was not possible; any other error fails the test.
pub fn refusal(err: RewindError) -> RecoveryRefusal {
    match err {
        RewindError::NotPossible { reason } => reason,
        other => panic!("{other:?}"),
    }
}

/// Whether a call is an FLR mount (`POST /v1/flrs`).
pub fn is_mount(method: &str, path: &str) -> bool {
    method == "POST" && path.eq_ignore_ascii_case("/v1/flrs")
}

/// Asserts that `report` holds a note `which` picks.
pub fn assert_noted(report: &RecoverFileReport, which: impl Fn(&RecoveryNote) -> bool) {
    assert!(report.notes.iter().any(which), "{}", report.summary());
}

/// Asserts that the Zerto task of `report`, of type `task_type`, Completed.
pub fn assert_completed(report: &RecoveryTaskReport, task_type: &str) {
    assert_eq!(
        report.verdict,
        RecoveryVerdict::Completed,
        "{}",
        report.summary()
    );
    assert_eq!(report.task.task_type, task_type);
    assert_eq!(report.task.state.as_ref().map(|s| s.code), Some(6));
}
