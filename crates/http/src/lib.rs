//! The HTTP clients of the process.
//!
//! reqwest's rustls backend reads the system's root certificates (a few hundred
//! certificates parsed from `/etc/ssl/certs`) every time a client is *built*, whatever the
//! URL it will be used for. Most of our traffic is plain `http://` to a model server on
//! loopback, so every start paid for a store it never used. [`client_builder`] gives a
//! builder whose TLS configuration verifies certificates with the platform verifier, as
//! reqwest's own would, but creates that verifier (and reads the roots) on the first
//! certificate it has to check, once per process.
//!
//! Every `reqwest::Client` of the product is built from here (a tidy test checks it).

use reqwest::redirect;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, OnceLock};

/// A `reqwest::ClientBuilder` with the lazily verified TLS configuration. Callers add their
/// timeouts, proxies and headers as usual.
pub fn client_builder() -> reqwest::ClientBuilder {
    match tls_config() {
        Some(config) => reqwest::Client::builder().tls_backend_preconfigured(config.clone()),
        // A crypto provider without the default TLS versions: reqwest's own configuration
        // (roots read now) is still correct, only slower to build.
        None => reqwest::Client::builder(),
    }
}

/// Whether this process has read the system's root certificates yet (it does on the first
/// TLS handshake that reaches certificate verification).
pub fn roots_loaded() -> bool {
    PLATFORM_VERIFIER.get().is_some()
}

/// Follows only same-origin 307/308 redirects (at most 10): they keep the method and body,
/// so a JSON-RPC POST reaches the new location intact. A 301/302/303 would turn the POST
/// into a bodyless GET, and a cross-origin hop would hand the session id and the caller's
/// headers to another host, so those come back to the caller as the redirect itself.
pub fn same_origin_redirects() -> redirect::Policy {
    const MAX_HOPS: usize = 10;
    redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && same_origin && attempt.previous().len() <= MAX_HOPS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

fn provider() -> Arc<CryptoProvider> {
    // The provider reqwest itself would pick (its `rustls` feature is aws-lc-rs), unless
    // the process installed another.
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

fn tls_config() -> Option<&'static rustls::ClientConfig> {
    static CONFIG: OnceLock<Option<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = provider();
            let verifier = Arc::new(LazyPlatformVerifier {
                provider: provider.clone(),
            });
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .ok()?
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth();
            // reqwest sets ALPN only on configurations it builds itself.
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            Some(config)
        })
        .as_ref()
}

/// The platform verifier of the process, created on first use. An error (no roots at all
/// on this system) is kept too: every handshake then fails with it, as reqwest's own client
/// would have failed to build.
static PLATFORM_VERIFIER: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>> =
    OnceLock::new();

#[derive(Debug)]
struct LazyPlatformVerifier {
    provider: Arc<CryptoProvider>,
}

impl LazyPlatformVerifier {
    fn verifier(&self) -> Result<&'static rustls_platform_verifier::Verifier, rustls::Error> {
        PLATFORM_VERIFIER
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new(self.provider.clone()).map_err(|e| {
                    rustls::Error::General(format!(
                        "cannot read the system's root certificates: {e}"
                    ))
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyPlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    // Signatures are checked with the provider's algorithms; no roots are involved.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_check_reads_the_roots_once_and_rejects_garbage() {
        let verifier = LazyPlatformVerifier {
            provider: provider(),
        };
        let name = ServerName::try_from("example.com").unwrap();
        let garbage = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
        let err = verifier
            .verify_server_cert(&garbage, &[], &name, &[], UnixTime::now())
            .unwrap_err();
        assert!(roots_loaded(), "a certificate check reads the roots");
        assert!(
            matches!(
                err,
                rustls::Error::InvalidCertificate(_) | rustls::Error::General(_)
            ),
            "{err:?}"
        );
        assert!(!verifier.supported_verify_schemes().is_empty());
    }

    #[test]
    fn the_configuration_offers_h2_and_http1() {
        let config = tls_config().unwrap();
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}
