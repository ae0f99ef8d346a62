//! One Rust file parsed, and which of its items are test code.

use std::path::Path;

use syn::spanned::Spanned;

/// A file read and parsed, or why it could not be.
pub(crate) fn parse(path: &Path) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| format!("{}: not Rust syn reads: {e}", path.display()))
}

/// Whether `attrs` make an item test code: `#[test]` (or `#[tokio::test]`), `#[cfg(test)]` or
/// `#[cfg(all(test, ..))]`.
pub(crate) fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if attr
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "test")
        {
            return true;
        }
        if !attr.path().is_ident("cfg") {
            return false;
        }
        let Ok(list) = attr.meta.require_list() else {
            return false;
        };
        let predicate: String = list
            .tokens
            .to_string()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        predicate == "test" || predicate.starts_with("all(test,")
    })
}

/// The attributes of an item, for the kinds that carry them.
pub(crate) fn attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The lines of `text` (the file `file` was parsed from) that are not test code: every line but
/// those of a test item, its attributes and doc comments included.
pub(crate) fn non_test_lines(text: &str, file: &syn::File) -> usize {
    let total = text.lines().count();
    let mut test_lines = 0;
    let mut stack: Vec<&syn::Item> = file.items.iter().collect();
    while let Some(item) = stack.pop() {
        if is_test(attrs(item)) {
            let span = item.span();
            test_lines += span.end().line + 1 - span.start().line;
        } else if let syn::Item::Mod(syn::ItemMod {
            content: Some((_, items)),
            ..
        }) = item
        {
            stack.extend(items);
        }
    }
    total.saturating_sub(test_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_items_with_their_attributes_are_left_out_of_the_count() {
        let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        let file = syn::parse_file(text).unwrap();
        assert_eq!(non_test_lines(text, &file), 2);
    }

    #[test]
    fn a_cfg_that_only_may_be_test_is_not_test_code() {
        let item: syn::ItemFn = syn::parse_quote! {
            #[cfg(any(test, feature = "fuzzing"))]
            fn f() {}
        };
        assert!(!is_test(&item.attrs));
        let item: syn::ItemFn = syn::parse_quote! {
            #[cfg(all(test, unix))]
            fn f() {}
        };
        assert!(is_test(&item.attrs));
    }
}
