//! The MCP methods, listed once for every server rpcwire has: the session revisions' router
//! ([`session`](crate::session)), the stateless revision ([`stateless`](crate::stateless))
//! and the MCP gateway, which forwards what the others serve from a registry. Each method has
//! its name, what it does ([`Kind`]) and whether the stateless revision (2026-07-28) still has
//! it; a server looks a method up here and serves its kind, so that a method added to MCP is
//! added once. A leaf: it knows the registry's listings, nothing of how they are served.

use crate::registry::{Listing, Registry};

/// What a method does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The session's lifecycle and state.
    Lifecycle(Lifecycle),
    /// A page of the registry's items.
    List(Listed),
    /// Runs a handler, whose target the params name.
    Call(Called),
}

/// A method of the session's lifecycle and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// Starts a session and agrees on a revision (`initialize`).
    Initialize,
    /// Says which revisions and capabilities the server has, without a session
    /// (`server/discover`).
    Discover,
    /// Answers `{}` (`ping`).
    Ping,
    /// Sets the session's log level (`logging/setLevel`).
    SetLevel,
    /// Adds (`true`) or removes a subscription to a resource's updates.
    Subscribe(bool),
}

/// What a list method lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listed {
    Tools,
    Prompts,
    Resources,
    Templates,
}

impl Listed {
    /// The member of the result that holds the items.
    #[cfg(any(feature = "http", test))]
    pub(crate) fn key(self) -> &'static str {
        match self {
            Listed::Tools => "tools",
            Listed::Prompts => "prompts",
            Listed::Resources => "resources",
            Listed::Templates => "resourceTemplates",
        }
    }

    /// The registry's items of this kind.
    pub(crate) fn listing(self, registry: &Registry) -> &Listing {
        match self {
            Listed::Tools => &registry.tool_list,
            Listed::Prompts => &registry.prompt_list,
            Listed::Resources => &registry.resource_list,
            Listed::Templates => &registry.template_list,
        }
    }
}

/// Which handler a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Called {
    /// A tool, named by `name`.
    Tool,
    /// A prompt, named by `name`.
    Prompt,
    /// A resource's reader, by `uri`.
    Read,
    /// The completion handler, for the prompt or resource in `ref`.
    Complete,
}

/// One MCP method.
#[derive(Debug)]
pub(crate) struct Method {
    /// Its name on the wire.
    pub(crate) name: &'static str,
    /// What it does.
    pub(crate) kind: Kind,
    /// Whether the stateless revision (2026-07-28) has it.
    pub(crate) stateless: bool,
}

/// Every MCP method a server of rpcwire serves itself.
pub(crate) const METHODS: &[Method] = &[
    method("initialize", Kind::Lifecycle(Lifecycle::Initialize), false),
    method("ping", Kind::Lifecycle(Lifecycle::Ping), false),
    method("server/discover", Kind::Lifecycle(Lifecycle::Discover), true),
    method("logging/setLevel", Kind::Lifecycle(Lifecycle::SetLevel), false),
    method(
        "resources/subscribe",
        Kind::Lifecycle(Lifecycle::Subscribe(true)),
        false,
    ),
    method(
        "resources/unsubscribe",
        Kind::Lifecycle(Lifecycle::Subscribe(false)),
        false,
    ),
    method("tools/list", Kind::List(Listed::Tools), true),
    method("prompts/list", Kind::List(Listed::Prompts), true),
    method("resources/list", Kind::List(Listed::Resources), true),
    method("resources/templates/list", Kind::List(Listed::Templates), true),
    method("tools/call", Kind::Call(Called::Tool), true),
    method("prompts/get", Kind::Call(Called::Prompt), true),
    method("resources/read", Kind::Call(Called::Read), true),
    method("completion/complete", Kind::Call(Called::Complete), true),
];

const fn method(name: &'static str, kind: Kind, stateless: bool) -> Method {
    Method {
        name,
        kind,
        stateless,
    }
}

/// The method called `name`, if MCP has it.
pub(crate) fn find(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|method| method.name == name)
}

/// What the method called `name` does, if MCP has it.
pub(crate) fn kind(name: &str) -> Option<Kind> {
    find(name).map(|method| method.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_is_listed_once_and_found_by_its_name() {
        for (i, method) in METHODS.iter().enumerate() {
            assert!(
                METHODS[i + 1..].iter().all(|other| other.name != method.name),
                "{}",
                method.name
            );
            assert_eq!(find(method.name).map(|found| found.kind), Some(method.kind));
        }
        assert!(find("tools/cal").is_none());
        assert_eq!(
            kind("resources/templates/list"),
            Some(Kind::List(Listed::Templates))
        );
        // The handshake's own methods are gone from the stateless revision; the rest stay.
        assert!(!find("initialize").unwrap().stateless && !find("ping").unwrap().stateless);
        assert!(find("tools/call").unwrap().stateless && find("server/discover").unwrap().stateless);
    }

    #[test]
    fn each_list_names_its_own_member_and_listing() {
        let registry = crate::McpServer::new("methods", "1").into_shared();
        let listed = [
            Listed::Tools,
            Listed::Prompts,
            Listed::Resources,
            Listed::Templates,
        ];
        for (i, one) in listed.iter().enumerate() {
            assert!(listed[i + 1..].iter().all(|other| other.key() != one.key()));
            // An empty registry lists nothing, under the member the list's result has.
            let page = one.listing(&registry).page(None, 10, "").expect("a first page");
            assert!(page.contains(&format!(r#""{}":[]"#, one.key())), "{page}");
        }
    }
}
