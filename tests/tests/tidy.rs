//! Tidy checks over the whole workspace: the layer order of the crates, crate docs, the
//! unsafe-code ban, inherited lints and dependencies, the codemap, and banned markers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The library crates, lowest layer first. A crate may depend only on crates before it.
/// `tools-macros`, the proc-macro crate, depends on none of them (its generated code names
/// `tools-schema` and `tools-registry`, which re-export it).
const LAYERS: [&str; 14] = [
    "tools-macros",
    "tools-error",
    "tools-json",
    "tools-schema",
    "tools-presentation",
    "tools-search",
    "tools-registry",
    "tools-pipeline",
    "tools-codemode-sdk",
    "tools-codemode",
    "tools-quickjs",
    "tools-sandbox",
    "tools-runtime",
    "tools-mcp",
];

/// Crates allowed to hold `unsafe` code in named modules (engine bindings), with those
/// modules: the crate root denies it (`#![deny(unsafe_code)]`) and only those files may
/// allow it.
const UNSAFE_EXCEPTIONS: [(&str, &[&str]); 1] = [(
    "tools-quickjs",
    &[
        // Loading the prelude's bytecode.
        "src/prelude_bytecode.rs",
        // Setting the engine's memory cap from its interrupt handler.
        "src/engine/headroom.rs",
    ],
)];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("metadata is JSON")
}

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| *layer == name)
}

#[test]
fn every_layer_crate_exists() {
    let metadata = metadata();
    let names: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for layer in LAYERS {
        assert!(names.contains(&layer), "crate {layer} is missing");
    }
}

#[test]
fn no_crate_depends_on_a_higher_layer() {
    let metadata = metadata();
    let mut violations = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let Some(own) = rank(name) else { continue };
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            // Dev-dependencies may reach upward only for tests; normal and build ones may not.
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            if let Some(theirs) = rank(dep_name)
                && theirs >= own
            {
                violations.push(format!("{name} depends on {dep_name}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering broken (order: {}): {violations:?}",
        LAYERS.join(" → ")
    );
}

#[test]
fn low_layers_stay_free_of_async_runtimes() {
    // tools-macros, tools-error, tools-json, tools-schema, tools-presentation and
    // tools-search are contract crates: no tokio, no tower.
    let metadata = metadata();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if !matches!(rank(name), Some(0..=5)) {
            continue;
        }
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            assert!(
                !matches!(
                    dep_name,
                    "tokio" | "tower" | "tower-layer" | "tower-service"
                ),
                "{name} must not depend on {dep_name}"
            );
        }
    }
}

fn member_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs.push(root().join("xtask"));
    dirs.push(root().join("tests"));
    dirs
}

#[test]
fn every_crate_has_a_crate_doc_and_forbids_unsafe_code() {
    for dir in member_dirs() {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let root_file = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{name} has no crate root"));
        let text = std::fs::read_to_string(&root_file).unwrap();
        assert!(
            text.starts_with("//!") || text.starts_with("#![doc = include_str!"),
            "{} must open with a crate-level doc",
            root_file.display()
        );
        if text.starts_with("#![doc = include_str!(\"../README.md\")]") {
            let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
            assert!(
                readme.trim().len() > 100,
                "{name}/README.md is the crate doc"
            );
        }
        match UNSAFE_EXCEPTIONS.iter().find(|(krate, _)| *krate == name) {
            None => assert!(
                text.contains("#![forbid(unsafe_code)]"),
                "{} must forbid unsafe code",
                root_file.display()
            ),
            Some((_, modules)) => {
                assert!(
                    text.contains("#![deny(unsafe_code)]"),
                    "{} must deny unsafe code",
                    root_file.display()
                );
                let mut files = Vec::new();
                rust_files(&dir.join("src"), &mut files);
                for file in files {
                    let source = std::fs::read_to_string(&file).unwrap();
                    let allowed = modules.iter().any(|module| file.ends_with(module));
                    assert_eq!(
                        source.contains("allow(unsafe_code)"),
                        allowed,
                        "{}: only {modules:?} may allow unsafe code, and they must",
                        file.display()
                    );
                }
            }
        }
    }
}

