//! Retry timing: exponential backoff with jitter, and the server's own `Retry-After`.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

const BASE_DELAY: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server asking for a longer pause than this is treated as asking for this long, so a
/// misconfigured proxy cannot park a turn for an hour.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// Delay before retry number `attempt` (1-based): 200 ms doubling, ±10 % jitter, capped.
pub(crate) fn backoff(attempt: u64) -> Duration {
    let exp = attempt.saturating_sub(1).min(16) as u32;
    let base = BASE_DELAY.saturating_mul(2u32.saturating_pow(exp));
    let capped = base.min(MAX_BACKOFF);
    capped.mul_f64(0.9 + 0.2 * random_unit())
}

/// The pause the server asked for, from `retry-after-ms` or `Retry-After` (seconds or an
/// HTTP date). `None` when absent or unparsable.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && let Some(wait) = clamped_secs(ms / 1000.0)
    {
        return Some(wait);
    }
    let value = header_str(headers, "retry-after")?;
    parse_retry_after(value, SystemTime::now())
}

/// A server-provided number of seconds as a pause of at most [`MAX_RETRY_AFTER`]. Clamps
/// *before* converting: `Duration::from_secs_f64` panics on values it cannot represent
/// (`1e30`, infinity), and a header is outside input. NaN and negative values are ignored.
fn clamped_secs(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    let secs = secs.min(MAX_RETRY_AFTER.as_secs_f64());
    Duration::try_from_secs_f64(secs).ok()
}

pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return clamped_secs(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    // A date in the past means "now".
    let wait = when.duration_since(now).unwrap_or(Duration::ZERO);
    Some(wait.min(MAX_RETRY_AFTER))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A number in [0, 1) that differs between calls; good enough to spread retries.
fn random_unit() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let first = backoff(1);
        assert!(first >= Duration::from_millis(180) && first <= Duration::from_millis(220));
        let third = backoff(3);
        assert!(third >= Duration::from_millis(720) && third <= Duration::from_millis(880));
        assert!(backoff(40) <= MAX_BACKOFF.mul_f64(1.1));
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        // 2015-10-21 07:28:00 GMT is 10 s after `now`.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sat, 21 Oct 2000 07:28:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("99999", now), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn retry_after_ms_header_wins() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "5".parse().unwrap());
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
    }

    #[test]
    fn absurd_retry_after_ms_is_clamped_not_a_panic() {
        let ms = |v: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after-ms", v.parse().unwrap());
            retry_after(&headers)
        };
        assert_eq!(ms("1e30"), Some(MAX_RETRY_AFTER));
        assert_eq!(ms("inf"), Some(MAX_RETRY_AFTER));
        assert_eq!(ms("1.8e308"), Some(MAX_RETRY_AFTER));
        assert_eq!(ms("NaN"), None);
        assert_eq!(ms("-5"), None);
        assert_eq!(ms("-inf"), None);
        assert_eq!(ms("0"), Some(Duration::ZERO));
        let now = SystemTime::UNIX_EPOCH;
        assert_eq!(parse_retry_after("1e30", now), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("inf", now), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("NaN", now), None);
    }
}
