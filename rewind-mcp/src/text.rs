//! Every word the model or the human reads from this server, in one place: the server's instructions,
//! the rewind prompt, each tool's description, and the form that asks the human about an unknown tool.
//!
//! Descriptions are written for the model: when to call the tool, what the result means, and what to
//! do next. They use the words of CONTEXT.md (tagged checkpoint, VPG, protecting VPG, guard, bounded
//! recover, change id) and never its "avoid" words.

/// The server's instructions: the rewind loop in a few lines, read by the host at connection time.
pub const INSTRUCTIONS: &str = "\
zerto-rewind keeps the way back when you change a VM that Zerto protects. The rewind loop:
1. Before a change to a VM, call zerto_find_protection {vm} to see the VPGs that protect it.
2. Unsure whether a tool call changes the VM? Call zerto_check_tool {server, tool, vm}: mutating means guard first; read_only means go ahead; unknown means the human decides (the answer, or the question to put to them, is in the result).
3. Call zerto_guard_before_mutate {vm, agent, action, change_id}. Make the change ONLY if the verdict is guarded. On not_guarded or still_running, stop and tell the human.
4. Make the change. Keep the change id.
5. If it went wrong: zerto_list_tags {vm, change_id} shows the tagged checkpoints of the change. With the human's agreement, go back from that tag with a bounded recover: zerto_recover_file (files), zerto_failover_test or zerto_clone (the whole VM, beside production). Never a live failover.
zerto_journal shows what was guarded and recovered.";

/// What the prompt is for.
pub const PROMPT_DESCRIPTION: &str = "Change a VM the safe way: find its protection, guard it with a tagged checkpoint, change it, and know how to go back.";

/// The text of the `rewind` prompt for one change: `vm` and `change` as given, and the change id to
/// use, or none for the agent to choose one.
pub fn prompt_text(vm: &str, change: &str, change_id: Option<&str>) -> String {
    let id = match change_id {
        Some(id) => format!("Use the change id {id:?} throughout."),
        None => "Choose a short change id for it (e.g. the change in a few words and today's date, no `|`) and use it throughout.".to_string(),
    };
    format!(
        "You are about to change VM {vm}: {change}. {id}\n\
         1. Call zerto_find_protection with vm={vm:?}. If it names no VM, or several, stop and ask the human which one.\n\
         2. For every tool you will use on the VM that is not one of zerto-rewind's own, call zerto_check_tool. \
         mutating: guard first. read_only: go ahead. unknown: follow the result (the human's answer, or ask them the question it gives and wait).\n\
         3. Call zerto_guard_before_mutate with vm={vm:?}, agent=<your name>, action=<a few words on the change> and the change id. \
         Go on ONLY if the verdict is guarded. On not_guarded or still_running, stop and show the human the result.\n\
         4. Make the change.\n\
         5. If it went wrong, call zerto_list_tags with vm={vm:?} and the change id, show the human the tagged checkpoints \
         of the change, and ask them how to go back: zerto_recover_file for files, zerto_failover_test or zerto_clone for the whole VM. \
         Recover only what they agree to."
    )
}

/// zerto_find_protection.
pub const FIND_PROTECTION: &str = "\
Resolve a VM (name, host name, IP address or vmIdentifier) to exactly one VM and every VPG it is in, across all configured Zerto sites. \
Call it before you change a VM, to learn whether Zerto can rewind the change. \
The result lists each VPG with its status, whether it is protecting (only protecting VPGs get tagged checkpoints), \
its protected and recovery site, and whether file-level recovery can run for it. \
No match, several matches (the candidates are listed: repeat with the vmIdentifier of the one you mean) or a VM in no VPG is an error: \
do not guess another VM. With no protecting VPG, Zerto cannot rewind a change to this VM: tell the human before changing it. \
Next: zerto_guard_before_mutate before the change. Reads only.";