#[test]
fn every_member_inherits_lints_and_workspace_dependencies() {
    for dir in member_dirs() {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("[lints]\nworkspace = true"),
            "{} must inherit the workspace lints",
            dir.display()
        );
        let mut section = String::new();
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line.to_owned();
                continue;
            }
            let is_dependency_section = section.ends_with("dependencies]");
            // A dev-dependency reaching up the layers (or a crate's own test helpers) names
            // its crate by path alone, so that `cargo package` leaves it (and the cycle) out
            // of the published manifest.
            let upward_dev = section == "[dev-dependencies]"
                && line.contains("{ path = \"")
                && !line.contains("version");
            if is_dependency_section && !upward_dev && !line.is_empty() && !line.starts_with('#') {
                assert!(
                    line.contains("workspace = true") || line.contains(".workspace = true"),
                    "{}: dependency `{line}` must come from [workspace.dependencies]",
                    dir.display()
                );
            }
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn sources_open_with_module_docs_and_carry_no_banned_markers() {
    let mut files = Vec::new();
    for dir in member_dirs() {
        rust_files(&dir, &mut files);
    }
    assert!(files.len() > 10);
    let banned = [
        concat!("#[", "ignore"),
        concat!("dbg", "!("),
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
    ];
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("//!") || text.starts_with("#![doc"),
            "{} must open with a `//!` module doc",
            file.display()
        );
        for marker in banned {
            assert!(
                !text.contains(marker),
                "{} contains {marker}",
                file.display()
            );
        }
        for (i, line) in text.lines().enumerate() {
            assert!(
                line.trim_end() == line,
                "{}:{} has trailing white space",
                file.display(),
                i + 1
            );
        }
    }
}

#[test]
fn the_codemap_names_every_member() {
    let architecture = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    for dir in member_dirs() {
        let relative = dir
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            architecture.contains(&format!("### {relative}")),
            "docs/ARCHITECTURE.md has no `### {relative}` codemap entry"
        );
    }
}

#[test]
fn the_readme_opens_with_the_two_commands_that_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let head: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    assert!(
        head.contains("cargo xtask test"),
        "README must give the test command"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.contains("cargo xtask test"),
        ".ci/run must run the README's test command"
    );
}

/// A source file's module path inside its crate (`["hook", "chain"]` for
/// `src/hook/chain.rs`; `[]` for `src/lib.rs` and `src/main.rs`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

/// The modules a file imports through `use crate::…` and `use super::…` (whole `use` items,
/// brace groups included), as module paths that exist in `modules`: each import resolves
/// to the longest existing module prefix of its path.
fn imported_modules(text: &str, own: &[String], modules: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("use ") {
        let item_start = &rest[at + 4..];
        let end = item_start.find(';').unwrap_or(item_start.len());
        let item: String = item_start[..end].split_whitespace().collect();
        rest = &item_start[end..];
        let (base, tail): (Vec<String>, &str) = if let Some(tail) = item.strip_prefix("crate::") {
            (Vec::new(), tail)
        } else if item.starts_with("super::") {
            let mut base = own.to_vec();
            let mut tail = item.as_str();
            while let Some(next) = tail.strip_prefix("super::") {
                base.pop();
                tail = next;
            }
            (base, tail)
        } else {
            continue;
        };
        // Expand one level of braces: `a::{b::C, d}` → `a::b::C`, `a::d`.
        let paths: Vec<String> = match tail.find('{') {
            Some(open) => {
                let prefix = &tail[..open];
                let inner = tail[open + 1..].trim_end_matches('}');
                inner
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(|p| format!("{prefix}{p}"))
                    .collect()
            }
            None => vec![tail.to_owned()],
        };
        for path in paths {
            let mut full = base.clone();
            full.extend(path.split("::").map(str::to_owned));
            while !full.is_empty() && !modules.contains(&full) {
                full.pop();
            }
            if !full.is_empty() && full != own {
                found.push(full);
            }
        }
    }
    found.extend(inline_modules(text, own, modules));
    found
}

/// The modules a file names by inline paths in its code (`crate::a::b::f()`,
/// `super::c::T`), outside `use` items and comments (doc links are not dependencies), each
/// resolved to the longest existing module prefix.
fn inline_modules(text: &str, own: &[String], modules: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim_start();
        if trimmed.starts_with("use ")
            || trimmed.starts_with("pub use ")
            || trimmed.starts_with("pub(crate) use ")
        {
            continue;
        }
        for (at, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            // Only a path's start: not the tail of `tools_registry::crate::` or `a::super::`.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
            let mut full: Vec<String> = if parts.first() == Some(&"crate") {
                parts.remove(0);
                Vec::new()
            } else {
                let mut base = own.to_vec();
                while parts.first() == Some(&"super") {
                    parts.remove(0);
                    base.pop();
                }
                base
            };
            full.extend(parts.iter().map(|p| (*p).to_owned()));
            while !full.is_empty() && !modules.contains(&full) {
                full.pop();
            }
            if !full.is_empty() && full != own {
                found.push(full);
            }
        }
    }
    found
}

