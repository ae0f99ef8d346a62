//! The client's own serde models of ZVM JSON (zvm-api.md §2).
//!
//! They are deliberately separate from the simulator's: a wrong field name must not hide on both sides
//! at once. Every model is tolerant: unknown fields are ignored, every field may be missing or null, and
//! identifiers, numbers and timestamps are read leniently (a number where a string was expected, a
//! numeric string where a number was expected, a timestamp that does not parse). Keys are PascalCase,
//! except the embedded link objects (`href`, `identifier`, `rel`, `type`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Reads a string, or a number as its decimal text; anything else becomes `None`.
fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

/// Reads an integer, or a string holding one; anything else becomes `None`.
fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

/// Reads an ISO 8601 timestamp; one that does not parse becomes `None` rather than failing the whole
/// response.
fn lenient_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => parse_time(&s),
        _ => None,
    })
}

/// Reads a boolean, tolerating `"true"`/`"false"` strings.
fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Bool(b)) => Some(b),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

/// Reads a list, treating `null` as empty.
fn lenient_vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// Declares models of ZVM JSON the way this module reads every one: each derives `Debug`, `Clone`,
/// `Default` and `Deserialize`, takes a missing field as its default, and names each field's kind,
/// so that how a kind is read is said once, here:
///
/// - `text`: `Option<String>`, from a string, or a number as its decimal text ([`lenient_string`]);
/// - `int`: `Option<i64>`, from an integer, or a string holding one ([`lenient_i64`]);
/// - `time`: `Option<DateTime<Utc>>`, none for a timestamp that does not parse ([`lenient_time`]);
/// - `flag`: `Option<bool>`, from a boolean, or `"true"` and `"false"` ([`lenient_bool`]);
/// - `list<T>`: `Vec<T>`, empty for `null` ([`lenient_vec`]);
/// - any other type: as serde reads it (a nested model, for one).
///
/// A model keeps its own attributes (its doc, `rename_all`), and a field its own (its doc, an alias,
/// a rename). Every field is public.
macro_rules! lenient_models {
    (@fields [$($head:tt)*] [$($done:tt)*]) => {
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(default)]
        $($head)* { $($done)* }
    };
    (@fields $head:tt [$($done:tt)*] $(#[$attr:meta])* $field:ident: text, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])*
            #[serde(deserialize_with = "lenient_string")] pub $field: Option<String>,] $($rest)*);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$attr:meta])* $field:ident: int, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])*
            #[serde(deserialize_with = "lenient_i64")] pub $field: Option<i64>,] $($rest)*);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$attr:meta])* $field:ident: time, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])*
            #[serde(deserialize_with = "lenient_time")] pub $field: Option<DateTime<Utc>>,]
            $($rest)*);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$attr:meta])* $field:ident: flag, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])*
            #[serde(deserialize_with = "lenient_bool")] pub $field: Option<bool>,] $($rest)*);
    };
    (@fields $head:tt [$($done:tt)*]
        $(#[$attr:meta])* $field:ident: list<$item:ty>, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])*
            #[serde(deserialize_with = "lenient_vec")] pub $field: Vec<$item>,] $($rest)*);
    };
    (@fields $head:tt [$($done:tt)*] $(#[$attr:meta])* $field:ident: $plain:ty, $($rest:tt)*) => {
        lenient_models!(@fields $head [$($done)* $(#[$attr])* pub $field: $plain,] $($rest)*);
    };
    ($($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* })*) => {$(
        lenient_models!(@fields [$(#[$meta])* pub struct $name] [] $($fields)*);
    )*};
}

/// Declares the bodies rewind sends: each derives `Debug`, `Clone`, `Serialize` and `JsonSchema`,
/// borrows what it sends for `'a`, and has its fields public. A body keeps its own attributes (its
/// doc, `rename_all`), and a field its own.
macro_rules! request_bodies {
    ($(
        $(#[$meta:meta])*
        pub struct $name:ident<$a:lifetime> { $($(#[$attr:meta])* $field:ident: $kind:ty,)* }
    )*) => {$(
        #[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
        $(#[$meta])*
        pub struct $name<$a> { $($(#[$attr])* pub $field: $kind,)* }
    )*};
}

/// Parses the timestamp forms a ZVM writes (`2019-07-20T19:30:19Z`, with or without fractions, with an
/// offset, or without a zone, which is taken as UTC).
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    // `%Y` also takes signed years of any length, up to chrono's limits, where the client's own
    // arithmetic (a minute before a task's start) would overflow: years are kept to RFC 3339's four
    // digits, as the first format keeps them.
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .filter(|n| (0..=9999).contains(&chrono::Datelike::year(n)))
        .map(|n| n.and_utc())
}

/// Formats a timestamp the way ZVM date query parameters take it (`yyyy-MM-ddTHH:mm:ss.fffZ`).
pub fn format_query_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

lenient_models! {
    /// An embedded link object (`{"href", "identifier", "rel", "type"}`, lowercase keys).
    pub struct Link {
        /// The linked resource's identifier.
        #[serde(alias = "Identifier")]
        identifier: text,
        /// The linked resource's URL.
        #[serde(alias = "Href")]
        href: text,
        /// The linked resource's type, e.g. `LocalSiteApi`.
        #[serde(rename = "type", alias = "Type")]
        kind: text,
    }

    /// `POST /auth/realms/zerto/protocol/openid-connect/token` → 200 (Keycloak's own snake_case keys).
    pub struct TokenResponse {
        /// The bearer token.
        access_token: String,
        /// Lifetime in seconds.
        expires_in: int,
    }

    /// A Keycloak error body `{"error", "error_description"}`.
    pub struct TokenError {
        /// E.g. `invalid_client`.
        error: text,
        /// A sentence.
        error_description: text,
    }

    /// A `/v1` error body `{"Message": "..."}`.
    #[serde(rename_all = "PascalCase")]
    pub struct ErrorBody {
        /// What the ZVM said.
        #[serde(alias = "message")]
        message: text,
    }

    /// `GET /v1/localsite`.
    #[serde(rename_all = "PascalCase")]
    pub struct LocalSite {
        /// The site's GUID.
        site_identifier: text,
        /// The site's name, e.g. `Boston`.
        site_name: text,
        /// The ZVM version.
        version: text,
        /// The ZVM version as shown to humans.
        display_version: text,
    }

    /// `VmNetworkInformation` of a VM row.
    #[serde(rename_all = "PascalCase")]
    pub struct VmNetworkInformation {
        /// The VM's network adapters.
        network_adapters: list<NetworkAdapter>,
    }

    /// One network adapter of a VM.
    #[serde(rename_all = "PascalCase")]
    pub struct NetworkAdapter {
        /// The adapter's addresses.
        ip_addresses: list<Value>,
    }

    /// `EnabledActions` of a VM row.
    #[serde(rename_all = "PascalCase")]
    pub struct EnabledActions {
        /// Whether this ZVM can run FLR for this VM in this VPG.
        is_flr_enabled: flag,
    }

    /// One row of `GET /v1/vms`: one VM in one VPG.
    #[serde(rename_all = "PascalCase")]
    pub struct VmRow {
        /// `<serverGuid>.<moref>`.
        vm_identifier: text,
        /// The VM's name.
        vm_name: text,
        /// The VPG of this row.
        vpg_identifier: text,
        /// The VPG's name.
        vpg_name: text,
        /// The VPG's status (`VpgVisualStatusApi`).
        status: int,
        /// The VPG's substatus (`VpgVisualSubStatusApi`).
        sub_status: int,
        /// The protected site's link.
        protected_site: Option<Link>,
        /// The protected site's name.
        protected_site_name: text,
        /// The recovery site's link.
        recovery_site: Option<Link>,
        /// The recovery site's name.
        recovery_site_name: text,
        /// What this ZVM can do for the VM.
        enabled_actions: Option<EnabledActions>,
        /// Addresses of the VM.
        vm_network_information: Option<VmNetworkInformation>,
        /// The VPG's link; a fallback for the VPG identifier.
        link: Option<Link>,
    }
}

impl VmRow {
    /// The VM's IP addresses as strings.
    pub fn ip_addresses(&self) -> impl Iterator<Item = &str> {
        self.vm_network_information
            .iter()
            .flat_map(|n| n.network_adapters.iter())
            .flat_map(|a| a.ip_addresses.iter())
            .filter_map(|v| match v {
                Value::String(s) => Some(s.as_str()),
                // Some versions wrap an address as {"IpAddress": "..."}.
                Value::Object(o) => o
                    .get("IpAddress")
                    .or_else(|| o.get("Address"))
                    .and_then(Value::as_str),
                _ => None,
            })
    }
}

lenient_models! {
    /// One VPG of `GET /v1/vpgs`.
    #[serde(rename_all = "PascalCase")]
    pub struct Vpg {
        /// The VPG's GUID.
        vpg_identifier: text,
        /// The VPG's name.
        vpg_name: text,
        /// Status.
        status: int,
        /// Substatus.
        sub_status: int,
        /// The protected site's link.
        protected_site: Option<Link>,
        /// The recovery site's link.
        recovery_site: Option<Link>,
        /// The recovery site's name.
        recovery_site_name: text,
        /// What the VPG is running now (a failover test, ...).
        active_processes_api: Option<ActiveProcesses>,
        /// When the VPG was last tested.
        last_test: time,
        /// How much journal history it is configured to keep and keeps.
        history_status_api: Option<HistoryStatus>,
    }

    /// `HistoryStatusApi` of a VPG.
    #[serde(rename_all = "PascalCase")]
    pub struct HistoryStatus {
        /// How far back the journal reaches now.
        actual_history_in_minutes: int,
        /// How far back it is configured to reach.
        configured_history_in_minutes: int,
        /// The oldest checkpoint the journal holds.
        earliest_checkpoint: Option<Checkpoint>,
    }

    /// One alert of `GET /v1/alerts`.
    #[serde(rename_all = "PascalCase")]
    pub struct Alert {
        /// Which alert it is, e.g. `VPG0004`.
        help_identifier: text,
        /// `Warning` or `Error`.
        level: text,
        /// What it says.
        description: text,
        /// Whether a person dismissed it.
        is_dismissed: Option<bool>,
        /// The VPGs it is about.
        affected_vpgs: Vec<Link>,
    }

    /// One event of `GET /v1/events`.
    #[serde(rename_all = "PascalCase")]
    pub struct Event {
        /// Its type (`GET /v1/events/types` names them).
        event_type: int,
        /// What happened.
        description: text,
        /// When.
        occurred_on: time,
    }
}

impl Vpg {
    /// The stage of the failover test running at this VPG, if one is (`""` when the ZVM names none).
    pub fn running_failover_test(&self) -> Option<&str> {
        self.active_processes_api
            .as_ref()
            .and_then(|a| a.running_fail_over_test_api.as_ref())
            .map(|t| t.stage.as_deref().unwrap_or_default())
    }
}

lenient_models! {
    /// `ActiveProcessesApi` of a VPG.
    #[serde(rename_all = "PascalCase")]
    pub struct ActiveProcesses {
        /// The failover test running at the VPG, `null` when none is.
        running_fail_over_test_api: Option<RunningFailoverTest>,
    }

    /// `RunningFailOverTestApi` of a VPG.
    #[serde(rename_all = "PascalCase")]
    pub struct RunningFailoverTest {
        /// `Starting`, `InTest`, `Stopping`.
        stage: text,
    }

    /// One checkpoint of `GET /v1/vpgs/{id}/checkpoints`.
    #[serde(rename_all = "PascalCase")]
    pub struct Checkpoint {
        /// A decimal counter as a string.
        checkpoint_identifier: text,
        /// When the checkpoint was taken.
        #[serde(alias = "Timestamp")]
        time_stamp: time,
        /// The tag (name) of a tagged checkpoint; `null` for automatic ones.
        tag: text,
    }

    /// `Status` of a task.
    #[serde(rename_all = "PascalCase")]
    pub struct TaskStatus {
        /// `TaskStatusEnumApi`: 1 InProgress, 4 Failed, 5 Stopped, 6 Completed, ...
        state: int,
        /// 0..100.
        progress: int,
    }

    /// `RelatedEntities` of a task.
    #[serde(rename_all = "PascalCase")]
    pub struct RelatedEntities {
        /// The VPGs the task acts on.
        vpgs: list<Link>,
        /// The FLR sessions the task acts on (mount and unmount tasks).
        flr_sessions: list<Link>,
    }

    /// A task of `GET /v1/tasks` or `GET /v1/tasks/{id}`.
    #[serde(rename_all = "PascalCase")]
    pub struct Task {
        /// `<taskGuid>.<siteGuid>`.
        task_identifier: text,
        /// E.g. `InsertTaggedCP`.
        #[serde(rename = "Type")]
        kind: text,
        /// State and progress.
        status: Option<TaskStatus>,
        /// Who started it.
        initiated_by: text,
        /// When it started (the ZVM's clock).
        started: time,
        /// When it ended, if it did.
        completed: time,
        /// Why it ended as it did; empty on success.
        complete_reason: text,
        /// What it acts on.
        related_entities: Option<RelatedEntities>,
    }
}

impl Task {
    /// `Status.State`, if present.
    pub fn state(&self) -> Option<i64> {
        self.status.as_ref().and_then(|s| s.state)
    }

    /// `Status.Progress` clamped to 0..=100, if present.
    pub fn progress(&self) -> Option<u8> {
        self.status
            .as_ref()
            .and_then(|s| s.progress)
            .map(|p| p.clamp(0, 100) as u8)
    }

    /// Whether the task names `vpg_id` among its related VPGs.
    pub fn concerns_vpg(&self, vpg_id: &str) -> bool {
        self.related(|r| &r.vpgs).any(|l| l.identifies(vpg_id))
    }

    /// Whether the task is a tagged-checkpoint insert.
    pub fn is_insert(&self) -> bool {
        self.is_type(INSERT_TASK_TYPE)
    }

    /// Whether the task's `Type` is `kind` (case-insensitive).
    pub fn is_type(&self, kind: &str) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|k| k.eq_ignore_ascii_case(kind))
    }

    /// Whether the task names the FLR session `session_id` among its related sessions. A link whose
    /// `identifier` is missing is matched by the end of its `href`.
    pub fn concerns_flr_session(&self, session_id: &str) -> bool {
        self.related(|r| &r.flr_sessions).any(|l| {
            l.identifies(session_id)
                || l.href.as_deref().is_some_and(|h| {
                    h.rsplit('/')
                        .next()
                        .is_some_and(|last| last.eq_ignore_ascii_case(session_id))
                })
        })
    }

    /// The links of one kind of its related entities (none when it names none).
    fn related(&self, kind: fn(&RelatedEntities) -> &[Link]) -> impl Iterator<Item = &Link> {
        self.related_entities.iter().flat_map(kind)
    }
}

impl Link {
    /// Whether the link's identifier is `id`, ASCII case aside.
    fn identifies(&self, id: &str) -> bool {
        self.identifier
            .as_deref()
            .is_some_and(|i| i.eq_ignore_ascii_case(id))
    }
}

/// The task type of a tagged-checkpoint insert.
pub const INSERT_TASK_TYPE: &str = "InsertTaggedCP";
/// The task type of an FLR mount.
pub const FLR_MOUNT_TASK_TYPE: &str = "FlrJournalMount";
/// The task type of an FLR unmount.
pub const FLR_UNMOUNT_TASK_TYPE: &str = "FlrJournalUnmount";
/// The `Type` of the task that mounts a retention set for FLR.
pub const FLR_BACKUP_MOUNT_TASK_TYPE: &str = "FlrBackupMount";
/// The `Type` of the task that unmounts it.
pub const FLR_BACKUP_UNMOUNT_TASK_TYPE: &str = "FlrBackupUnmount";
/// The `Type` of a manual Extended Journal Copy run (`retentionstart`).
pub const RETENTION_TASK_TYPE: &str = "ManualRetention";
/// The task type of a failover test start.
pub const FAILOVER_TEST_TASK_TYPE: &str = "FailOverTest";
/// The task type of a failover test stop.
pub const STOP_FAILOVER_TEST_TASK_TYPE: &str = "StopFailOverTest";
/// The task type of an offsite clone.
pub const CLONE_TASK_TYPE: &str = "Clone";
/// The task type of a journal VM restore (the simulator's name: no public source lists it; a
/// restore is found by its task identifier, never by this name, against a ZVM).
pub const RESTORE_TASK_TYPE: &str = "JournalVmRestore";
/// The task type of a journal VM restore's commit (the simulator's name).
pub const RESTORE_COMMIT_TASK_TYPE: &str = "JournalVmRestoreCommit";
/// The task type of a journal VM restore's rollback (the simulator's name).
pub const RESTORE_ROLLBACK_TASK_TYPE: &str = "JournalVmRestoreRollback";

/// `JournalVMRestoreCommitPolicyApi` 0, as the zvml SDK's `ZertoCommitPolicy` names it: the
/// restore rolls back by itself once its wait passes without a commit. rewind never sends another:
/// a restore is committed only by a person.
pub const RESTORE_COMMIT_POLICY_ROLLBACK: u8 = 0;

lenient_models! {
    /// One site of `GET /v1/virtualizationsites`.
    #[serde(rename_all = "PascalCase")]
    pub struct VirtualizationSite {
        /// The site's GUID.
        site_identifier: text,
        /// The site's name.
        virtualization_site_name: text,
    }

    /// One VM of `GET /v1/virtualizationsites/{id}/vms` (protected or not).
    #[serde(rename_all = "PascalCase")]
    pub struct SiteVm {
        /// `<serverGuid>.<moref>`.
        vm_identifier: text,
        /// The VM's name.
        vm_name: text,
    }

    /// One FLR session of `GET /v1/flrs` or `GET /v1/flrs/{id}` (`FlrSessionInformationApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct FlrSession {
        /// `<guid>.<siteGuid>`.
        flr_session_identifier: text,
        /// `MountInProgress`, `MountCompletedSuccessfully`, `MountFailed`, ...
        flr_session_status: text,
        /// The VM whose disks are mounted.
        vm_identifier: text,
        /// The VPG whose journal they come from.
        vpg_identifier: text,
        /// The checkpoint mounted.
        checkpoint_identifier: text,
    }
}

impl FlrSession {
    /// Whether the mount is done and the session can be browsed.
    pub fn is_mounted(&self) -> bool {
        self.status_is(FLR_MOUNTED)
    }

    /// Whether the mount failed.
    pub fn mount_failed(&self) -> bool {
        self.flr_session_status
            .as_deref()
            .is_some_and(|s| s.to_ascii_lowercase().contains("failed"))
    }

    fn status_is(&self, status: &str) -> bool {
        self.flr_session_status
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(status))
    }
}

/// The session status of a completed mount.
pub const FLR_MOUNTED: &str = "MountCompletedSuccessfully";

lenient_models! {
    /// A name and an identifier (`NamedEntityApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct NamedEntity {
        /// The name.
        #[serde(alias = "name")]
        name: text,
        /// The identifier.
        #[serde(alias = "identifier")]
        identifier: text,
    }

    /// `GET /v1/ltr/catalog/fullretentionsets` (`RetentionSetsInfoApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct RetentionSetsInfo {
        /// The full retention sets.
        #[serde(alias = "retentionSets")]
        retention_sets: Vec<RetentionSetInfo>,
    }

    /// One full retention set (`RetentionSetInfoApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct RetentionSetInfo {
        /// Its identifier.
        #[serde(alias = "retentionSetIdentifier")]
        retention_set_identifier: text,
        /// The VPG it was copied from.
        #[serde(alias = "vpg")]
        vpg: Option<NamedEntity>,
        /// The repository that keeps it.
        #[serde(alias = "repository")]
        repository: Option<NamedEntity>,
        /// The moment it holds.
        #[serde(alias = "pointInTime")]
        point_in_time: time,
        /// When it is deleted.
        #[serde(alias = "expiryDate")]
        expiry_date: time,
    }

    /// `GET /v1/ltr/health/vpgs` (`VpgsLtrHealthApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct VpgsLtrHealth {
        /// Each VPG the site sees.
        #[serde(alias = "vpgs")]
        vpgs: Vec<VpgLtrHealth>,
    }

    /// One VPG's Extended Journal Copy (`VpgLtrHealthApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct VpgLtrHealth {
        /// The VPG.
        #[serde(alias = "vpgId")]
        vpg_id: text,
        /// Its repository, `null` when it has none.
        #[serde(alias = "repositoryId")]
        repository_id: text,
        /// Its repository's name.
        #[serde(alias = "repositoryName")]
        repository_name: text,
    }

    /// `GET /v1/ltr/catalog/vms/{vm}/retentionsets` (`RetentionSetsApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct VmRetentionSets {
        /// The sets that hold the VM.
        #[serde(alias = "retentionSets")]
        retention_sets: Vec<VmRetentionSet>,
    }

    /// One retention set of a VM (`RetentionSetApi`).
    #[serde(rename_all = "PascalCase")]
    pub struct VmRetentionSet {
        /// Its identifier.
        #[serde(alias = "retentionSetIdentifier")]
        retention_set_identifier: text,
        /// Its repository.
        #[serde(alias = "repositoryIdentifier")]
        repository_identifier: text,
        /// The site of its repository.
        #[serde(alias = "repositorySiteIdentifier")]
        repository_site_identifier: text,
    }
}

lenient_models! {
    /// The answer of `POST /v1/flrs/{id}/browse`.
    #[serde(rename_all = "PascalCase")]
    pub struct FlrListing {
        /// The folder browsed.
        main_path_item: Option<PathItem>,
        /// What it holds.
        path_items: list<PathItem>,
    }

    /// One item of a browse.
    #[serde(rename_all = "PascalCase")]
    pub struct PathItem {
        /// The item's guest path (or, on some versions, only its name).
        path: text,
        /// `Partition`, `Folder`, `File`, ...
        #[serde(rename = "Type")]
        kind: text,
        /// Whether it can be browsed (a partition or a folder).
        is_browsable: flag,
        /// Whether and why not it can be downloaded.
        download_information: Option<DownloadInformation>,
        /// A file's size.
        size_in_bytes: int,
        /// When it was last written (the guest's clock).
        last_write_time: time,
    }
}

impl PathItem {
    /// The item's last path segment: its name.
    pub fn name(&self) -> &str {
        self.path
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default()
    }

    /// Whether the item is a partition.
    pub fn is_partition(&self) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|k| k.eq_ignore_ascii_case("partition"))
    }

    /// Whether the item is a folder (or a partition): browsable, or typed so.
    pub fn is_folder(&self) -> bool {
        let typed = self.kind.as_deref().map(str::to_ascii_lowercase);
        match typed.as_deref() {
            Some("file") => false,
            Some("folder" | "directory" | "dir" | "partition") => true,
            _ => self.is_browsable == Some(true),
        }
    }

    /// Why the item cannot be downloaded, when the ZVM says it cannot.
    pub fn not_downloadable(&self) -> Option<String> {
        let info = self.download_information.as_ref()?;
        (info.is_downloadable == Some(false)).then(|| {
            info.additional_information
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "the ZVM gives no reason".into())
        })
    }
}

