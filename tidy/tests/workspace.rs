//! The layout of the whole workspace (every crate, its tests and benches included): no circle of
//! files that use one another, no face whose own items its children use, and no file of non-test
//! code longer than a newcomer reads at once but for the tables named in ARCHITECTURE.md.

use std::path::PathBuf;
use std::sync::LazyLock;

use tidy::Workspace;

/// The longest a file of non-test code may be, in lines (comments included, test modules not).
const LONGEST: usize = 800;

/// Files that are one list by nature (ARCHITECTURE.md, "The layout test and the tables"): the simulator's route table and
/// its wire views, the client's wire types, the error enum, the built-in read-only tools.
const TABLES: &[&str] = &[
    "zvm-sim/src/api/routes.rs",
    "zvm-sim/src/wire/ltr.rs",
    "zvm-sim/src/wire/monitoring.rs",
    "zvm-sim/src/wire/sim.rs",
    "zvm-sim/src/wire/traces.rs",
    "zvm-sim/src/wire/virtualization.rs",
    "zvm-sim/src/wire/zvm.rs",
    "rewind-core/src/zvm/wire.rs",
    "rewind-core/src/error.rs",
    "rewind-core/src/catalog/builtin.rs",
];

/// The workspace's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace, read once for every test here.
fn workspace() -> &'static Workspace {
    static WORKSPACE: LazyLock<Workspace> = LazyLock::new(|| Workspace::read(&root()));
    &WORKSPACE
}

#[test]
fn every_file_of_the_workspace_is_read() {
    assert!(workspace().file_count() > 200, "the workspace is found");
    let problems = workspace().problems();
    assert!(
        problems.is_empty(),
        "a file no rule could read:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_files_of_any_crate_use_one_another_in_a_circle() {
    let circles = workspace().circles();
    let text: Vec<String> = circles.iter().map(|c| c.to_string()).collect();
    assert!(
        circles.is_empty(),
        "{} circles; cut each by moving what both sides need into a file of its own:\n{}",
        circles.len(),
        text.join("\n")
    );
}

#[test]
fn no_modules_of_one_folder_use_one_another_in_a_circle() {
    let circles = workspace().folder_circles();
    let text: Vec<String> = circles.iter().map(|c| c.to_string()).collect();
    assert!(
        circles.is_empty(),
        "{} circles among the modules of a folder (a folder inside it counts as one); cut each by \
         moving what both sides need into a module of its own:\n{}",
        circles.len(),
        text.join("\n")
    );
}

#[test]
fn no_face_defines_what_its_own_children_use() {
    let used: Vec<String> = workspace()
        .faces_used()
        .iter()
        .map(|f| {
            let names: Vec<&str> = f.names.iter().map(String::as_str).collect();
            format!(
                "{} uses {} of its face {}",
                f.child.display(),
                names.join(", "),
                f.face.display()
            )
        })
        .collect();
    assert!(
        used.is_empty(),
        "a face (mod.rs, a crate root) declares, re-exports and documents; move these into a named \
         file its children import:\n{}",
        used.join("\n")
    );
}

#[test]
fn no_room_names_a_sibling_through_its_face() {
    let passed: Vec<String> = workspace()
        .faces_passed_through()
        .iter()
        .map(|f| {
            let names: Vec<&str> = f.names.iter().map(String::as_str).collect();
            format!(
                "{} reaches {} through its face {}",
                f.child.display(),
                names.join(", "),
                f.face.display()
            )
        })
        .collect();
    assert!(
        passed.is_empty(),
        "children import siblings, never the face: name the room that defines each:\n{}",
        passed.join("\n")
    );
}

#[test]
fn no_file_of_non_test_code_is_longer_than_800_lines_but_the_tables() {
    let root = root();
    let gone: Vec<&&str> = TABLES.iter().filter(|t| !root.join(t).is_file()).collect();
    assert!(
        gone.is_empty(),
        "TABLES names files that are gone: {gone:?}"
    );
    let long: Vec<String> = workspace()
        .long_files(LONGEST, TABLES)
        .iter()
        .map(|f| format!("{}: {} lines", f.path.display(), f.lines))
        .collect();
    assert!(
        long.is_empty(),
        "split these by responsibility (a table that is one list by nature goes in TABLES and in \
         ARCHITECTURE.md):\n{}",
        long.join("\n")
    );
}
