//! The workspace's crates depend on each other one way only, the crate graph being the layer
//! graph (read from `cargo metadata`: a crate that names a crate of its own layer or above
//! fails); inside each crate, the top-level modules depend on each other one way only too, in
//! the order of the data flow: json → message → parse → frame / encode / pool / correlate →
//! dispatch → serve / transport (see DESIGN.md). Read from the `crate::` paths in the code of
//! each crate's `src/`, so that a back edge, or an edge between two modules of the same layer,
//! fails CI. The compiler holds the crate boundaries; this test holds their order.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module's layer: a module may use only modules of lower layers.
const LAYERS: &[(&str, u32)] = &[
    ("json", 0),
    ("error_answer", 4),
    ("codes", 0),
    ("sync", 0),
    ("cfg", 0),
    ("message", 1),
    ("parse", 2),
    ("trace", 2),
    ("frame", 3),
    ("encode", 3),
    ("pool", 3),
    ("correlate", 3),
    ("dispatch", 4),
    ("serve", 5),
    ("transport", 5),
    ("websocket", 6),
    ("http", 7),
    ("proxy", 8),
    ("mcp", 8),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|&(_, layer)| layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_owned())
}

/// The top-level modules named by `crate::…` paths in the code of `text` (comments, where
/// doc links may point anywhere, are skipped). A `use crate::{a, b}` group names each.
fn used_modules(text: &str) -> Vec<(usize, String)> {
    let mut used = Vec::new();
    let mut in_group: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                in_group = Some(number);
                rest = group;
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // `rpcwire::…`-style paths inside `crate::` are not modules of this crate.
            if !name.is_empty() && name.chars().next().is_some_and(char::is_lowercase) {
                used.push((number + 1, name));
            }
            rest = after;
        }
        if in_group.is_some() {
            // Inside `use crate::{…}`: each item that starts a path is a top-level module.
            for item in rest.split([',', '{', '}', ';']) {
                let item = item.trim();
                let head: String = item
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty()
                    && head.chars().next().is_some_and(char::is_lowercase)
                    && (item.contains("::") || layer(&head).is_some())
                    && head != "self"
                {
                    used.push((number + 1, head));
                }
            }
            if code.contains("};") {
                in_group = None;
            }
        }
    }
    used
}

/// Each crate of the workspace and its layer: a crate may depend only on crates of lower layers.
const CRATES: &[(&str, u32)] = &[
    ("rpcwire-wire", 0),
    ("rpcwire-core", 1),
    ("rpcwire-http", 2),
    ("rpcwire-proxy", 3),
    ("rpcwire-mcp", 3),
    ("rpcwire", 9),
];

/// The facade: a crate's doc examples may use it (a dev-dependency), as its users write them.
const FACADE: &str = "rpcwire";

fn crate_layer(name: &str) -> Option<u32> {
    CRATES
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
        .map(|&(_, layer)| layer)
}

/// The source folders of the workspace's crates: the facade's `src/` and each `crates/*/src/`.
fn source_roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src")];
    for entry in fs::read_dir(root.join("crates")).expect("crates/ is readable") {
        let src = entry.expect("a directory entry").path().join("src");
        if src.is_dir() {
            roots.push(src);
        }
    }
    roots.sort();
    roots
}

#[test]
fn crates_depend_on_lower_crates_only() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut problems = Vec::new();
    let mut local_edges = 0;
    for package in packages {
        let name = package["name"].as_str().expect("a package name");
        let Some(from) = crate_layer(name) else {
            problems.push(format!("crate `{name}` has no layer in tests/layers.rs"));
            continue;
        };
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let to_name = dependency["name"].as_str().expect("a dependency name");
            if !names.contains(&to_name) {
                continue;
            }
            if dependency["kind"].as_str() == Some("dev") && to_name == FACADE {
                continue;
            }
            local_edges += 1;
            match crate_layer(to_name) {
                Some(to) if to < from => {}
                Some(to) => problems.push(format!(
                    "`{name}` (layer {from}) depends on `{to_name}` (layer {to})"
                )),
                None => problems.push(format!("`{name}` depends on `{to_name}`, which has no layer")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "crate layering broken:\n{}",
        problems.join("\n")
    );
    // Every crate of the table is in the workspace, and the check saw the edges that exist.
    for (crate_name, _) in CRATES {
        assert!(
            names.contains(crate_name),
            "`{crate_name}` is not in the workspace: {names:?}"
        );
    }
    assert!(
        local_edges >= CRATES.len() - 1,
        "only {local_edges} edges between the workspace's crates"
    );
}

#[test]
fn top_level_modules_depend_on_lower_layers_only() {
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut problems = Vec::new();
    for src in source_roots() {
        check_modules(&src, &mut edges, &mut problems);
    }
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
    // The check sees the edges that exist (so it cannot pass by reading nothing).
    for edge in [
        ("message", "json"),
        ("parse", "message"),
        ("dispatch", "parse"),
        ("error_answer", "parse"),
        ("proxy", "dispatch"),
        ("mcp", "dispatch"),
    ] {
        assert!(
            edges.contains_key(&(edge.0.to_owned(), edge.1.to_owned())),
            "expected an edge {edge:?}; found {:?}",
            edges.keys().collect::<Vec<_>>()
        );
    }
}

/// The crates that are one module of the layer table each (their files belong to it, and
/// their own modules are inside it): the crate's folder and the module.
const WHOLE_CRATES: &[(&str, &str)] = &[("rpcwire-proxy", "proxy"), ("rpcwire-mcp", "mcp")];

/// Reads the `crate::` paths of the files of one crate's `src/` into `edges` and `problems`.
fn check_modules(src: &Path, edges: &mut BTreeMap<(String, String), String>, problems: &mut Vec<String>) {
    let crate_folder = src
        .parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str());
    let whole = WHOLE_CRATES
        .iter()
        .find(|(folder, _)| Some(*folder) == crate_folder)
        .map(|&(_, module)| module);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    for file in &files {
        let Some(from) = whole.map(str::to_owned).or_else(|| module_of(src, file)) else {
            continue;
        };
        let Some(from_layer) = layer(&from) else {
            problems.push(format!(
                "{}: module `{from}` has no layer in tests/layers.rs",
                file.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("a readable source file");
        for (line, to) in used_modules(&text) {
            if to == from {
                continue;
            }
            if whole.is_some() && layer(&to).is_none() {
                // One of the crate's own modules.
                continue;
            }
            let Some(to_layer) = layer(&to) else {
                problems.push(format!(
                    "{}:{line}: `crate::{to}` is not a known module",
                    file.display()
                ));
                continue;
            };
            edges
                .entry((from.clone(), to.clone()))
                .or_insert_with(|| format!("{}:{line}", file.display()));
            if to_layer >= from_layer {
                problems.push(format!(
                    "{}:{line}: `{from}` (layer {from_layer}) uses `crate::{to}` (layer {to_layer})",
                    file.display()
                ));
            }
        }
    }
}

#[test]
fn the_reader_finds_every_form_of_crate_path() {
    let text = "use crate::parse::Parser;\n\
                use crate::{encode, message::{Id, RawJson}};\n\
                use crate::{\n    frame::FrameError,\n    pool,\n};\n\
                let x = crate::json::validate(b\"1\"); // crate::dispatch in a comment\n\
                /// [`link`](crate::serve)\n";
    let names: Vec<String> = used_modules(text).into_iter().map(|(_, name)| name).collect();
    assert_eq!(
        names,
        ["parse", "encode", "message", "frame", "pool", "json"],
        "{names:?}"
    );
}
