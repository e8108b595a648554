//! `${NAME}` in a command-line value replaced by the environment variable `NAME`, so that API
//! keys stay out of command lines (and out of `ps`, shell histories and logs).

/// `text` with each `${NAME}` replaced by the value of the variable `NAME`; an error naming
/// the first variable that is not set (no value is ever shown).
pub fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err("a ${ without its }".to_owned());
        };
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| format!("the variable ${{{name}}} is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