lenient_models! {
    /// `DownloadInformation` of a browse item.
    #[serde(rename_all = "PascalCase")]
    pub struct DownloadInformation {
        /// Whether the item can be downloaded.
        is_downloadable: flag,
        /// Why not.
        additional_information: text,
    }
}

// The bodies of what rewind sends, as SW10 declares them.
request_bodies! {
    /// The body of `POST /v1/flrs` (`FlrMountDataApi`): a journal FLR, or one of a retention set.
    #[serde(rename_all = "PascalCase")]
    pub struct FlrMount<'a> {
        /// The journal FLR.
        jflr: Option<JournalFlr<'a>>,
        /// The FLR of a retention set (Extended Journal Copy).
        bflr: Option<BackupFlr<'a>>,
    }

    /// `BflrMountDataApi`: the FLR of a retention set.
    #[serde(rename_all = "PascalCase")]
    pub struct BackupFlr<'a> {
        /// The VPG the set was copied from.
        vpg_identifier: &'a str,
        /// The VM whose disks to mount.
        vm_identifier: &'a str,
        /// The retention set.
        retention_set_identifier: &'a str,
        /// Its repository.
        repository_identifier: Option<&'a str>,
        /// The site of its repository.
        repository_site_identifier: Option<&'a str>,
        /// Where the browse starts; none.
        initial_download_path: Option<&'a str>,
    }

    /// The body of `POST /v1/ltr/vpgs/{id}/retentionstart` (`RetentionStartInfoApi`).
    pub struct RetentionStart<'a> {
        /// The checkpoint to copy.
        #[serde(rename = "checkpointId")]
        checkpoint_id: &'a str,
    }

    /// `JflrMountDataApi`.
    #[serde(rename_all = "PascalCase")]
    pub struct JournalFlr<'a> {
        /// The VPG whose journal holds the checkpoint.
        vpg_identifier: &'a str,
        /// The VM whose disks to mount.
        vm_identifier: &'a str,
        /// The checkpoint to mount.
        checkpoint_identifier: &'a str,
        /// Where the browse starts; none.
        initial_download_path: Option<&'a str>,
    }

    /// The body of `POST /v1/flrs/{id}/browse`.
    #[serde(rename_all = "PascalCase")]
    pub struct FlrBrowse<'a> {
        /// A partition-rooted, `/`-separated guest path; empty lists the partitions.
        path: &'a str,
        /// The page asked for, from 1.
        page_number: usize,
        /// Items per page.
        page_size: usize,
    }

    /// The body of `POST /v1/flrs/{id}/download`.
    #[serde(rename_all = "PascalCase")]
    pub struct FlrDownload<'a> {
        /// The guest paths to download.
        path_list: &'a [&'a str],
    }

    /// The body of `POST /v1/vms/{id}/Restore` (`JournalVMRestoreDataApi`, camelCase as SW10 writes
    /// it).
    #[serde(rename_all = "camelCase")]
    pub struct JournalVmRestore<'a> {
        /// The VPG whose journal holds the checkpoint.
        vpg_identifier: &'a str,
        /// The checkpoint to restore.
        checkpoint_identifier: &'a str,
        /// A new VM's name, for a restore beside the VM; `None` restores it in place.
        #[serde(skip_serializing_if = "Option::is_none")]
        restored_vm_name: Option<&'a str>,
        /// Always [`RESTORE_COMMIT_POLICY_ROLLBACK`].
        commit_policy: u8,
        /// 0: no shutdown policy of its own.
        shutdown_policy: u8,
        /// How long the restore waits for a person's commit before it rolls back by itself.
        time_to_wait_before_continue_in_seconds: u64,
    }

    /// The body of `POST /v1/vpgs/{id}/FailoverTest`.
    #[serde(rename_all = "PascalCase")]
    pub struct FailoverTestStart<'a> {
        /// The checkpoint to test from.
        checkpoint_identifier: &'a str,
        /// The VMs to test.
        vm_identifiers: &'a [&'a str],
    }

    /// The body of `POST /v1/vpgs/{id}/FailoverTestStop`.
    #[serde(rename_all = "PascalCase")]
    pub struct FailoverTestStop<'a> {
        /// Whether the test succeeded.
        failover_test_success: bool,
        /// What the tester found.
        failover_test_summary: &'a str,
    }

    /// The body of `POST /v1/vpgs/{id}/CloneStart` (note `CheckpointId`, not `CheckpointIdentifier`).
    #[serde(rename_all = "PascalCase")]
    pub struct CloneStart<'a> {
        /// The checkpoint to clone from.
        checkpoint_id: &'a str,
        /// The VMs to clone.
        vm_identifiers: &'a [&'a str],
    }

    /// The body of `POST /v1/vpgs/{id}/checkpoints`.
    #[serde(rename_all = "PascalCase")]
    pub struct InsertCheckpoint<'a> {
        /// The tag.
        checkpoint_name: &'a str,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_row_reads_pascal_case_lowercase_links_and_ignores_unknown_fields() {
        let json = r#"{
            "VmIdentifier": "d4a6.vm-38", "VmName": "web-01", "VpgIdentifier": "g-1", "VpgName": "web-dr",
            "Status": 1, "SubStatus": "0", "ProtectedSite": {"href": "x", "identifier": "s-b", "rel": null, "type": "LocalSiteApi"},
            "RecoverySite": {"identifier": "s-d"}, "ProtectedSiteName": "Boston", "RecoverySiteName": "Denver",
            "EnabledActions": {"IsFlrEnabled": false}, "Brand": "new field",
            "VmNetworkInformation": {"NetworkAdapters": [{"DisplayName": "nic", "IpAddresses": ["10.0.0.5", {"IpAddress": "10.0.0.6"}]}]}
        }"#;
        let row: VmRow = serde_json::from_str(json).unwrap();
        assert_eq!(row.vm_name.as_deref(), Some("web-01"));
        assert_eq!(row.sub_status, Some(0));
        assert_eq!(
            row.protected_site.as_ref().unwrap().identifier.as_deref(),
            Some("s-b")
        );
        assert_eq!(
            row.ip_addresses().collect::<Vec<_>>(),
            vec!["10.0.0.5", "10.0.0.6"]
        );
    }

    #[test]
    fn missing_and_null_fields_are_tolerated() {
        let row: VmRow = serde_json::from_str(
            r#"{"VmName": null, "VmNetworkInformation": {"NetworkAdapters": null}}"#,
        )
        .unwrap();
        assert!(row.vm_name.is_none());
        assert_eq!(row.ip_addresses().count(), 0);
        let task: Task = serde_json::from_str("{}").unwrap();
        assert!(task.state().is_none());
    }

    #[test]
    fn task_reads_state_progress_times_and_related_vpgs() {
        let json = r#"{"TaskIdentifier": "t.s", "Type": "InsertTaggedCP", "Status": {"State": 6, "Progress": 100},
            "Started": "2026-11-29T10:00:00Z", "Completed": "2026-11-29T10:00:02.5Z", "CompleteReason": "",
            "RelatedEntities": {"Vpgs": [{"identifier": "G-1"}], "Sites": []}}"#;
        let t: Task = serde_json::from_str(json).unwrap();
        assert_eq!(t.state(), Some(6));
        assert_eq!(t.progress(), Some(100));
        assert!(t.is_insert());
        assert!(t.concerns_vpg("g-1"));
        assert!(t.completed.unwrap() > t.started.unwrap());
    }

    #[test]
    fn checkpoint_identifier_may_be_a_number_and_a_bad_timestamp_is_none() {
        let c: Checkpoint = serde_json::from_str(
            r#"{"CheckpointIdentifier": 786, "TimeStamp": "yesterday", "Tag": "t"}"#,
        )
        .unwrap();
        assert_eq!(c.checkpoint_identifier.as_deref(), Some("786"));
        assert!(c.time_stamp.is_none());
    }

    #[test]
    fn query_time_has_milliseconds_and_z() {
        let t = parse_time("2026-11-29T10:00:00.5Z").unwrap();
        assert_eq!(format_query_time(t), "2026-11-29T10:00:00.500Z");
        assert!(parse_time("2026-11-29T10:00:00").is_some());
    }

    #[test]
    fn a_time_at_the_edge_of_the_calendar_is_no_time_so_no_arithmetic_on_it_overflows() {
        // A task that says it started here once made the guard panic on the minute before it.
        let t: Task = serde_json::from_str(
            r#"{"Started": "-262143-01-01T00:00:00", "Status": {"State": 6}}"#,
        )
        .unwrap();
        assert!(t.started.is_none(), "{:?}", t.started);
        assert!(parse_time("+99999-01-01T00:00:00").is_none());
        let earliest = parse_time("0000-01-01T00:00:00").unwrap();
        assert!(
            earliest
                .checked_sub_signed(chrono::Duration::minutes(5))
                .is_some()
        );
    }
}
