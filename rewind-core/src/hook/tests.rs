//! The judgement as a table: one `check(call, expect)` row per case, against one journal.

use chrono::TimeZone;
use serde_json::json;

use super::*;
use crate::audit_journal::RecordKind;
use crate::catalog::{Source, question_for};

/// The hook's window in these rows.
const WINDOW: Duration = Duration::from_secs(15 * 60);

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap()
}

fn vm(id: &str, name: &str, ip: &str, site: &str) -> JournalVm {
    JournalVm {
        id: id.into(),
        name: name.into(),
        ip_addresses: vec![ip.into()],
        site: site.into(),
    }
}

fn web() -> JournalVm {
    vm("s1.vm-1", "web-01", "10.0.0.11", "Boston")
}
fn db() -> JournalVm {
    vm("s1.vm-2", "db-01", "10.0.0.12", "Boston")
}
fn files() -> JournalVm {
    vm("s1.vm-4", "files-01", "10.0.0.14", "Boston")
}
/// Two VMs of one name, one at each site.
fn build_boston() -> JournalVm {
    vm("s1.vm-3", "build-agent", "10.0.0.13", "Boston")
}
fn build_denver() -> JournalVm {
    vm("s2.vm-3", "build-agent", "10.1.0.13", "Denver")
}

/// A guard record of `vm` for change `change`, ended `verdict`, `minutes` ago.
fn record(vm: JournalVm, change: &str, verdict: &str, minutes: i64) -> JournalRecord {
    JournalRecord {
        time: now() - chrono::Duration::minutes(minutes),
        kind: RecordKind::Guard,
        agent: "claude-code".into(),
        person: None,
        action: "edit".into(),
        change_id: change.into(),
        vm,
        verdict: serde_json::from_value(serde_json::json!(verdict)).expect("a verdict's word"),
        vpgs: Vec::new(),
        notes: Vec::new(),
        details: None,
        attempt: None,
        sites: None,
        approved_by: None,
    }
}

/// Every record of the journal the rows are judged by, oldest first: web-01 guarded within the
/// window, db-01 only before it, files-01 not guarded, and of the two build-agents only Denver's
/// within it.
fn journal() -> Vec<JournalRecord> {
    vec![
        record(db(), "c0", "guarded", 120),
        record(build_boston(), "c0", "guarded", 120),
        record(web(), "c1", "guarded", 5),
        record(build_denver(), "c2", "guarded", 5),
        record(files(), "c3", "not_guarded", 1),
    ]
}

/// The guards as the front reads them: the index names every VM of the journal; the records are
/// those of the window.
fn guards() -> GuardRecords {
    let all = journal();
    GuardRecords {
        namings: all.iter().map(|r| (r.time, r.vm.clone())).collect(),
        records: all
            .into_iter()
            .filter(|r| r.time >= now() - chrono::Duration::minutes(15))
            .collect(),
        sources: Sources::Journal,
    }
}

/// The newest record of `vm` in the journal.
fn guard_of(vm: JournalVm) -> JournalRecord {
    journal().into_iter().rfind(|r| r.vm == vm).unwrap()
}

/// A call of `server`/`tool`, classified `class` by the catalog (with `vm_arg` for a mutating
/// tool), with `input`.
struct Row {
    server: &'static str,
    tool: &'static str,
    class: ToolClass,
    vm_arg: Option<&'static str>,
    input: Value,
    guards: GuardRecords,
}

fn call(server: &'static str, tool: &'static str, class: ToolClass) -> Row {
    Row {
        server,
        tool,
        class,
        vm_arg: None,
        input: json!({}),
        guards: guards(),
    }
}

fn mutating(server: &'static str, tool: &'static str, vm_arg: Option<&'static str>) -> Row {
    Row {
        vm_arg,
        ..call(server, tool, ToolClass::Mutating)
    }
}

impl Row {
    fn input(self, input: Value) -> Row {
        Row { input, ..self }
    }

    fn guards(self, guards: GuardRecords) -> Row {
        Row { guards, ..self }
    }

