//! Where the generated code finds the runtime: the path of `tools-schema` (for the
//! derives) and of `tools-registry` (for `#[tool]`), whichever of those crates or
//! `tools-runtime` (which re-exports both under its hidden `__private` module) the user depends on, under
//! whatever name (`proc-macro-crate` reads the user's manifest).

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// One way to reach the crate: a package to look for and the path below it.
struct Route {
    package: &'static str,
    /// The package's library name, used when the macro expands inside that very package
    /// (its integration tests, doc tests and examples name it like any dependent does; the
    /// library itself does not use the macros).
    itself: &'static str,
    below: &'static [&'static str],
}

/// The schema crate: itself, or through the front door.
const SCHEMA: [Route; 2] = [
    Route {
        package: "tools-schema",
        itself: "tools_schema",
        below: &[],
    },
    Route {
        package: "tools-runtime",
        itself: "tools_runtime",
        below: &["__private", "schema"],
    },
];

/// The registry crate: itself, or through the front door.
const REGISTRY: [Route; 2] = [
    Route {
        package: "tools-registry",
        itself: "tools_registry",
        below: &[],
    },
    Route {
        package: "tools-runtime",
        itself: "tools_runtime",
        below: &["__private", "registry"],
    },
];

/// The path of `tools-schema` in the user's crate.
pub(crate) fn schema() -> TokenStream {
    resolve(&SCHEMA, |package| crate_name(package).ok())
}

/// The path of `tools-registry` in the user's crate.
pub(crate) fn registry() -> TokenStream {
    resolve(&REGISTRY, |package| crate_name(package).ok())
}

/// The first route whose package is found; else the first route's own name (the error
/// then says which crate is missing).
fn resolve(routes: &[Route], find: impl Fn(&str) -> Option<FoundCrate>) -> TokenStream {
    for route in routes {
        let root = match find(route.package) {
            Some(FoundCrate::Itself) => route.itself.to_owned(),
            Some(FoundCrate::Name(name)) => name,
            None => continue,
        };
        return path(&root, route.below);
    }
    routes
        .first()
        .map(|route| path(route.itself, &[]))
        .unwrap_or_default()
}

fn path(root: &str, below: &[&str]) -> TokenStream {
    let root = Ident::new(root, Span::call_site());
    let below = below
        .iter()
        .map(|segment| Ident::new(segment, Span::call_site()));
    quote!(::#root #(::#below)*)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(found: &[(&str, FoundCrate)]) -> String {
        resolve(&SCHEMA, |package| {
            found
                .iter()
                .find(|(name, _)| *name == package)
                .map(|(_, f)| f.clone())
        })
        .to_string()
    }

    #[test]
    fn the_schema_crate_is_found_directly_or_through_the_front_door() {
        let direct = FoundCrate::Name("schema_renamed".into());
        assert_eq!(resolved(&[("tools-schema", direct)]), ":: schema_renamed");
        assert_eq!(
            resolved(&[("tools-schema", FoundCrate::Itself)]),
            ":: tools_schema"
        );
        let front = FoundCrate::Name("tools_runtime".into());
        assert_eq!(
            resolved(&[("tools-runtime", front)]),
            ":: tools_runtime :: __private :: schema"
        );
        let both = [
            ("tools-runtime", FoundCrate::Name("rt".into())),
            ("tools-schema", FoundCrate::Name("tools_schema".into())),
        ];
        assert_eq!(resolved(&both), ":: tools_schema");
        assert_eq!(resolved(&[]), ":: tools_schema");
    }
}
