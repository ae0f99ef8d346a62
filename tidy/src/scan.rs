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
    /// The methods its `impl` blocks define: (the type's path as written, the method, who may
    /// call it).
    pub(crate) methods: Vec<(Vec<String>, String, Visibility)>,
    /// The methods its `impl` blocks call on their own type (`self.m(..)`, `Self::m`): (the
    /// type's path as written, the method). A method of the type defined in another file makes
    /// this one use that file.
    pub(crate) self_calls: Vec<(Vec<String>, String)>,
}

impl Names {
    /// Reads an item that is neither test code nor a module: its uses and its tokens.
    pub(crate) fn read(&mut self, item: &syn::Item) {
        let mut uses = Uses(&mut self.imports);
        uses.visit_item(item);
        if let syn::Item::Impl(block) = item
            && let Some(ty) = type_path(&block.self_ty)
        {
            self.read_impl(block, ty);
        }
        if !matches!(item, syn::Item::Use(_)) {
            scan(item.to_token_stream(), self);
        }
    }

    /// The methods an `impl` block of `ty` defines, and those it calls on its own type.
    fn read_impl(&mut self, block: &syn::ItemImpl, ty: Vec<String>) {
        for inner in &block.items {
            if let syn::ImplItem::Fn(f) = inner {
                let vis = match block.trait_ {
                    Some(_) => Visibility::Crate,
                    None => Visibility::of(&f.vis),
                };
                self.methods.push((ty.clone(), ident(&f.sig.ident), vis));
            }
        }
        let calls = own_calls(block.to_token_stream());
        self.self_calls
            .extend(calls.into_iter().map(|m| (ty.clone(), m)));
    }
}

/// The path of a type as written (`World`, `crate::zvm::ZvmClient`), generics left out; `None`
/// for a type that is not a path.
fn type_path(ty: &syn::Type) -> Option<Vec<String>> {
    match ty {
        syn::Type::Path(p) => Some(p.path.segments.iter().map(|s| ident(&s.ident)).collect()),
        syn::Type::Reference(r) => type_path(&r.elem),
        _ => None,
    }
}

/// The methods `tokens` call on their own type: `self.m(`, `self.m::<`, `Self::m`.
fn own_calls(tokens: TokenStream) -> Vec<String> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g) => out.extend(own_calls(g.stream())),
            TokenTree::Ident(id) if id == "self" => {
                if let (Some(TokenTree::Punct(dot)), Some(TokenTree::Ident(m)), Some(next)) =
                    (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3))
                    && dot.as_char() == '.'
                    && (matches!(next, TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Parenthesis)
                        || colons_at(&tokens, i + 3))
                {
                    out.push(m.to_string());
                }
            }
            TokenTree::Ident(id) if id == "Self" => {
                if let (true, Some(TokenTree::Ident(m))) =
                    (colons_at(&tokens, i + 1), tokens.get(i + 3))
                {
                    out.push(m.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// Who may call a method, as its `pub` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Visibility {
    /// The module of its `impl` and the modules inside it.
    Private,
    /// The module's parent and what is inside it (`pub(super)`).
    Super,
    /// The module a path names and what is inside it (`pub(in crate::a)`).
    In(Vec<String>),
    /// Anyone in the crate: `pub`, `pub(crate)`, a trait's method.
    Crate,
}

impl Visibility {
    fn of(vis: &syn::Visibility) -> Visibility {
        match vis {
            syn::Visibility::Inherited => Visibility::Private,
            syn::Visibility::Public(_) => Visibility::Crate,
            syn::Visibility::Restricted(r) => {
                let path: Vec<String> = r.path.segments.iter().map(|s| ident(&s.ident)).collect();
                match path.as_slice() {
                    [one] if one == "crate" => Visibility::Crate,
                    [one] if one == "super" => Visibility::Super,
                    [one] if one == "self" => Visibility::Private,
                    _ => Visibility::In(path),
                }
            }
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

    #[test]
    fn an_impl_gives_the_methods_it_defines_and_those_it_calls_on_its_own_type() {
        let names = names_of(
            "impl World { fn advance(&mut self) { self.settle(); Self::tick(1); other.skip(); } }",
        );
        let defined: Vec<&str> = names.methods.iter().map(|(_, m, _)| m.as_str()).collect();
        assert_eq!(defined, ["advance"]);
        let called: Vec<&str> = names.self_calls.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(called, ["settle", "tick"]);
        assert!(names.self_calls.iter().all(|(ty, _)| ty == &["World"]));
    }
}
