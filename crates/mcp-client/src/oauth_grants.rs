//! The grants no person takes part in, for machine-to-machine servers: client credentials
//! (the client authenticates with its secret or a JWT signed with its key, RFC 7523) and
//! cross-app access (an identity provider's ID token exchanged for an ID-JAG, RFC 8693, which
//! the authorization server turns into an access token, RFC 7523 §2.1).
//!
//! Each is one or two form POSTs; the endpoints come from the same discovery the browser flow
//! uses. Secrets arrive resolved from the environment and are never logged.

use crate::oauth_error::OAuthError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use oi_config::mcp::McpTokenEndpointAuth;
use serde_json::Value;

const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";
const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ASSERTION_TYPE_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long a client assertion is valid: long enough for clock skew, short enough that a
/// leaked one is useless.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// How the client authenticates at a token endpoint.
#[derive(Clone)]
pub(crate) enum ClientAuth {
    /// `Authorization: Basic` (RFC 6749 §2.3.1, form-encoded id and secret).
    Basic { client_id: String, secret: String },
    /// Id and secret in the form body.
    Post { client_id: String, secret: String },
    /// A JWT signed with the client's P-256 key (`private_key_jwt`, ES256).
    PrivateKeyJwt { client_id: String, key_pem: String },
    /// A public client: only its id.
    None { client_id: String },
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret or the key.
        let (kind, id) = match self {
            ClientAuth::Basic { client_id, .. } => ("client_secret_basic", client_id),
            ClientAuth::Post { client_id, .. } => ("client_secret_post", client_id),
            ClientAuth::PrivateKeyJwt { client_id, .. } => ("private_key_jwt", client_id),
            ClientAuth::None { client_id } => ("none", client_id),
        };
        write!(f, "ClientAuth({kind}, {id})")
    }
}

impl ClientAuth {
    /// The method to use: the configured one, else what the server lists (Basic first, as
    /// RFC 6749 makes it the one every server must support), given what we hold.
    pub(crate) fn choose(
        configured: Option<McpTokenEndpointAuth>,
        supported: &[String],
        client_id: String,
        secret: Option<String>,
        key_pem: Option<String>,
    ) -> Result<Self, OAuthError> {
        let offers = |m: &str| supported.is_empty() || supported.iter().any(|s| s == m);
        let method = match configured {
            Some(m) => m,
            None if key_pem.is_some() && offers("private_key_jwt") => {
                McpTokenEndpointAuth::PrivateKeyJwt
            }
            None if secret.is_some() && offers("client_secret_basic") => {
                McpTokenEndpointAuth::ClientSecretBasic
            }
            None if secret.is_some() && offers("client_secret_post") => {
                McpTokenEndpointAuth::ClientSecretPost
            }
            None if secret.is_some() => McpTokenEndpointAuth::ClientSecretBasic,
            None => McpTokenEndpointAuth::None,
        };
        let need_secret = |secret: Option<String>| {
            secret.ok_or_else(|| {
                OAuthError::Config(format!(
                    "token_endpoint_auth_method = \"{}\" needs `client_secret_env_var`",
                    method.as_str()
                ))
            })
        };
        Ok(match method {
            McpTokenEndpointAuth::ClientSecretBasic => ClientAuth::Basic {
                client_id,
                secret: need_secret(secret)?,
            },
            McpTokenEndpointAuth::ClientSecretPost => ClientAuth::Post {
                client_id,
                secret: need_secret(secret)?,
            },
            McpTokenEndpointAuth::PrivateKeyJwt => ClientAuth::PrivateKeyJwt {
                client_id,
                key_pem: key_pem.ok_or_else(|| {
                    OAuthError::Config(
                        "token_endpoint_auth_method = \"private_key_jwt\" needs `private_key_env_var`"
                            .to_string(),
                    )
                })?,
            },
            McpTokenEndpointAuth::None => ClientAuth::None { client_id },
        })
    }

    /// Adds this client's authentication to a token request for `audience` (the
    /// authorization server's issuer, which a JWT assertion names as its `aud`).
    fn apply(
        &self,
        request: reqwest::RequestBuilder,
        form: &mut Vec<(&'static str, String)>,
        audience: &str,
    ) -> Result<reqwest::RequestBuilder, OAuthError> {
        Ok(match self {
            ClientAuth::Basic { client_id, secret } => {
                // RFC 6749 §2.3.1: both parts form-urlencoded before joining.
                let enc = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", enc(client_id), enc(secret));
                let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
                request.header(reqwest::header::AUTHORIZATION, format!("Basic {encoded}"))
            }
            ClientAuth::Post { client_id, secret } => {
                form.push(("client_id", client_id.clone()));
                form.push(("client_secret", secret.clone()));
                request
            }
            ClientAuth::PrivateKeyJwt { client_id, key_pem } => {
                form.push(("client_id", client_id.clone()));
                form.push(("client_assertion_type", ASSERTION_TYPE_JWT.to_string()));
                form.push((
                    "client_assertion",
                    client_assertion(client_id, audience, key_pem)?,
                ));
                request
            }
            ClientAuth::None { client_id } => {
                form.push(("client_id", client_id.clone()));
                request
            }
        })
    }
}

/// Where and for what a machine grant asks.
pub(crate) struct TokenRequest<'a> {
    pub http: &'a reqwest::Client,
    pub token_endpoint: &'a str,
    /// The authorization server's issuer (the `aud` of a client assertion).
    pub issuer: &'a str,
    /// RFC 8707 resource: the MCP server.
    pub resource: &'a str,
    pub scopes: &'a [String],
}

