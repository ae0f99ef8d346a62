//! The layout of the whole workspace (every crate, its tests and benches included): no circle of
//! files that use one another, no face whose own items its children use, and no file of non-test
//! code longer than a newcomer reads at once but for the tables named in ARCHITECTURE.md.

use std::fs;
use std::path::PathBuf;

use tidy::Workspace;

/// The longest a file of non-test code may be, in lines (comments included, test modules not).
const LONGEST: usize = 800;

/// Files that are one list by nature (ARCHITECTURE.md, "Tables"): a route table, wire types, the
/// error enum, the built-in read-only tools.
const TABLES: &[&str] = &[
    "zvm-sim/src/api/routes.rs",
    "rewind-core/src/zvm/wire.rs",
    "rewind-core/src/error.rs",
    "rewind-core/src/catalog/builtin.rs",
];

/// The folders whose files are all tables (the simulator's wire views).
const TABLE_FOLDERS: &[&str] = &["zvm-sim/src/wire/"];

fn workspace() -> Workspace {
    Workspace::read(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
}

#[test]
fn no_files_of_any_crate_use_one_another_in_a_circle() {
    let workspace = workspace();
    assert!(workspace.file_count() > 200, "the workspace is found");
    let circles = workspace.circles();
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
fn no_file_of_non_test_code_is_longer_than_800_lines_but_the_tables() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut exempt: Vec<String> = TABLES.iter().map(|t| t.to_string()).collect();
    for folder in TABLE_FOLDERS {
        for entry in fs::read_dir(root.join(folder)).unwrap().flatten() {
            exempt.push(format!("{folder}{}", entry.file_name().to_string_lossy()));
        }
    }
    let exempt: Vec<&str> = exempt.iter().map(String::as_str).collect();
    let long: Vec<String> = workspace()
        .long_files(LONGEST, &exempt)
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
