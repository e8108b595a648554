//! Skills (SEP-2640) from the host's side, against a server written here: listed without a
//! file fetched, a skill loaded and its supporting file read when both match the listing
//! (size, SHA-256, frontmatter), and each kind of mismatch refused before its content is
//! handed on. (The conformance suite's skills scenarios check the refusals against the
//! example client, tests/mcp_client_suite.rs.)
#![cfg(feature = "mcp")]

use std::sync::{Arc, Mutex};

use rpcwire::frame::Framing;
use rpcwire::mcp::{McpClient, SkillError};
use rpcwire::transport::StreamTransport;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const SKILL_MD: &str = "---\nname: pdf\ndescription: Extract PDFs\n---\n\nBody.\n";
const FORMS_MD: &str = "Forms.\n";

fn digest(text: &str) -> String {
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// A server listing one skill as `listing` says, serving `served` as its SKILL.md; the URIs
/// read.
async fn connect(listing: Value, served: &'static str) -> (McpClient, Arc<Mutex<Vec<String>>>) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let read = Arc::new(Mutex::new(Vec::new()));
    let seen = read.clone();
    let mut router = rpcwire::dispatch::Router::new();
    router.method("initialize", |_: Value| {
        Ok(
            json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "skills", "version": "1"},
            "capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}}}),
        )
    });
    router.method("skills/list", move |_: Value| {
        Ok(json!({"skills": [listing.clone()]}))
    });
    router.method("resources/read", move |params: Value| {
        let uri = params["uri"].as_str().unwrap_or_default().to_owned();
        seen.lock().unwrap().push(uri.clone());
        let text = if uri.ends_with("FORMS.md") {
            FORMS_MD
        } else {
            served
        };
        Ok(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
    });
    tokio::spawn(rpcwire::transport::Peer::serve(
        StreamTransport::from_io(theirs, Framing::Ndjson),
        router,
    ));
    let client = McpClient::builder("host", "1")
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .expect("connected");
    (client, read)
}

fn listing(frontmatter: Value, skill_md: &str) -> Value {
    json!({"uri": "skill://pdf/SKILL.md", "frontmatter": frontmatter, "resources": [
        {"uri": "skill://pdf/SKILL.md", "digest": digest(skill_md), "size": skill_md.len()},
        {"uri": "skill://pdf/FORMS.md", "digest": digest(FORMS_MD), "size": FORMS_MD.len()},
    ]})
}

#[tokio::test]
async fn a_skill_that_matches_its_listing_is_loaded_and_read() {
    let frontmatter = json!({"name": "pdf", "description": "Extract PDFs"});
    let (client, read) = connect(listing(frontmatter, SKILL_MD), SKILL_MD).await;
    assert!(client.offers_skills());
    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    assert!(read.lock().unwrap().is_empty(), "nothing fetched on listing");
    let skill = &skills[0];
    assert_eq!(skill.name(), Some("pdf"));
    let loaded = client.load_skill(skill).await.expect("verified");
    assert_eq!(loaded.contents.len(), 1);
    for file in skill.supporting_files() {
        client.read_skill_file(skill, &file.uri).await.expect("verified");
    }
    let unlisted = client
        .read_skill_file(skill, "skill://pdf/other.md")
        .await
        .unwrap_err();
    assert!(matches!(unlisted, SkillError::Unlisted(_)), "{unlisted}");
    assert_eq!(
        *read.lock().unwrap(),
        ["skill://pdf/SKILL.md", "skill://pdf/FORMS.md"],
        "the unlisted file was not fetched"
    );
    client.close().await;
}

#[tokio::test]
async fn a_skill_that_does_not_match_is_refused() {
    let frontmatter = json!({"name": "pdf", "description": "Extract PDFs"});
    const TAMPERED: &str = "---\nname: pdf\ndescription: Extract PDFs\n---\n\nEvil!\n";
    let (client, _) = connect(listing(frontmatter.clone(), SKILL_MD), TAMPERED).await;
    let skill = &client.list_skills().await.unwrap()[0];
    assert!(matches!(
        client.load_skill(skill).await,
        Err(SkillError::Digest(_))
    ));
    client.close().await;
    const LONGER: &str = "---\nname: pdf\ndescription: Extract PDFs\n---\n\nBody. And more.\n";
    let (client, _) = connect(listing(frontmatter, SKILL_MD), LONGER).await;
    let skill = &client.list_skills().await.unwrap()[0];
    assert!(matches!(
        client.load_skill(skill).await,
        Err(SkillError::Size { .. })
    ));
    client.close().await;
    // Size and digest match a SKILL.md whose frontmatter is not the listing's.
    const OTHER: &str = "---\nname: pdf\ndescription: Exfiltrate\n---\n\nBody.\n";
    let (client, _) = connect(
        listing(json!({"name": "pdf", "description": "Extract PDFs"}), OTHER),
        OTHER,
    )
    .await;
    let skill = &client.list_skills().await.unwrap()[0];
    let refused = client.load_skill(skill).await.unwrap_err();
    assert!(matches!(refused, SkillError::Frontmatter { .. }), "{refused}");
    assert!(refused.to_string().contains("description"), "{refused}");
    client.close().await;
}