/// `grant_type=client_credentials`: the access token.
pub(crate) async fn client_credentials(
    req: &TokenRequest<'_>,
    auth: &ClientAuth,
) -> Result<String, OAuthError> {
    let mut form = vec![
        ("grant_type", GRANT_CLIENT_CREDENTIALS.to_string()),
        ("resource", req.resource.to_string()),
    ];
    if !req.scopes.is_empty() {
        form.push(("scope", req.scopes.join(" ")));
    }
    let token = post_token(req.http, req.token_endpoint, form, auth, req.issuer).await?;
    access_token(&token, req.token_endpoint)
}

/// What cross-app access needs from the identity provider.
pub(crate) struct IdentityProvider<'a> {
    pub token_endpoint: &'a str,
    pub client_id: &'a str,
    pub id_token: &'a str,
}

/// Cross-app access: the ID token becomes an ID-JAG at the identity provider, and the ID-JAG
/// an access token at the authorization server. Returns the access token.
pub(crate) async fn token_exchange(
    req: &TokenRequest<'_>,
    idp: &IdentityProvider<'_>,
    auth: &ClientAuth,
) -> Result<String, OAuthError> {
    let mut form = vec![
        ("grant_type", GRANT_TOKEN_EXCHANGE.to_string()),
        ("requested_token_type", TOKEN_TYPE_ID_JAG.to_string()),
        ("audience", req.issuer.to_string()),
        ("resource", req.resource.to_string()),
        ("subject_token", idp.id_token.to_string()),
        ("subject_token_type", TOKEN_TYPE_ID_TOKEN.to_string()),
    ];
    if !req.scopes.is_empty() {
        form.push(("scope", req.scopes.join(" ")));
    }
    let idp_auth = ClientAuth::None {
        client_id: idp.client_id.to_string(),
    };
    let exchanged = post_token(
        req.http,
        idp.token_endpoint,
        form,
        &idp_auth,
        idp.token_endpoint,
    )
    .await
    .map_err(|e| {
        OAuthError::TokenEndpoint(format!(
            "the identity provider refused the token exchange: {e}"
        ))
    })?;
    let id_jag = access_token(&exchanged, idp.token_endpoint)?;
    let form = vec![
        ("grant_type", GRANT_JWT_BEARER.to_string()),
        ("assertion", id_jag),
    ];
    let token = post_token(req.http, req.token_endpoint, form, auth, req.issuer).await?;
    access_token(&token, req.token_endpoint)
}

/// POST a token request; the JSON answer, or the server's `error` and description.
async fn post_token(
    http: &reqwest::Client,
    endpoint: &str,
    mut form: Vec<(&'static str, String)>,
    auth: &ClientAuth,
    audience: &str,
) -> Result<Value, OAuthError> {
    let request = http
        .post(endpoint)
        .header(reqwest::header::ACCEPT, "application/json");
    let request = auth.apply(request, &mut form, audience)?;
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let response = request
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| {
            OAuthError::TokenEndpoint(format!("cannot reach the token endpoint {endpoint}: {e}"))
        })?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let error = body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no error code");
        let description = body
            .get("error_description")
            .and_then(Value::as_str)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(OAuthError::TokenEndpoint(format!(
            "{endpoint} answered HTTP {} `{error}`{description}",
            status.as_u16()
        )));
    }
    Ok(body)
}

fn access_token(body: &Value, endpoint: &str) -> Result<String, OAuthError> {
    body.get("access_token")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            OAuthError::TokenEndpoint(format!("{endpoint} answered without an access_token"))
        })
}

/// An RFC 7523 client assertion: `iss` = `sub` = the client id, `aud` = the authorization
/// server, signed ES256 with the PEM (PKCS#8) P-256 key.
fn client_assertion(client_id: &str, audience: &str, key_pem: &str) -> Result<String, OAuthError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let jti = {
        use sha2::Digest;
        let seed = format!("{client_id}|{now}|{:?}", std::time::Instant::now());
        hex::encode(&sha2::Sha256::digest(seed.as_bytes())[..16])
    };
    let header = serde_json::json!({"alg": "ES256", "typ": "JWT"});
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": jti,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = sign_es256(key_pem, signing_input.as_bytes())?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