#[test]
fn inline_paths_count_as_imports() {
    let modules = vec![
        vec!["dsl".to_owned()],
        vec!["compile".to_owned()],
        vec!["dsl".to_owned(), "rules".to_owned()],
    ];
    let own = vec!["dsl".to_owned()];
    let text = "/// See [`crate::compile::x`].\nfn f() { crate::compile::run(); super::compile::T::new(); }\n// crate::dsl::rules is a comment\n";
    assert_eq!(
        inline_modules(text, &own, &modules),
        vec![vec!["compile".to_owned()], vec!["compile".to_owned()]]
    );
}

/// No two source files import each other (rust-analyzer's rule: the dependency between two
/// modules goes one way). A parent module re-exporting its children does not count.
#[test]
fn no_two_source_files_import_each_other() {
    let mut cycles = Vec::new();
    for dir in member_dirs() {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: Vec<Vec<String>> = files.iter().map(|f| module_path(&src, f)).collect();
        let mut edges = std::collections::BTreeSet::new();
        for (file, own) in files.iter().zip(&modules) {
            let text = std::fs::read_to_string(file).unwrap();
            for target in imported_modules(&text, own, &modules) {
                // A parent importing from (re-exporting) its own descendants.
                if target.starts_with(own) {
                    continue;
                }
                edges.insert((own.join("::"), target.join("::")));
            }
        }
        for (from, to) in &edges {
            if from < to && edges.contains(&(to.clone(), from.clone())) {
                cycles.push(format!("{}: {from} <-> {to}", dir.display()));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other: {cycles:#?}"
    );
}

#[test]
fn the_ground_floor_knows_nothing_of_the_floors_above() {
    // Below the registry, the crates know JSON, schemas and presentation: approvals, code
    // runs and the pipeline belong to the floors above (the error vocabulary in
    // `tools-error` names every code, and is the one exception).
    let banned = ["approv", "run_code", "code run", "coderun", "pipeline"];
    for crate_name in ["tools-json", "tools-schema", "tools-presentation"] {
        let mut stack = vec![root().join("crates").join(crate_name).join("src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|ext| ext != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
                for word in banned {
                    assert!(
                        !text.contains(word),
                        "{} mentions {word:?}, which belongs to a higher floor",
                        path.display()
                    );
                }
            }
        }
    }
}

#[test]
fn the_front_door_stays_small() {
    // The names `tools-runtime` exports at its root: its top-level `pub use` and `pub mod`
    // items (the bodies of inline modules are not the root). At most 30, hidden ones
    // included.
    let source = std::fs::read_to_string(root().join("crates/tools-runtime/src/lib.rs")).unwrap();
    let mut names = std::collections::BTreeSet::new();
    let mut depth = 0usize;
    let mut statement = String::new();
    for line in source.lines() {
        let at_root = depth == 0;
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
        if !at_root {
            continue;
        }
        if let Some(module) = line.strip_prefix("pub mod ") {
            let end = module
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(module.len());
            names.insert(module[..end].to_owned());
            continue;
        }
        if line.starts_with("pub use ") || !statement.is_empty() {
            statement.push_str(line);
            if !line.ends_with(';') {
                // A `pub use` over several lines: its inner lines are read as it goes on.
                depth = 0;
                continue;
            }
            let path = statement
                .trim_start_matches("pub use ")
                .trim_end_matches(';');
            let list = match (path.find('{'), path.rfind('}')) {
                (Some(open), Some(close)) => &path[open + 1..close],
                _ => path.rsplit("::").next().unwrap_or(path),
            };
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                names.insert(name.rsplit(" as ").next().unwrap_or(name).to_owned());
            }
            statement.clear();
        }
    }
    assert!(
        names.contains("ToolRuntime") && names.contains("prelude") && names.contains("hooks"),
        "{names:?}"
    );
    assert!(
        names.len() <= 30,
        "tools-runtime exports {} names at its root (at most 30): {names:?}",
        names.len()
    );
}