/// zerto_guard_before_mutate.
pub const GUARD: &str = "\
Guard a VM before you change it: insert one tagged checkpoint into every protecting VPG of the VM, \
read each Zerto task until it ends, and wait until each checkpoint is listed. Call it right before a change to the VM \
(a config edit, a package upgrade, a migration, deleting files), once per change. \
agent: who you are (e.g. claude-code); action: a few words on the change; change_id: an id you choose for this change \
(e.g. upgrade-nginx-2026-11-29), reused later to find and recover from the tag. No `|` or line breaks in any of them. \
The verdict decides: guarded = every protecting VPG holds a tagged checkpoint of this change, go ahead with the change. \
not_guarded = at least one protecting VPG has no checkpoint (each VPG's outcome says why), or nothing protects the VM: do NOT make the change, tell the human. \
still_running = the deadline came while Zerto tasks still ran (their ids are in the result; they were not stopped): do not make the change yet; \
check later with zerto_list_tags {vm, change_id}. Calling it again for the same VM and change_id (after a timeout, say) is safe: \
it adopts the checkpoints already inserted for that change instead of inserting them twice; for a new checkpoint use a new change_id. \
It never removes or changes anything.";

/// zerto_list_tags.
pub const LIST_TAGS: &str = "\
List the tagged checkpoints of a VM across all its VPGs, each with its checkpoint id, time and tag \
(ai:<agent> | <action> | vm=<vm> | change=<change id> | <UTC time>). Give change_id (a change id, or a tag exactly) to see only the tags of one change. \
Call it to confirm a guard, to follow a guard that ended still_running, or to find the tag to recover from after a change went wrong. \
A VPG whose checkpoints could not be read is named with its error, and makes the answer a tool error: whether it holds the tag is unknown, not no. \
Next, if the change went wrong and the human agrees to go back: zerto_recover_file, zerto_failover_test or zerto_clone with the same change_id. Reads only.";

/// zerto_check_tool.
pub const CHECK_TOOL: &str = "\
Ask whether a tool call changes a VM, before you make it. server: the MCP server that offers the tool \
(claude-code for Claude Code's own tools such as Bash or Edit); tool: its name; vm: the VM the call acts on, if you know it. \
The result's class: mutating = call zerto_guard_before_mutate for the VM first and proceed only on guarded; \
read_only = go ahead; unknown = nobody has classified the tool, which is NOT the same as safe. \
For an unknown tool this server asks the human directly when your client can show a form, and the result's next field gives their answer: \
guard_first (guard, then run), run_unguarded (run it, and say plainly that Zerto cannot rewind this change). \
When the human could not be asked, next is ask_human: put the result's question to the human yourself, wait for the answer, and do not run the tool meanwhile. \
Changes nothing, except the catalog entry the human asks to remember.";

/// zerto_add_mutating_tool.
pub const ADD_MUTATING: &str = "\
Record in the tool catalog that a tool changes VMs, so every later call of it is guarded first \
(zerto_check_tool answers mutating, and a Claude Code hook blocks it until the VM is guarded). \
Call it when the human says a tool should always get a checkpoint first. server and tool as in zerto_check_tool; \
tool may be * for every tool of the server; vm_arg (optional) names the tool's argument that holds the VM (dotted for nested arguments, e.g. target.host). \
Adding again with the same arguments changes nothing; with another vm_arg, it replaces the one recorded.";

/// zerto_add_read_only_tool.
pub const ADD_READ_ONLY: &str = "\
Record in the tool catalog that a tool never changes a VM, so it is no longer asked about. \
Call it only when the human has said so. A tool the catalog already marks mutating is not downgraded here: \
the call is a tool error that changes nothing, and the human removes that entry with the rewind CLI. Adding again changes nothing.";

/// zerto_journal.
pub const JOURNAL: &str = "\
Read the audit journal kept on this machine: every guard and every bounded recover, with the agent, action, VM, change id, \
each VPG's tag, Zerto task, task state and checkpoint, and the verdict. Filter by vm and change_id; last (1 to 500) \
gives the newest records, 20 when left out. \
Call it to report what was guarded, or to find the change id of an earlier change. Reads only.";

/// zerto_recover_file.
pub const RECOVER_FILE: &str = "\
File-level recovery (FLR): get files back as they were at the tagged checkpoint of a change, while the VM keeps running. \
Call it after a change went wrong and the human agreed to get those files back. \
change_id: the change id given to the guard (its newest tag is used), or a tag exactly. \
paths: guest paths, partition-rooted and /-separated (sda1/etc/app/app.conf, C:/ProgramData/App/app.ini); a folder comes back whole. \
destination: an absolute folder on the machine running this server; each file lands under its guest path there \
(<destination>/sda1/etc/app/app.conf), and an existing file is never replaced (choose a new folder). \
FLR runs at the VPG's recovery site, whose ZVM must be configured; the session is always unmounted afterwards. \
The result lists each file written with its size and sha256. It never touches the production VM: copying a file back onto the VM is a separate step for the human to approve.";