    /// The catalog's answer, as `CatalogStore::classify_call` gives it: the VM is the argument
    /// `vm_arg` names, when the input has it.
    fn classification(&self) -> Classification {
        let vm = self
            .vm_arg
            .and_then(|arg| self.input.get(arg))
            .and_then(Value::as_str)
            .map(str::to_string);
        Classification {
            server: self.server.into(),
            tool: self.tool.into(),
            question: (self.class == ToolClass::Unknown)
                .then(|| question_for(self.server, self.tool, vm.as_deref())),
            vm,
            class: self.class,
            source: Source::Catalog,
            vm_arg: self.vm_arg.map(str::to_string),
        }
    }
}

#[track_caller]
fn check(row: Row, expect: Decision) {
    let class = row.classification();
    let call = Call {
        server: row.server,
        tool: row.tool,
        input: &row.input,
        class: &class,
    };
    let decision = judge(&call, &row.guards, WINDOW, now());
    assert_eq!(decision, expect, "{}: {decision}", row.input);
}

fn allowed(server: &str, tool: &str, guards: Vec<JournalRecord>) -> Decision {
    Decision::Allow(Allowed::Guarded {
        server: server.into(),
        tool: tool.into(),
        guards,
        window: WINDOW,
    })
}

fn not_guarded(vm: &str, sources: Sources) -> Decision {
    Decision::Deny(Denied::NotGuarded {
        server: "ssh".into(),
        tool: "run".into(),
        vm: vm.into(),
        vm_arg: Some("host".into()),
        sources,
        window: WINDOW,
    })
}

fn mentioned_not_guarded(vms: &[&str]) -> Decision {
    Decision::Deny(Denied::MentionedNotGuarded {
        server: "claude-code".into(),
        tool: "Bash".into(),
        vms: vms.iter().map(|v| v.to_string()).collect(),
        sources: Sources::Journal,
        window: WINDOW,
    })
}

fn which_vm(server: &str, tool: &str, vm_arg: Option<&str>) -> Decision {
    Decision::Ask(Question::WhichVm {
        server: server.into(),
        tool: tool.into(),
        vm_arg: vm_arg.map(str::to_string),
    })
}

fn ambiguous(server: &str, tool: &str, reference: &str) -> Decision {
    Decision::Ask(Question::Ambiguous {
        server: server.into(),
        tool: tool.into(),
        reference: reference.into(),
        candidates: vec![build_boston(), build_denver()],
    })
}

#[test]
fn read_only_and_unknown_tools() {
    check(
        call("claude-code", "Read", ToolClass::ReadOnly),
        Decision::Allow(Allowed::ReadOnly {
            server: "claude-code".into(),
            tool: "Read".into(),
        }),
    );
    // Unknown is not safe, even with nothing in the journal.
    check(
        call("ansible", "run_playbook", ToolClass::Unknown).guards(GuardRecords::default()),
        Decision::Ask(Question::UnknownTool {
            server: "ansible".into(),
            tool: "run_playbook".into(),
            question: question_for("ansible", "run_playbook", None),
        }),
    );
}

#[test]
fn a_mutating_tool_is_judged_by_the_vm_its_argument_names() {
    let ssh = || mutating("ssh", "run", Some("host"));
    check(
        ssh().input(json!({"host": "web-01"})),
        allowed("ssh", "run", vec![guard_of(web())]),
    );
    // By host name or address, as find_protection matches a query.
    check(
        ssh().input(json!({"host": "web-01.corp.example"})),
        allowed("ssh", "run", vec![guard_of(web())]),
    );
    check(
        ssh().input(json!({"host": "10.0.0.11"})),
        allowed("ssh", "run", vec![guard_of(web())]),
    );
    // A guard older than the window does not count; a VM never guarded is denied alike.
    check(
        ssh().input(json!({"host": "db-01"})),
        not_guarded("db-01", Sources::Journal),
    );
    check(
        ssh().input(json!({"host": "files-01"})),
        not_guarded("files-01", Sources::Journal),
    );
    check(
        ssh().input(json!({"host": "nowhere-01"})),
        not_guarded("nowhere-01", Sources::Journal),
    );
    check(
        ssh().input(json!({"host": "db-01"})).guards(GuardRecords {
            sources: Sources::JournalAndTeamServer,
            ..guards()
        }),
        not_guarded("db-01", Sources::JournalAndTeamServer),
    );
    // The argument is missing and the input names no VM the journal knows: the human decides.
    check(
        ssh().input(json!({"cmd": "reboot"})),
        which_vm("ssh", "run", Some("host")),
    );
}

