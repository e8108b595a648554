//! Any bytes as the first thing a client sends to a TLS port, served the way every rpcwire
//! server serves TLS (`ServerTls::accept`: the first byte peeked, plain HTTP answered `400`,
//! the rustls handshake within its deadline), over a real loopback connection: never a
//! panic, never a hang (the client has closed its side, so every input ends in time), no
//! handshake completed by bytes that hold no key exchange, and a client whose first byte is
//! not a TLS record reads the `400` that says the port speaks HTTPS.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rpcwire::transport::tls::ServerTls;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    tls: ServerTls,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port");
        let certified =
            rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("a certificate");
        let tls = ServerTls::from_pem(
            certified.cert.pem().as_bytes(),
            certified.signing_key.serialize_pem().as_bytes(),
        )
        .expect("a server configuration")
        .with_handshake_timeout(Duration::from_secs(2));
        Fixture {
            runtime,
            listener,
            tls,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    fixture.runtime.block_on(async {
        let address = fixture.listener.local_addr().expect("an address");
        let mut client = tokio::net::TcpStream::connect(address).await.expect("connects");
        let (server, _) = fixture.listener.accept().await.expect("accepts");
        let _ = client.write_all(data).await;
        let _ = client.shutdown().await;
        let accepted = tokio::time::timeout(Duration::from_secs(5), fixture.tls.accept(server))
            .await
            .expect("the handshake ends within its deadline");
        assert!(
            accepted.is_none(),
            "no handshake completes without a key exchange"
        );
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut answer)).await;
        if data.first().is_some_and(|&first| first != 22) {
            assert!(
                answer.starts_with(b"HTTP/1.1 400 Bad Request\r\n"),
                "plain bytes get the 400: {:?}",
                String::from_utf8_lossy(&answer)
            );
        }
    });
});
