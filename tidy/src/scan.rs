//! What a module's code names: its `use` trees, every path and macro call in its tokens.

use std::collections::BTreeSet;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;

/// One name a `use` brings in: `path` from where the `use` stands, and the name it is known by
/// (`None` for a glob).
#[derive(Debug, Clone)]
pub(crate) struct Import {
    pub(crate) path: Vec<String>,
    pub(crate) name: Option<String>,
}

/// What the code of one module names.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Each `use` of the module, nested ones in function bodies included.
    pub(crate) imports: Vec<Import>,
    /// Each path its tokens name, a lone identifier included (`Foo`, `crate::a::b`, `super::f`).
    pub(crate) paths: Vec<Vec<String>>,
    /// The macros it calls by name (`serialize_as_text!`).
    pub(crate) macro_calls: BTreeSet<String>,
}

impl Names {
    /// Reads an item that is neither test code nor a module: its uses and its tokens.
    pub(crate) fn read(&mut self, item: &syn::Item) {
        let mut uses = Uses(&mut self.imports);
        uses.visit_item(item);
        if !matches!(item, syn::Item::Use(_)) {
            scan(item.to_token_stream(), self);
        }
    }
}

/// Collects every `use` in an item, however deep, leaving out `use` trees that start with `::`
/// (another crate by definition).
struct Uses<'a>(&'a mut Vec<Import>);

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            flatten(&item.tree, &mut Vec::new(), self.0);
        }
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A module inside a function body is read as its own module nowhere; its uses are not this
        // module's.
    }
}

/// Each name of a use tree with the path it comes from.
pub(crate) fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Import>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(ident(&p.ident));
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push(named(prefix, &ident(&n.ident), None)),
        syn::UseTree::Rename(r) => {
            out.push(named(prefix, &ident(&r.ident), Some(ident(&r.rename))));
        }
        syn::UseTree::Glob(_) => out.push(Import {
            path: prefix.clone(),
            name: None,
        }),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix, out)),
    }
}

/// `use a::b` (or `use a::{self}`, which names `a`), known as `rename` when given.
fn named(prefix: &[String], last: &str, rename: Option<String>) -> Import {
    let mut path = prefix.to_vec();
    if last != "self" {
        path.push(last.to_string());
    }
    let name = rename.or_else(|| path.last().cloned());
    Import { path, name }
}

fn ident(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_string).unwrap_or(text)
}

/// Every path and macro call in `tokens`, groups included. A path is identifiers joined by `::`; one
/// that starts with `::` names another crate and is skipped.
fn scan(tokens: TokenStream, names: &mut Names) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => {
                scan(g.stream(), names);
                i += 1;
            }
            TokenTree::Ident(first) => {
                let mut path = vec![first.to_string()];
                i += 1;
                while let (true, Some(TokenTree::Ident(next))) =
                    (colons_at(&tokens, i), tokens.get(i + 2))
                {
                    path.push(next.to_string());
                    i += 3;
                }
                if bang_call_at(&tokens, i) {
                    names
                        .macro_calls
                        .insert(path.last().cloned().unwrap_or_default());
                }
                names.paths.push(path);
            }
            _ if colons_at(&tokens, i) => {
                i += 2;
                while matches!(tokens.get(i), Some(TokenTree::Ident(_)))
                    && colons_at(&tokens, i + 1)
                {
                    i += 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// Whether `::` stands at `i`.
fn colons_at(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Whether a macro call's `!` and its group stand at `i`.
fn bang_call_at(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(p)), Some(TokenTree::Group(_))) if p.as_char() == '!'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_of(code: &str) -> Names {
        let file = syn::parse_file(code).unwrap();
        let mut names = Names::default();
        file.items.iter().for_each(|item| names.read(item));
        names
    }

    #[test]
    fn use_trees_give_each_name_its_path() {
        let names = names_of("use crate::{a::{self, B as C}, d::*};");
        let got: Vec<(String, Option<String>)> = names
            .imports
            .iter()
            .map(|i| (i.path.join("::"), i.name.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("crate::a".into(), Some("a".into())),
                ("crate::a::B".into(), Some("C".into())),
                ("crate::d".into(), None),
            ]
        );
    }

    #[test]
    fn paths_in_code_and_in_macro_calls_are_found_and_other_crates_skipped() {
        let names = names_of(
            "fn f() { let x = super::g::h(); format!(\"{}\", crate::k::K); ::std::mem::drop(x); \
             my_macro!(1); }",
        );
        assert!(
            names
                .paths
                .contains(&vec!["super".into(), "g".into(), "h".into()])
        );
        assert!(
            names
                .paths
                .contains(&vec!["crate".into(), "k".into(), "K".into()])
        );
        assert!(
            !names
                .paths
                .iter()
                .any(|p| p.first().is_some_and(|s| s == "std"))
        );
        assert!(names.macro_calls.contains("my_macro"));
        assert!(names.macro_calls.contains("format"));
    }

    #[test]
    fn a_use_in_a_function_body_is_the_modules_too() {
        let names = names_of("fn f() { use crate::a::{B, C}; }");
        assert_eq!(names.imports.len(), 2);
    }
}