#[test]
fn a_reference_that_two_vms_answer_to_is_put_to_the_human() {
    let ssh = || mutating("ssh", "run", Some("host"));
    // One of them is guarded, but the guard of one never lets a call on the other through.
    check(
        ssh().input(json!({"host": "build-agent"})),
        ambiguous("ssh", "run", "build-agent"),
    );
    check(
        ssh().input(json!({"host": "build-agent.corp.example"})),
        ambiguous("ssh", "run", "build-agent.corp.example"),
    );
    // Named by its identifier, each is judged by its own guard.
    check(
        ssh().input(json!({"host": "s2.vm-3"})),
        allowed("ssh", "run", vec![guard_of(build_denver())]),
    );
    check(
        ssh().input(json!({"host": "s1.vm-3"})),
        not_guarded("s1.vm-3", Sources::Journal),
    );
    // In the input of a tool without a VM argument, too.
    check(
        mutating("claude-code", "Bash", None)
            .input(json!({"command": "ssh build-agent 'rm -rf /var/cache/ci'"})),
        ambiguous("claude-code", "Bash", "build-agent"),
    );
}

#[test]
fn without_a_vm_argument_the_vms_the_input_mentions_are_judged() {
    let bash =
        |command: &str| mutating("claude-code", "Bash", None).input(json!({ "command": command }));
    check(
        bash("ssh web-01.corp.example 'sed -i s/a/b/ app.conf'"),
        allowed("claude-code", "Bash", vec![guard_of(web())]),
    );
    check(
        bash("ssh root@10.0.0.11 systemctl restart app"),
        allowed("claude-code", "Bash", vec![guard_of(web())]),
    );
    check(
        bash("ssh web-01 x; ssh s2.vm-3 y"),
        allowed(
            "claude-code",
            "Bash",
            vec![guard_of(web()), guard_of(build_denver())],
        ),
    );
    // Every VM mentioned must be guarded; those that are not are named, in identifier order.
    check(
        bash("ssh web-01 x; ssh db-01 y"),
        mentioned_not_guarded(&["db-01"]),
    );
    check(
        bash("ssh files-01 z; ssh db-01 y"),
        mentioned_not_guarded(&["db-01", "files-01"]),
    );
    // Only whole words count: none here, so the human decides.
    check(bash("ssh web-010 x"), which_vm("claude-code", "Bash", None));
    check(
        bash("ssh web-01 x").guards(GuardRecords::default()),
        which_vm("claude-code", "Bash", None),
    );
}

#[test]
fn a_vm_is_known_by_its_newest_naming_whatever_the_age_of_its_records() {
    // web-01 was renamed web-02 after its guard: a call naming web-02 is judged by that guard, and
    // one naming web-01 names no VM the journal knows.
    let mut renamed = guards();
    let mut later = web();
    later.name = "web-02".into();
    renamed
        .namings
        .push((now() - chrono::Duration::minutes(2), later));
    let bash = |command: &str| {
        mutating("claude-code", "Bash", None)
            .input(json!({ "command": command }))
            .guards(renamed.clone())
    };
    check(
        bash("ssh web-02 x"),
        allowed("claude-code", "Bash", vec![guard_of(web())]),
    );
    check(bash("ssh web-01 x"), which_vm("claude-code", "Bash", None));
}

#[test]
fn only_a_mutating_tool_reads_guards_and_its_vm_argument_says_which() {
    let mut row = mutating("ssh", "run", Some("host")).input(json!({"host": "web-01"}));
    assert_eq!(
        wanted(&row.classification()),
        Some(Wanted::Vm("web-01".into()))
    );
    row.input = json!({});
    assert_eq!(wanted(&row.classification()), Some(Wanted::All));
    for class in [ToolClass::ReadOnly, ToolClass::Unknown] {
        assert_eq!(wanted(&call("ssh", "run", class).classification()), None);
    }
}

