//! README's table of error codes is `rpcwire::codes`' table: every code rpcwire answers with
//! has its row, and no row names a code the table does not have.

#[test]
fn the_readme_lists_every_code_of_the_table_and_no_other() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    let section = readme
        .split("## Error codes")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has an Error codes section");
    let listed: Vec<i64> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| -"))
        .filter_map(|rest| rest.split(' ').next()?.parse::<i64>().ok())
        .map(|code| -code)
        .collect();
    let table: Vec<i64> = rpcwire::codes::ALL.iter().map(|&(code, _)| code).collect();
    assert_eq!(listed, table, "README's rows against codes::ALL, in order");
}
