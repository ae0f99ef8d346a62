//! The layout checks themselves, on small workspaces planted in a temporary folder: each rule
//! fails on what it must find and passes what it must allow.

use std::fs;
use std::path::Path;

use tidy::Workspace;

/// A small workspace written to a temporary folder: `files` as (path, code).
fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, code) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, code).unwrap();
    }
    let workspace = Workspace::read(dir.path());
    (dir, workspace)
}

const CARGO: (&str, &str) = ("app/Cargo.toml", "[package]\nname = \"app\"\n");

#[test]
fn a_planted_circle_between_two_files_is_found_and_named() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod a; mod b;"),
        ("app/src/a.rs", "pub struct A; pub fn f(_: crate::b::B) {}"),
        ("app/src/b.rs", "use crate::a::A; pub struct B(A);"),
    ]);
    let circles = workspace.circles();
    assert_eq!(circles.len(), 1);
    assert_eq!(
        circles[0].files,
        [Path::new("app/src/a.rs"), Path::new("app/src/b.rs")]
    );
    let text = circles[0].to_string();
    assert!(
        text.contains("app/src/a.rs uses B of app/src/b.rs"),
        "{text}"
    );
}

#[test]
fn a_planted_circle_in_a_test_crate_or_a_binary_is_found_too() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/main.rs", "mod a; mod b;"),
        ("app/src/a.rs", "pub fn f() { super::b::g() }"),
        ("app/src/b.rs", "pub fn g() { super::a::f() }"),
        ("app/tests/t/main.rs", "mod c; mod d;"),
        ("app/tests/t/c.rs", "use crate::d::*; pub fn h() { k() }"),
        ("app/tests/t/d.rs", "pub fn k() { crate::c::h() }"),
    ]);
    assert_eq!(workspace.circles().len(), 2);
}

#[test]
fn a_planted_circle_through_a_folder_is_found_among_its_siblings() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod cli; mod hook; mod context;"),
        ("app/src/cli.rs", "pub struct Args(crate::hook::Host);"),
        (
            "app/src/hook/mod.rs",
            "mod host; pub use host::Host; fn f(_: crate::context::C) {}",
        ),
        ("app/src/hook/host.rs", "pub struct Host;"),
        ("app/src/context.rs", "pub struct C(crate::cli::Args);"),
    ]);
    assert!(workspace.circles().is_empty(), "no circle of files");
    let circles = workspace.folder_circles();
    assert_eq!(circles.len(), 1);
    assert_eq!(
        circles[0].files,
        [
            Path::new("app/src/cli.rs"),
            Path::new("app/src/context.rs"),
            Path::new("app/src/hook/mod.rs")
        ]
    );
}

#[test]
fn a_face_whose_item_a_child_uses_is_named_and_one_that_reexports_is_not() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod shop; pub struct Shared;"),
        (
            "app/src/shop/mod.rs",
            "mod till; mod stock; pub use stock::Item;",
        ),
        (
            "app/src/shop/till.rs",
            "use super::Item; use crate::Shared;",
        ),
        ("app/src/shop/stock.rs", "pub struct Item;"),
    ]);
    let used = workspace.faces_used();
    assert_eq!(used.len(), 1, "{used:?}");
    assert_eq!(used[0].face, Path::new("app/src/lib.rs"));
    assert_eq!(used[0].child, Path::new("app/src/shop/till.rs"));
    assert!(used[0].names.contains("Shared"));
    assert!(workspace.circles().is_empty());
}

#[test]
fn a_long_file_counts_its_code_and_not_its_tests() {
    let code = "fn f() {}\n".repeat(5);
    let tests = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n",
        "fn t() {}\n".repeat(10)
    );
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", &format!("{code}{tests}")),
        ("app/tests/long.rs", &"fn t() {}\n".repeat(20)),
    ]);
    assert!(workspace.long_files(5, &[]).is_empty());
    let long = workspace.long_files(4, &[]);
    assert_eq!(long.len(), 1);
    assert_eq!(long[0].lines, 5);
    assert!(workspace.long_files(4, &["app/src/lib.rs"]).is_empty());
}

#[test]
fn a_planted_circle_through_a_method_of_another_file_is_found() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod model; mod history;"),
        (
            "app/src/model.rs",
            "pub struct World; impl World { fn advance(&mut self) { self.settle() } }",
        ),
        (
            "app/src/history.rs",
            "use crate::model::World; impl World { pub fn settle(&mut self) {} }",
        ),
    ]);
    let circles = workspace.circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0]
            .to_string()
            .contains("uses World::settle of app/src/history.rs")
    );
}

#[test]
fn a_room_that_names_a_sibling_through_its_face_is_named() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod shop;"),
        (
            "app/src/shop/mod.rs",
            "mod till; mod stock; mod price; pub use stock::Item;",
        ),
        (
            "app/src/shop/till.rs",
            "use super::Item; use super::price::Price;",
        ),
        ("app/src/shop/stock.rs", "pub struct Item;"),
        ("app/src/shop/price.rs", "pub struct Price;"),
    ]);
    let passed = workspace.faces_passed_through();
    assert_eq!(passed.len(), 1, "{passed:?}");
    assert_eq!(passed[0].child, Path::new("app/src/shop/till.rs"));
    assert!(passed[0].names.contains("Item") && !passed[0].names.contains("Price"));
}

#[test]
fn a_module_whose_file_is_missing_or_unreadable_is_a_problem() {
    let (_dir, workspace) = planted(&[
        CARGO,
        ("app/src/lib.rs", "mod gone; mod broken;"),
        ("app/src/broken.rs", "fn ("),
    ]);
    let problems = workspace.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("mod gone;")));
}