#[test]
fn each_reason_reads_as_the_sentence_hosts_have_always_been_given() {
    let rows = [
        (
            Decision::Allow(Allowed::ReadOnly {
                server: "claude-code".into(),
                tool: "Read".into(),
            }),
            "claude-code/Read is read-only in rewind's tool catalog: it does not change a guest",
        ),
        (
            allowed("ssh", "run", vec![guard_of(web())]),
            "ssh/run is mutating, and VM web-01 was guarded at 2026-12-01T11:55:00Z for change c1 (within the last 15 min)",
        ),
        (
            not_guarded("db-01", Sources::Journal),
            "ssh/run changes VM db-01 (its argument host), and db-01 has no guarded record in rewind's journal from the last 15 min: guard db-01 first (the zerto_guard_before_mutate tool, or `rewind guard db-01 --agent <agent> --action \"<what>\" --change <id>`), then run ssh/run again",
        ),
        (
            mentioned_not_guarded(&["db-01", "files-01"]),
            "claude-code/Bash is mutating and this call names VMs db-01, files-01, which have no guarded record in rewind's journal from the last 15 min: guard db-01, files-01 first (the zerto_guard_before_mutate tool, or `rewind guard <vm> --agent <agent> --action \"<what>\" --change <id>` for each), then run claude-code/Bash again",
        ),
        (
            ambiguous("ssh", "run", "build-agent"),
            "ssh/run is mutating, and \"build-agent\" names more than one VM in rewind's journal: build-agent at Boston (s1.vm-3, 10.0.0.13), build-agent at Denver (s2.vm-3, 10.1.0.13). rewind cannot tell which one this call changes, so it does not take a guard of one for the other. Allow it only if the VM it changes was guarded for this change; to be asked less, name the VM by its identifier.",
        ),
        (
            Decision::FailClosed(Failure::Guards {
                source: GuardSource::TeamServer,
                server: "ssh".into(),
                tool: "run".into(),
                error: "it did not answer".into(),
            }),
            "rewind cannot read the team server's guards, so it cannot tell whether the VM was guarded; ssh/run is denied (fail closed): it did not answer",
        ),
    ];
    for (decision, sentence) in rows {
        assert_eq!(decision.to_string(), sentence);
    }
}

#[test]
fn a_huge_reference_is_quoted_short_and_a_window_reads_naturally() {
    let huge = "web-01".repeat(200_000);
    let reason = not_guarded(&huge, Sources::Journal).to_string();
    assert!(reason.len() < 1_000, "a reason of {} bytes", reason.len());
    assert!(reason.contains("1200000 bytes in all"));
    assert_eq!(decision::window_words(Duration::from_secs(900)), "15 min");
    assert_eq!(decision::window_words(Duration::from_secs(90)), "90 s");
}

#[test]
fn only_a_question_has_a_remedy_and_only_a_failure_fails() {
    let question = which_vm("ssh", "run", None);
    assert_eq!(question.permission(), Permission::Ask);
    assert!(question.remedy().unwrap().contains("--vm-arg <argument>"));
    let failure = Decision::FailClosed(Failure::Stdin {
        error: "broken pipe".into(),
    });
    assert_eq!(
        (failure.permission(), failure.failed(), failure.remedy()),
        (Permission::Deny, true, None)
    );
    let deny = not_guarded("db-01", Sources::Journal);
    assert_eq!(
        (deny.permission(), deny.failed()),
        (Permission::Deny, false)
    );
}

