//! The options of the MCP examples that serve (`mcp_server --http`, `mcp_gateway`) as OAuth
//! protected resources (`auth` feature): the issuer whose tokens are taken, the audience
//! they must name, the scopes tools need.

#![allow(dead_code)] // each example uses its part

/// What the command line said of protection.
#[derive(Clone, Debug, Default)]
pub struct ProtectOptions {
    /// The authorization server's issuer (its JWKS found through its metadata).
    pub issuer: Option<String>,
    /// The resource URI tokens must name (default: the server's own `/mcp` URL).
    pub audience: Option<String>,
    /// `TOOL=SCOPE`: the scope a tool needs (`*=SCOPE`: every request).
    pub scopes: Vec<(String, String)>,
    /// PEM files trusted for an `https://` issuer, besides the system's roots.
    pub authorities: Vec<String>,
}

/// The flags, for a usage line.
pub const PROTECT_USAGE: &str =
    "[--auth-issuer URL [--auth-audience URI] [--auth-scope TOOL=SCOPE …] [--auth-ca PEM …]]";

impl ProtectOptions {
    /// Takes `flag` (and its value) when it is one of these options.
    pub fn take(
        &mut self,
        flag: &str,
        value: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<bool, String> {
        match flag {
            "--auth-issuer" => self.issuer = Some(value(flag)?),
            "--auth-audience" => self.audience = Some(value(flag)?),
            "--auth-scope" => {
                let pair = value(flag)?;
                let (tool, scope) = pair
                    .split_once('=')
                    .filter(|(tool, scope)| !tool.is_empty() && !scope.is_empty())
                    .ok_or_else(|| format!("--auth-scope {pair}: expected TOOL=SCOPE"))?;
                self.scopes.push((tool.to_owned(), scope.to_owned()));
            }
            "--auth-ca" => self.authorities.push(value(flag)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The protected resource these options describe for a server whose endpoint is
    /// `endpoint` (`None` without `--auth-issuer`); the issuer's metadata is read now.
    #[cfg(feature = "auth")]
    pub async fn protection(
        &self,
        endpoint: &str,
    ) -> Result<Option<rpcwire::mcp::auth::ProtectedResource>, String> {
        use rpcwire::mcp::auth::{JwtVerifier, ProtectedResource};
        let Some(issuer) = &self.issuer else {
            if self.audience.is_some() || !self.scopes.is_empty() {
                return Err("--auth-audience and --auth-scope need --auth-issuer".to_owned());
            }
            return Ok(None);
        };
        let audience = self.audience.clone().unwrap_or_else(|| endpoint.to_owned());
        let tls = if self.authorities.is_empty() {
            None
        } else {
            let mut tls = rpcwire::transport::tls::ClientTls::builder();
            for path in &self.authorities {
                tls = tls
                    .add_ca_file(path)
                    .map_err(|e| format!("--auth-ca {path}: {e}"))?;
            }
            Some(tls.build().map_err(|e| format!("--auth-ca: {e}"))?)
        };
        let verifier = JwtVerifier::discover_with(issuer, &audience, tls)
            .await
            .map_err(|e| format!("--auth-issuer {issuer}: {e}"))?;
        let mut protected = ProtectedResource::new(&audience, issuer, verifier);
        let mut supported: Vec<&str> = Vec::new();
        for (tool, scope) in &self.scopes {
            protected = match tool.as_str() {
                "*" => protected.require_scope(scope),
                tool => protected.require_scope_for_tool(tool, scope),
            };
            if !supported.contains(&scope.as_str()) {
                supported.push(scope);
            }
        }
        if !supported.is_empty() {
            protected = protected.with_scopes_supported(supported);
        }
        Ok(Some(protected))
    }
}
