//! Credentials out of URLs before they are shown or logged: `config/read`, errors, logs.

/// Query parameters whose value is a secret.
const SECRET_PARAMS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "token",
    "access_token",
    "api_key",
    "apikey",
    "secret",
    "sslpassword",
];

/// What stands in for a removed secret.
pub const REDACTED: &str = "***";

/// `text` with the password of every `scheme://user:password@host` in it replaced by
/// `***` (the user is kept: it says who connects), and the values of secret query
/// parameters (`password=`, `token=`, ...) too. Text without a URL is returned unchanged.
pub fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '`')
            .unwrap_or(after.len());
        out.push_str(&redact_one(&after[..end]));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// One URL after its `scheme://`.
fn redact_one(url: &str) -> String {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, tail) = url.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.find(':') {
                Some(colon) => format!("{}:{REDACTED}{host}", &userinfo[..colon]),
                None => authority.to_string(),
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.find('?') {
        Some(q) => {
            let (path, query) = tail.split_at(q + 1);
            let (query, fragment) = match query.find('#') {
                Some(h) => query.split_at(h),
                None => (query, ""),
            };
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if SECRET_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                        format!("{k}={REDACTED}")
                    }
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}{}{fragment}", params.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_secret_parameters_are_replaced() {
        assert_eq!(
            redact_url_credentials("postgresql://oi:s3cret@db:5432/oi?sslmode=disable"),
            "postgresql://oi:***@db:5432/oi?sslmode=disable"
        );
        assert_eq!(
            redact_url_credentials("postgres://db/oi?user=oi&password=s3cret#x"),
            "postgres://db/oi?user=oi&password=***#x"
        );
        assert_eq!(
            redact_url_credentials("at postgresql://a:b@h/d and https://x:y@z/p?token=t ok"),
            "at postgresql://a:***@h/d and https://x:***@z/p?token=*** ok"
        );
        // A password holding `@` or `:` is replaced whole.
        assert_eq!(
            redact_url_credentials("postgresql://oi:p@ss:w@db/oi"),
            "postgresql://oi:***@db/oi"
        );
        for plain in [
            "postgresql://oi@db/oi",
            "no url here",
            "http://host/path?q=1",
        ] {
            assert_eq!(redact_url_credentials(plain), plain);
        }
    }
}
