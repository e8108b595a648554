//! The examples' TLS flags, one set for every example: `--tls-cert PEM --tls-key PEM` to
//! serve HTTPS (the files are read again when they change), and for clients and upstreams
//! `--ca PEM` (an authority trusted besides the system's roots; repeatable),
//! `--webpki-roots` (Mozilla's roots too), `--client-cert PEM --client-key PEM` (mutual
//! TLS).

#![allow(dead_code)] // each example uses its side

use rpcwire::transport::tls::{ClientTls, ServerTls};

/// The usage text of the flags.
pub const TLS_USAGE: &str =
    "[--tls-cert PEM --tls-key PEM] [--ca PEM …] [--webpki-roots] [--client-cert PEM --client-key PEM]";

#[derive(Default)]
pub struct TlsOptions {
    cert: Option<String>,
    key: Option<String>,
    authorities: Vec<String>,
    webpki: bool,
    client_cert: Option<String>,
    client_key: Option<String>,
}

impl TlsOptions {
    /// Takes `arg` (and its value) when it is one of the TLS flags.
    pub fn take(
        &mut self,
        arg: &str,
        value: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<bool, String> {
        match arg {
            "--tls-cert" => self.cert = Some(value(arg)?),
            "--tls-key" => self.key = Some(value(arg)?),
            "--ca" => self.authorities.push(value(arg)?),
            "--webpki-roots" => self.webpki = true,
            "--client-cert" => self.client_cert = Some(value(arg)?),
            "--client-key" => self.client_key = Some(value(arg)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What to serve HTTPS with: `None` without `--tls-cert`/`--tls-key`.
    pub fn server(&self) -> Result<Option<ServerTls>, String> {
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => ServerTls::from_pem_files(cert, key)
                .map(Some)
                .map_err(|error| format!("--tls-cert/--tls-key: {error}")),
            (None, None) => Ok(None),
            _ => Err("--tls-cert and --tls-key go together".to_owned()),
        }
    }

    /// What clients trust and show: `None` when no client flag was given (the system's
    /// roots).
    pub fn client(&self) -> Result<Option<ClientTls>, String> {
        if self.authorities.is_empty()
            && !self.webpki
            && self.client_cert.is_none()
            && self.client_key.is_none()
        {
            return Ok(None);
        }
        let mut builder = ClientTls::builder();
        if self.webpki {
            builder = builder.with_webpki_roots();
        }
        for path in &self.authorities {
            builder = builder
                .add_ca_file(path)
                .map_err(|error| format!("--ca: {error}"))?;
        }
        builder = match (&self.client_cert, &self.client_key) {
            (Some(cert), Some(key)) => builder
                .with_client_certificate_files(cert, key)
                .map_err(|error| format!("--client-cert/--client-key: {error}"))?,
            (None, None) => builder,
            _ => return Err("--client-cert and --client-key go together".to_owned()),
        };
        builder.build().map(Some).map_err(|error| format!("TLS: {error}"))
    }
}