/// zerto_diff_since_tag.
pub const DIFF_SINCE_TAG: &str = "\
What changed in a VM's files since the tagged checkpoint of a change: each file added, removed or changed (size and last write time, \
at the tag and later), read from Zerto's journal by mounting the tag and a later checkpoint in turn (FLR at the VPG's recovery site). \
Call it when a change may have gone wrong, before proposing what to recover, and summarize the counts and the list for the human. \
change_id: the change id given to the guard, or a tag exactly. paths: guest folders or files to compare, partition-rooted \
(sda1/etc/app, C:/ProgramData/App); leave it out for every partition (slower). against: latest (the default: the VM as it is now, \
within Zerto's RPO) or a checkpoint identifier of the same VPG. content: true adds a unified diff of each changed text file within \
a size cap; ask for it only when the human wants to see the lines (it needs the recover role on a team server). \
A size or time the ZVM did not give is said as unknown; a walk that hit its bounds says where it stopped. Nothing is written to the VM.";

/// zerto_failover_test.
pub const FAILOVER_TEST: &str = "\
Start or stop a failover test of a VM from the tagged checkpoint of a change: a copy of the VM starts at the recovery site \
in an isolated test network, while production keeps running. Call start when the human wants to see the VM as it was before the change; \
call stop when they are done, with success (did the test VM look right, as the human judged it) and a short summary. Stopping removes the test VM. \
change_id: the change id given to the guard, or a tag exactly. The Zerto task is read until it ends; a task still running is reported with its id, never dropped, as a tool error with verdict still_running: do not report it done and do not start it again. \
This is never a live failover.";

/// zerto_clone.
pub const CLONE: &str = "\
Start or abort an offsite clone of a VM from the tagged checkpoint of a change: a lasting copy of the VM as it was is created at the recovery site, \
while production keeps running. Call start when the human wants that copy; abort stops a clone still being made and removes it. \
change_id: the change id given to the guard, or a tag exactly. The Zerto task is read until it ends; a task still running is reported with its id, never dropped, as a tool error with verdict still_running: do not report it done and do not start it again.";

pub const KEEP_WAY_BACK: &str = "\
Propose keeping a change's tagged checkpoints past the journal: an Extended Journal Copy of each VPG's tag into its repository, so files can be recovered from it after the journal has lost it. \
Call it when the human wants the way back to last longer than the journal's history (a guard's or zerto_list_tags' answer says until when). The server asks the human yes or no every time and does nothing without a yes; \
a client that cannot show the human a form gets a refusal to pass on. change_id: the change id given to the guard, or a tag exactly. \
A VPG without a repository is said so, with the offsite clone (zerto_clone) as the way instead.";

/// The form's message when asking the human to keep a change's tags.
pub fn keep_message(vm: &str, change: &str) -> String {
    format!(
        "An agent proposes keeping the tagged checkpoints of change {change} on VM {vm} past the journal: Zerto copies each into its VPG's Extended Journal Copy repository (a retention set, kept for the repository's retention, 30 days by default), using repository space. Nothing on the VM changes. Keep them?"
    )
}

/// zerto_restore_vm.
pub const RESTORE_VM: &str = "\
Propose restoring a VM to the tagged checkpoint of a change by a journal VM restore, when files alone cannot undo what went wrong \
(a broken boot, a bad package upgrade). The server asks the human every time, naming the VM, the checkpoint's time and what is lost, \
and restores nothing without their yes; a client that cannot show the human a form gets a refusal. \
as_name: restore it as a new VM beside the original (suggest this first: the VM keeps running as it is); in_place: restore the VM itself, \
losing every write after the tag once committed. Only from a VPG whose journal is at the VM's own site. \
The restore then waits: only the human commits it (rewind restore commit) or rolls it back (rewind restore rollback); never claim it is committed.";

