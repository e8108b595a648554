//! The workspace's crates depend on each other one way only, the crate graph being the layer
//! graph (read from `cargo metadata`: a crate that names a crate of its own layer or above
//! fails); inside each crate, the top-level modules depend on each other one way only too, in
//! the order of the data flow: json → message → parse → frame / encode / pool / correlate →
//! dispatch → serve / middleware → transport (see DESIGN.md). Read from the `crate::` paths in the code of
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
    ("middleware", 5),
    ("transport", 6),
    ("endpoint", 7),
    ("linger", 7),
    ("halves", 7),
    ("tls", 8),
    ("websocket", 9),
    ("http", 10),
    ("proxy", 11),
    ("mcp", 11),
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

/// The files of one crate's `src/` as module paths (`dispatch/router`; a `mod.rs` as its
/// folder; `lib.rs` as ``), each with its code: comments and `#[cfg(test)] mod tests` left out.
fn module_files(src: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("a file of src/");
        let mut name = relative.with_extension("").to_string_lossy().replace('\\', "/");
        if let Some(folder) = name.strip_suffix("/mod") {
            name = folder.to_owned();
        } else if name == "lib" {
            name.clear();
        }
        let text = fs::read_to_string(&file).expect("a readable source file");
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let code: Vec<&str> = text
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect();
        modules.insert(name, code.join("\n"));
    }
    modules
}

/// The paths a file's code names from `crate::`, `super::` or `self::`, as segments (each
/// item of a `{…}` group its own path).
fn module_paths(code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start).map(|at| at + from) {
            from = at + start.len();
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| ident(c) || c == ':')
            {
                continue;
            }
            let mut segments = vec![start.trim_end_matches(':').to_owned()];
            let mut rest = &code[from..];
            loop {
                let name: String = rest.chars().take_while(|&c| ident(c)).collect();
                if name.is_empty() {
                    break;
                }
                rest = &rest[name.len()..];
                segments.push(name);
                match rest.strip_prefix("::") {
                    Some(after) => rest = after,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                for item in group.split('}').next().unwrap_or_default().split(',') {
                    let head: String = item.trim().chars().take_while(|&c| ident(c)).collect();
                    if !head.is_empty() && head != "self" {
                        paths.push([segments.clone(), vec![head]].concat());
                    }
                }
            }
            paths.push(segments);
        }
    }
    paths
}

/// The module of the crate a path from module `at` names: the longest prefix that is one.
fn resolve(at: &str, path: &[String], modules: &BTreeMap<String, String>) -> Option<String> {
    let mut base: Vec<&str> = if at.is_empty() {
        Vec::new()
    } else {
        at.split('/').collect()
    };
    let mut rest = &path[1..];
    match path[0].as_str() {
        "crate" => base.clear(),
        "super" => {
            base.pop();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    let mut found = None;
    for taken in 0..=rest.len() {
        let name: Vec<&str> = base
            .iter()
            .copied()
            .chain(rest[..taken].iter().map(String::as_str))
            .collect();
        let name = name.join("/");
        if modules.contains_key(&name) {
            found = Some(name);
        }
    }
    found
}

/// The groups of two or more modules that use each other, directly or round a circle.
fn circles(edges: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(module) = stack.pop() {
            for next in edges.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, _> = edges.keys().map(|module| (module, reach(module))).collect();
    let mut circles: Vec<Vec<String>> = Vec::new();
    for (module, seen) in &reached {
        if circles.iter().any(|circle| circle.contains(module)) {
            continue;
        }
        let circle: Vec<String> = seen
            .iter()
            .filter(|other| reached.get(other).is_some_and(|back| back.contains(*module)))
            .cloned()
            .collect();
        if circle.len() > 1 {
            circles.push(circle);
        }
    }
    circles
}

#[test]
fn no_files_of_a_crate_use_each_other_round_a_circle() {
    let mut problems = Vec::new();
    let mut edges_seen = 0;
    for src in source_roots() {
        let modules = module_files(&src);
        let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (module, code) in &modules {
            let mut used = Vec::new();
            for path in module_paths(code) {
                let Some(to) = resolve(module, &path, &modules) else {
                    continue;
                };
                // A module's own parents (`super::Item` from a child) are not an edge.
                let parent = to.is_empty() || module.starts_with(&format!("{to}/"));
                if to != *module && !parent && !used.contains(&to) {
                    used.push(to);
                }
            }
            edges_seen += used.len();
            edges.insert(module.clone(), used);
        }
        for circle in circles(&edges) {
            problems.push(format!("{}: {}", src.display(), circle.join(" ↔ ")));
        }
    }
    assert!(
        problems.is_empty(),
        "files that use each other:\n{}",
        problems.join("\n")
    );
    assert!(
        edges_seen > 100,
        "only {edges_seen} edges between files were read"
    );
}

#[test]
fn the_circle_finder_finds_a_circle_and_its_paths() {
    let paths = module_paths("use super::router::{Router, Answer};\nlet x = crate::a::b::c();\n");
    assert!(
        paths.contains(&vec!["super".into(), "router".into(), "Router".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["crate".into(), "a".into(), "b".into(), "c".into()]),
        "{paths:?}"
    );
    let modules: BTreeMap<String, String> = ["", "a", "a/b", "c"]
        .iter()
        .map(|m| (m.to_string(), String::new()))
        .collect();
    assert_eq!(
        resolve("a/b", &["super".into(), "x".into()], &modules),
        Some("a".into())
    );
    assert_eq!(
        resolve(
            "c",
            &["crate".into(), "a".into(), "b".into(), "f".into()],
            &modules
        ),
        Some("a/b".into())
    );
    let edges: BTreeMap<String, Vec<String>> = [
        ("a".to_owned(), vec!["b".to_owned()]),
        ("b".to_owned(), vec!["c".to_owned()]),
        ("c".to_owned(), vec!["a".to_owned()]),
        ("d".to_owned(), vec!["a".to_owned()]),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        circles(&edges),
        vec![vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]]
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut long = Vec::new();
    let mut read = 0;
    for src in source_roots() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let lines = fs::read_to_string(&file)
                .expect("a readable source file")
                .lines()
                .count();
            read += 1;
            if lines > 800 {
                long.push(format!("{}: {lines} lines", file.display()));
            }
        }
    }
    assert!(read > 100, "only {read} files read");
    assert!(
        long.is_empty(),
        "files over 800 lines (one concern per file):\n{}",
        long.join("\n")
    );
}
