//! The process reads the system's root certificates on its first certificate check, not
//! when a client is built: a plain `http://` exchange reads none, and an `https://` one is
//! still verified against them (here a test CA given as `SSL_CERT_FILE`, which the platform
//! verifier honours on Linux). One test in this binary: the roots are loaded once per
//! process, so the order of the steps is the point.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (Debian's `openssl` package)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA and a leaf for `localhost` / 127.0.0.1 signed by it, valid for two days.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=oi-http test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    );
}

/// Answers every connection with [`RESPONSE`], over TLS when `tls` is given.
async fn serve(tls: Option<tokio_rustls::TlsAcceptor>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let tls = tls.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                match tls {
                    Some(acceptor) => {
                        // A client that rejects the certificate ends the handshake here.
                        let Ok(mut stream) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let _ = stream.read(&mut buf).await;
                        let _ = stream.write_all(RESPONSE).await;
                        let _ = stream.shutdown().await;
                    }
                    None => {
                        let mut stream = tcp;
                        let _ = stream.read(&mut buf).await;
                        let _ = stream.write_all(RESPONSE).await;
                        let _ = stream.shutdown().await;
                    }
                }
            });
        }
    });
    addr
}

fn acceptor(dir: &Path) -> tokio_rustls::TlsAcceptor {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("leaf.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("leaf.key")).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

fn chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        out.push_str(": ");
        out.push_str(&e.to_string());
        source = e.source();
    }
    out
}

#[tokio::test]
async fn roots_are_read_on_the_first_certificate_check_and_still_verify() {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    // SAFETY: the only test of this binary, and no other thread of it reads the environment
    // yet (the runtime's workers do not).
    unsafe { std::env::set_var("SSL_CERT_FILE", dir.path().join("ca.pem")) };

    let client = oi_http::client_builder().no_proxy().build().unwrap();
    assert!(!oi_http::roots_loaded(), "building a client reads no roots");

    let plain = serve(None).await;
    let resp = client.get(format!("http://{plain}/")).send().await.unwrap();
    assert_eq!(resp.text().await.unwrap(), "ok");
    assert!(
        !oi_http::roots_loaded(),
        "a plain http exchange reads no roots"
    );

    let secure = serve(Some(acceptor(dir.path()))).await;
    let url = format!("https://localhost:{}/", secure.port());
    let resp = client.get(&url).send().await.unwrap();
    assert_eq!(resp.text().await.unwrap(), "ok");
    assert!(
        oi_http::roots_loaded(),
        "the first handshake read the roots"
    );

    // The certificate is still checked: a name it does not cover is refused.
    let wrong_name = oi_http::client_builder()
        .no_proxy()
        .resolve("wrong.invalid", secure)
        .build()
        .unwrap();
    let err = wrong_name
        .get(format!("https://wrong.invalid:{}/", secure.port()))
        .send()
        .await
        .unwrap_err();
    let msg = chain(&err);
    assert!(msg.contains("certificate"), "{msg}");
}