/// The form's message before a journal VM restore.
pub fn restore_message(
    vm: &str,
    change: &str,
    when: Option<&str>,
    as_name: Option<&str>,
) -> String {
    let at = when.map_or_else(|| "its tag".to_string(), |w| format!("its tag of {w}"));
    match as_name {
        Some(name) => format!(
            "An agent proposes restoring VM {vm} to {at} (change {change}) as a new VM {name}, beside it: {vm} keeps running as it is. The restore waits for your commit or rollback (rewind restore commit or rollback {vm}). Restore it?"
        ),
        None => format!(
            "An agent proposes restoring VM {vm} IN PLACE to {at} (change {change}): every write to {vm} after that is lost once you commit. Until then `rewind restore rollback {vm}` undoes it. Restore it?"
        ),
    }
}

/// The form's message when asking the human about an unknown tool.
pub fn ask_message(server: &str, tool: &str, vm: Option<&str>) -> String {
    let target = match vm {
        Some(vm) => format!("VM {vm}"),
        None => "a VM".to_string(),
    };
    format!(
        "An agent wants to run the tool {tool} of {server} on {target}. Nobody has said whether this tool changes a VM. \
         Should rewind take a tagged checkpoint of {target} in every protecting VPG first, so that Zerto can rewind the change?"
    )
}

/// The title of the form's yes/no choice.
pub const ASK_CHECKPOINT_TITLE: &str = "Take a tagged checkpoint first?";
/// The title of the "yes" option.
pub const ASK_YES: &str = "Yes: guard the VM first, then run the tool";
/// The title of the "no" option.
pub const ASK_NO: &str = "No: run it without a checkpoint (Zerto cannot rewind this change)";

/// The title of the form's "remember" box.
pub fn ask_remember_title(server: &str, tool: &str) -> String {
    format!("Remember this answer for every call of {server}/{tool}")
}

/// What ticking "remember" does.
pub const ASK_REMEMBER_DESCRIPTION: &str = "With Yes, the tool is recorded as mutating: every later call is guarded first. \
With No, it is recorded as read-only: it runs without a checkpoint and is not asked about again.";

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTEXT.md's "avoid" words that have no proper use in what this server says. (Failover is
    /// avoided only when it means disaster recovery: "failover test" is the right name of a tool.)
    const AVOID: &[&str] = &[
        "undo",
        "snapshot",
        "backup",
        "user checkpoint",
        "restore point",
        "replication group",
        "healthy",
        "in sync",
        "getvms",
        "denylist",
        "allowlist",
        "silently dropped",
        "restore the vpg",
        "fail back",
        "file restore",
        "instant restore",
        "zerto mcp",
        "resume",
    ];

    #[test]
    fn what_the_model_and_the_human_read_keeps_to_the_words_of_context_md() {
        let texts = [
            ("INSTRUCTIONS", INSTRUCTIONS.to_string()),
            ("PROMPT_DESCRIPTION", PROMPT_DESCRIPTION.to_string()),
            ("prompt_text", prompt_text("web-01", "edit app.conf", None)),
            ("FIND_PROTECTION", FIND_PROTECTION.to_string()),
            ("GUARD", GUARD.to_string()),
            ("LIST_TAGS", LIST_TAGS.to_string()),
            ("CHECK_TOOL", CHECK_TOOL.to_string()),
            ("ADD_MUTATING", ADD_MUTATING.to_string()),
            ("ADD_READ_ONLY", ADD_READ_ONLY.to_string()),
            ("JOURNAL", JOURNAL.to_string()),
            ("RECOVER_FILE", RECOVER_FILE.to_string()),
            ("FAILOVER_TEST", FAILOVER_TEST.to_string()),
            ("CLONE", CLONE.to_string()),
            ("KEEP_WAY_BACK", KEEP_WAY_BACK.to_string()),
            ("keep_message", keep_message("web-01", "chg-1")),
            ("ask_message", ask_message("ssh", "run", Some("web-01"))),
            ("ASK_CHECKPOINT_TITLE", ASK_CHECKPOINT_TITLE.to_string()),
            ("ASK_YES", ASK_YES.to_string()),
            ("ASK_NO", ASK_NO.to_string()),
            ("ask_remember_title", ask_remember_title("ssh", "run")),
            (
                "ASK_REMEMBER_DESCRIPTION",
                ASK_REMEMBER_DESCRIPTION.to_string(),
            ),
        ];
        for (name, text) in texts {
            let lower = text.to_lowercase();
            for word in AVOID {
                assert!(!lower.contains(word), "{name} says {word:?}: {text}");
            }
        }
    }
}
