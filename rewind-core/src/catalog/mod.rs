//! The tool catalog: which `(server, tool)` pairs are mutating, which are read-only, and the question
//! for the human about every other (unknown) tool.
//!
//! Unknown is the usual case and it is not safe: it becomes a question ("should I take a tagged
//! checkpoint first?"). The catalog is a TOML file in the XDG config dir, written atomically (a temporary
//! file renamed over it, under a lock file so two processes do not lose each other's changes). A corrupt
//! file is an error naming the file; it is never silently reset. Built-in read-only entries cover Claude
//! Code's reading tools and this project's own read tools; an entry added as mutating wins over them.
//!
//! ```toml
//! [[mutating]]
//! server = "vsphere"
//! tool = "run_in_guest"
//! vm_arg = "vm_name"     # the tool argument that names the VM (the hook reads it)
//!
//! [[read_only]]
//! server = "vsphere"
//! tool = "*"             # every tool of a server
//! ```
//!
//! The folder's rooms: `builtin` (the hosts, the built-in read-only tools, what is always asked),
//! `entry` (entries and their classification, the question), `store` (the file) and `error`.

mod builtin;
mod entry;
mod error;
mod store;

pub use builtin::{
    ALWAYS_ASK, BUILTIN_READ_ONLY, CLAUDE_CODE, CODEX, COPILOT_CLI, CURSOR, GEMINI_CLI, HOSTS,
    VSCODE, ZERTO_REWIND, always_asks,
};
pub use entry::{
    CatalogEntry, CatalogListing, Classification, ListedEntry, Source, ToolClass, question_for,
};
pub use error::{CatalogError, InvalidEntry};
pub use store::CatalogStore;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_kind::ErrorKind;

    fn store() -> (tempfile::TempDir, CatalogStore) {
        let dir = tempfile::tempdir().unwrap();
        let s = CatalogStore::new(dir.path().join("sub").join("catalog.toml"));
        (dir, s)
    }

    #[test]
    fn a_vm_restore_is_never_classified_whatever_the_catalog_holds() {
        let (_d, s) = store();
        s.add_read_only("zerto-rewind", "*").unwrap();
        let c = s
            .classify("zerto-rewind", "zerto_restore_vm", Some("web-01"))
            .unwrap();
        assert_eq!((c.class, c.source), (ToolClass::Unknown, Source::None));
        assert!(c.question.unwrap().contains("web-01"));
        for refused in [
            s.add_read_only("zerto-rewind", "zerto_restore_vm"),
            s.add_read_only_unless_mutating("zerto-rewind", "zerto_restore_vm"),
            s.add_mutating("zerto-rewind", "zerto_restore_vm", None),
        ] {
            assert!(matches!(refused, Err(CatalogError::AlwaysAsks { .. })));
        }
        s.add_mutating("zerto-rewind", "*", Some("vm")).unwrap();
        let c = s
            .classify("zerto-rewind", "zerto_restore_vm", None)
            .unwrap();
        assert_eq!(c.class, ToolClass::Unknown, "not even as mutating");
    }

    #[test]
    fn builtin_read_tools_are_read_only_and_others_are_unknown_with_a_question() {
        let (_d, s) = store();
        let c = s.classify("claude-code", "Read", None).unwrap();
        assert_eq!((c.class, c.source), (ToolClass::ReadOnly, Source::BuiltIn));
        let c = s.classify("zerto-rewind", "zerto_list_tags", None).unwrap();
        assert_eq!(c.class, ToolClass::ReadOnly);
        let c = s.classify("claude-code", "Bash", Some("web-01")).unwrap();
        assert_eq!(c.class, ToolClass::Unknown);
        let q = c.question.unwrap();
        assert!(
            q.contains("Bash") && q.contains("claude-code") && q.contains("web-01"),
            "{q}"
        );
    }

    #[test]
    fn vs_codes_documented_read_names_are_read_only_as_its_internal_ones_are() {
        let (_d, s) = store();
        for tool in ["read_file", "readFile", "listDirectory", "codebase"] {
            let c = s.classify("vscode", tool, None).unwrap();
            assert_eq!(c.class, ToolClass::ReadOnly, "{tool}");
        }
        let edit = s.classify("vscode", "editFiles", None).unwrap();
        assert_eq!(edit.class, ToolClass::Unknown);
    }

    #[test]
    fn the_guard_and_add_mutating_tool_need_no_question_but_tools_that_weaken_or_recover_do() {
        let (_d, s) = store();
        for tool in ["zerto_guard_before_mutate", "zerto_add_mutating_tool"] {
            let c = s.classify(ZERTO_REWIND, tool, None).unwrap();
            assert_eq!(
                (c.class, c.source),
                (ToolClass::ReadOnly, Source::BuiltIn),
                "{tool}"
            );
        }
        for tool in [
            "zerto_add_read_only_tool",
            "zerto_recover_file",
            "zerto_failover_test",
            "zerto_clone",
            "zerto_keep_way_back",
        ] {
            let c = s.classify(ZERTO_REWIND, tool, None).unwrap();
            assert_eq!(c.class, ToolClass::Unknown, "{tool}");
        }
    }

    #[test]
    fn the_question_for_the_human_names_the_vm_of_the_call_whatever_the_class() {
        let (_d, s) = store();
        let unknown = s.classify("ssh", "run", Some("web-01")).unwrap();
        assert_eq!(unknown.human_question(), unknown.question.clone().unwrap());
        let read_only = s.classify("claude-code", "Read", Some("web-01")).unwrap();
        assert!(read_only.question.is_none());
        let q = read_only.human_question();
        assert!(q.contains("Read") && q.contains("VM web-01"), "{q}");
    }

    #[test]
    fn the_question_without_a_vm_names_the_vm_by_its_role_once() {
        let q = question_for("ssh", "run", None);
        assert!(
            q.contains("Before it runs, should I guard the VM it changes"),
            "{q}"
        );
        assert_eq!(q.matches("the VM it").count(), 1, "{q}");
    }

    #[test]
    fn an_agent_cannot_mark_read_only_a_tool_recorded_as_mutating_by_its_entry_or_its_servers_star()
    {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("host")).unwrap();
        s.add_mutating("k8s", "*", None).unwrap();
        for (server, tool) in [("ssh", "run"), ("k8s", "exec")] {
            let err = s.add_read_only_unless_mutating(server, tool).unwrap_err();
            assert!(
                matches!(err, CatalogError::RecordedMutating { .. }),
                "{err:?}"
            );
            assert!(
                err.to_string()
                    .contains("an agent cannot mark it read-only"),
                "{err}"
            );
            assert_eq!(err.kind(), ErrorKind::Refused);
            let c = s.classify(server, tool, None).unwrap();
            assert_eq!(c.class, ToolClass::Mutating, "{server}/{tool}");
        }
        let c = s.classify("ssh", "run", None).unwrap();
        assert_eq!(c.vm_arg.as_deref(), Some("host"), "the entry is untouched");
        s.add_read_only_unless_mutating("vsphere", "list_vms")
            .unwrap();
        let c = s.classify("vsphere", "list_vms", None).unwrap();
        assert_eq!((c.class, c.source), (ToolClass::ReadOnly, Source::Catalog));
    }

    #[test]
    fn added_entries_persist_and_mutating_wins_over_builtin_read_only() {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("host")).unwrap();
        s.add_mutating("claude-code", "Read", None).unwrap();
        s.add_read_only("vsphere", "*").unwrap();
        let again = CatalogStore::new(s.path());
        let c = again.classify("ssh", "run", Some("db-01")).unwrap();
        assert_eq!(c.class, ToolClass::Mutating);
        assert_eq!(c.vm_arg.as_deref(), Some("host"));
        assert_eq!(
            again.classify("claude-code", "Read", None).unwrap().class,
            ToolClass::Mutating
        );
        assert_eq!(
            again.classify("vsphere", "list_vms", None).unwrap().class,
            ToolClass::ReadOnly
        );
        let listing = again.list().unwrap();
        assert_eq!(listing.mutating.len(), 2);
        assert!(
            listing
                .read_only
                .iter()
                .any(|e| e.builtin && e.entry.tool == "Grep")
        );
    }

    #[test]
    fn moving_a_tool_between_lists_and_removing_it() {
        let (_d, s) = store();
        s.add_read_only("ssh", "run").unwrap();
        s.add_mutating("ssh", "run", None).unwrap();
        assert_eq!(
            s.list()
                .unwrap()
                .read_only
                .iter()
                .filter(|e| !e.builtin)
                .count(),
            0
        );
        assert!(s.remove("ssh", "run").unwrap());
        assert!(!s.remove("ssh", "run").unwrap());
        assert_eq!(
            s.classify("ssh", "run", None).unwrap().class,
            ToolClass::Unknown
        );
        assert!(matches!(
            s.remove("claude-code", "Grep"),
            Err(CatalogError::BuiltIn { .. })
        ));
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_is_left_untouched() {
        let (_d, s) = store();
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        std::fs::write(s.path(), "[[mutating]]\nserver = \n").unwrap();
        let err = s.classify("a", "b", None).unwrap_err();
        assert!(
            err.to_string().contains(&s.path().display().to_string()),
            "{err}"
        );
        assert!(matches!(err, CatalogError::Corrupt { .. }));
        assert!(s.add_mutating("a", "b", None).is_err());
        assert_eq!(
            std::fs::read_to_string(s.path()).unwrap(),
            "[[mutating]]\nserver = \n"
        );
    }

    #[test]
    fn a_catalog_value_of_the_wrong_type_names_its_key_its_line_and_the_type_expected() {
        let (_d, s) = store();
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        let text = "[[read_only]]\nserver = \"a\"\ntool = \"b\"\n\n[[mutating]]\nserver = \"x\"\ntool = 5\n";
        std::fs::write(s.path(), text).unwrap();
        let err = s.classify("a", "b", None).unwrap_err();
        assert!(
            err.to_string().contains(
                "`mutating[0].tool` (line 7) is a whole number, but a string is expected"
            ),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(s.path()).unwrap(), text);
    }

    #[test]
    fn a_call_names_its_vm_through_the_entrys_vm_arg() {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("target.host")).unwrap();
        let args = serde_json::json!({"target": {"host": "web-01"}, "cmd": "reboot"});
        let c = s.classify_call("ssh", "run", &args).unwrap();
        assert_eq!(
            (c.class, c.vm.as_deref()),
            (ToolClass::Mutating, Some("web-01"))
        );
        let c = s.classify_call("ssh", "exec", &args).unwrap();
        assert_eq!((c.class, c.vm), (ToolClass::Unknown, None));
    }

    #[test]
    fn classify_refuses_an_empty_a_control_character_or_an_overlong_name_as_add_does() {
        let (_d, s) = store();
        let long = "x".repeat(201);
        let unusable = InvalidEntry::ControlCharacterOrTooLong;
        for (server, tool, field, why) in [
            (" ", "run", "server", InvalidEntry::Empty),
            ("ssh", "", "tool", InvalidEntry::Empty),
            ("ssh", "run\u{7}", "tool", unusable.clone()),
            ("ss\nh", "run", "server", unusable.clone()),
            ("ssh", long.as_str(), "tool", unusable.clone()),
        ] {
            let err = s.classify(server, tool, None).unwrap_err();
            assert!(
                matches!(&err, CatalogError::Invalid { field: f, reason } if *f == field && *reason == why),
                "{server:?}/{tool:?}: {err}"
            );
            assert_eq!(err.kind(), ErrorKind::Usage);
            assert!(s.add_mutating(server, tool, None).is_err());
        }
        let c = s.classify(" ssh ", " run ", None).unwrap();
        assert_eq!((c.server.as_str(), c.tool.as_str()), ("ssh", "run"));
    }

    #[test]
    fn empty_names_are_rejected_naming_the_field() {
        let (_d, s) = store();
        let err = s.add_mutating(" ", "x", None).unwrap_err();
        assert!(matches!(
            err,
            CatalogError::Invalid {
                field: "server",
                reason: InvalidEntry::Empty,
            }
        ));
    }

    #[test]
    fn concurrent_writers_from_many_threads_lose_no_entry() {
        let (_d, s) = store();
        std::thread::scope(|scope| {
            for i in 0..8 {
                let s = s.clone();
                scope.spawn(move || s.add_mutating("srv", &format!("tool-{i}"), None).unwrap());
            }
        });
        assert_eq!(s.list().unwrap().mutating.len(), 8);
    }
}