/// A guard of web-01 (change c1) that tagged VPGs `tagged`, then a `protection_changed` record
/// `minutes` ago with `lines` (outcome, VPG).
fn changed_after_guard(
    tagged: &[&str],
    lines: &[(JournalOutcome, &str)],
    minutes: i64,
) -> GuardRecords {
    let line = |outcome: JournalOutcome, vpg: &str| {
        crate::audit_journal::JournalVpg::new(&format!("id-{vpg}"), vpg, outcome)
    };
    let mut guard = record(web(), "c1", "guarded", 5);
    guard.vpgs = tagged
        .iter()
        .map(|v| line(JournalOutcome::Tagged, v))
        .collect();
    let mut change = record(web(), "c1", "protection_changed", minutes);
    change.kind = RecordKind::ProtectionChanged;
    change.vpgs = lines.iter().map(|(o, v)| line(o.clone(), v)).collect();
    GuardRecords {
        namings: vec![(guard.time, web())],
        records: vec![guard, change],
        sources: Sources::Journal,
    }
}

fn protection_changed(added: &[&str], removed: &[&str]) -> Decision {
    let names = |vpgs: &[&str]| vpgs.iter().map(|v| v.to_string()).collect();
    Decision::Deny(Denied::ProtectionChanged {
        server: "ssh".into(),
        tool: "run".into(),
        vm: "web-01".into(),
        change_id: "c1".into(),
        added: names(added),
        removed: names(removed),
    })
}

#[test]
fn a_vm_whose_vpgs_changed_after_its_guard_is_denied_when_the_guard_no_longer_covers_it() {
    use JournalOutcome::{Added, Removed};
    let ssh = || mutating("ssh", "run", Some("host")).input(json!({"host": "web-01"}));
    // A VPG added since holds no tag of the change.
    check(
        ssh().guards(changed_after_guard(&["web-dr"], &[(Added, "app-tier")], 1)),
        protection_changed(&["app-tier"], &[]),
    );
    // Every VPG the guard tagged is gone: no way back is left.
    check(
        ssh().guards(changed_after_guard(&["web-dr"], &[(Removed, "web-dr")], 1)),
        protection_changed(&[], &["web-dr"]),
    );
    // One of two gone: the other still holds the tag, and the guard stands.
    let one_left = changed_after_guard(&["web-dr", "web-local"], &[(Removed, "web-dr")], 1);
    let guard = one_left.records[0].clone();
    check(ssh().guards(one_left), allowed("ssh", "run", vec![guard]));
    // A change said before the guard was answered by that guard.
    let before = changed_after_guard(&["web-dr"], &[(Added, "app-tier")], 10);
    let guard = before.records[0].clone();
    check(ssh().guards(before), allowed("ssh", "run", vec![guard]));
    // In the input of a tool without a VM argument, too.
    check(
        mutating("ssh", "run", None)
            .input(json!({"command": "ssh web-01 reboot"}))
            .guards(changed_after_guard(&["web-dr"], &[(Added, "app-tier")], 1)),
        protection_changed(&["app-tier"], &[]),
    );
}

#[test]
fn a_tool_of_rewinds_own_server_named_with_a_join_is_its_gateways_and_only_such_a_one() {
    assert_eq!(
        through_gateway("zerto-rewind", "fs__write_file"),
        Some(("fs", "write_file"))
    );
    assert_eq!(
        through_gateway("zerto-rewind", "fs__write__file"),
        Some(("fs", "write__file")),
        "the first join ends the upstream's name, which holds no _"
    );
    assert_eq!(
        through_gateway("zerto-rewind", "zerto_guard_before_mutate"),
        None
    );
    assert_eq!(
        through_gateway("ssh", "fs__write_file"),
        None,
        "another server's tool is its own"
    );
    assert_eq!(through_gateway("zerto-rewind", "__x"), None);
}

#[test]
fn through_the_gateway_only_a_mutating_tool_is_passed_on_unguarded_here() {
    let class = |c: ToolClass| Classification {
        server: "fs".into(),
        tool: "write_file".into(),
        vm: None,
        class: c,
        source: Source::Catalog,
        vm_arg: None,
        question: None,
    };
    let pass = gateway_pass(&class(ToolClass::Mutating)).expect("a mutating one goes on");
    assert!(
        pass.to_string().contains("the gateway guards the VM"),
        "{pass}"
    );
    assert_eq!(gateway_pass(&class(ToolClass::ReadOnly)), None);
    assert_eq!(
        gateway_pass(&class(ToolClass::Unknown)),
        None,
        "unknown is still asked about"
    );
}