/// ES256 over `message` with a PEM PKCS#8 P-256 key, as JWS wants it: `r || s`, 64 bytes.
fn sign_es256(key_pem: &str, message: &[u8]) -> Result<Vec<u8>, OAuthError> {
    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::pem::PemObject;
    let der =
        PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|_| OAuthError::BadPrivateKey)?;
    let key = rustls::crypto::aws_lc_rs::sign::any_ecdsa_type(&der)
        .map_err(|_| OAuthError::BadPrivateKey)?;
    let signer = key
        .choose_scheme(&[rustls::SignatureScheme::ECDSA_NISTP256_SHA256])
        .ok_or(OAuthError::BadPrivateKey)?;
    let der_signature = signer
        .sign(message)
        .map_err(|e| OAuthError::Signing(Some(e.to_string())))?;
    der_to_raw_signature(&der_signature, 32).ok_or(OAuthError::Signing(None))
}

/// An ASN.1 `SEQUENCE { r INTEGER, s INTEGER }` as the fixed-width `r || s` JWS uses.
fn der_to_raw_signature(der: &[u8], width: usize) -> Option<Vec<u8>> {
    fn length(bytes: &[u8]) -> Option<(usize, &[u8])> {
        let (&first, rest) = bytes.split_first()?;
        if first < 0x80 {
            return Some((usize::from(first), rest));
        }
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 2 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        Some((len, &rest[n..]))
    }
    fn integer(bytes: &[u8], width: usize) -> Option<(Vec<u8>, &[u8])> {
        let (&tag, rest) = bytes.split_first()?;
        if tag != 0x02 {
            return None;
        }
        let (len, rest) = length(rest)?;
        if rest.len() < len {
            return None;
        }
        let (value, rest) = rest.split_at(len);
        let value: Vec<u8> = value.iter().copied().skip_while(|b| *b == 0).collect();
        if value.len() > width {
            return None;
        }
        let mut padded = vec![0u8; width - value.len()];
        padded.extend(value);
        Some((padded, rest))
    }
    let (&tag, rest) = der.split_first()?;
    if tag != 0x30 {
        return None;
    }
    let (len, body) = length(rest)?;
    if body.len() != len {
        return None;
    }
    let (mut r, rest) = integer(body, width)?;
    let (s, rest) = integer(rest, width)?;
    if !rest.is_empty() {
        return None;
    }
    r.extend(s);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_signatures_become_fixed_width() {
        // r with a leading zero (high bit set), s short.
        let mut r = vec![0x00, 0x80];
        r.extend([1u8; 31]);
        let s = [0x05];
        let mut body = vec![0x02, r.len() as u8];
        body.extend(&r);
        body.extend([0x02, 0x01, 0x05]);
        let mut der = vec![0x30, body.len() as u8];
        der.extend(&body);
        let raw = der_to_raw_signature(&der, 32).unwrap();
        assert_eq!(raw.len(), 64);
        assert_eq!(raw[0], 0x80);
        assert_eq!(&raw[1..32], &[1u8; 31]);
        assert_eq!(&raw[32..63], &[0u8; 31]);
        assert_eq!(raw[63], s[0]);
        assert!(der_to_raw_signature(&[0x31, 0x00], 32).is_none());
    }

    #[test]
    fn the_method_follows_the_config_then_the_server() {
        let supported = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let auth = ClientAuth::choose(
            None,
            &supported(&["client_secret_post"]),
            "c".into(),
            Some("s".into()),
            None,
        )
        .unwrap();
        assert!(matches!(auth, ClientAuth::Post { .. }), "{auth:?}");
        let auth = ClientAuth::choose(
            None,
            &supported(&["client_secret_basic", "client_secret_post"]),
            "c".into(),
            Some("s".into()),
            None,
        )
        .unwrap();
        assert!(matches!(auth, ClientAuth::Basic { .. }), "{auth:?}");
        let auth = ClientAuth::choose(
            Some(McpTokenEndpointAuth::ClientSecretPost),
            &[],
            "c".into(),
            Some("s".into()),
            None,
        )
        .unwrap();
        assert!(matches!(auth, ClientAuth::Post { .. }), "{auth:?}");
        let e = ClientAuth::choose(
            Some(McpTokenEndpointAuth::ClientSecretBasic),
            &[],
            "c".into(),
            None,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, OAuthError::Config(_)), "{e:?}");
        assert!(e.to_string().contains("client_secret_env_var"), "{e}");
        let auth = ClientAuth::choose(None, &[], "c".into(), Some("hunter2".into()), None).unwrap();
        assert!(!format!("{auth:?}").contains("hunter2"), "{auth:?}");
    }

    #[test]
    fn a_bad_key_is_named_without_echoing_it() {
        let e = client_assertion(
            "c",
            "https://as",
            "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n",
        )
        .unwrap_err();
        assert_eq!(e, OAuthError::BadPrivateKey);
        assert_eq!(
            e.to_string(),
            "the private key (private_key_env_var) is not a PEM PKCS#8 P-256 key"
        );
    }
}
