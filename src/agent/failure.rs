//! Why a session did not run the way the agent meant: the agent's own failure, or a
//! cause outside it (the infrastructure, the provider's refusal of the credentials).
//! Decided from facts the harness captured, never from what the agent wrote.

use serde::{Deserialize, Serialize};

/// Whose failure a session was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The agent exited non-zero or was killed, and no cause outside it is known: it
    /// counts, it is the agent's.
    Agent,
    /// A cause outside the agent (a program that cannot be executed, a transport or
    /// provider error, a sandbox that could not be set up): the trial is retried.
    Infra,
    /// The provider refused the credentials or the account: the run stops scheduling.
    Auth,
}

impl FailureKind {
    /// Every kind, in the order of the contract.
    pub const ALL: [FailureKind; 3] = [FailureKind::Agent, FailureKind::Infra, FailureKind::Auth];

    /// The name used in records and in the usage file.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Agent => "agent",
            FailureKind::Infra => "infra",
            FailureKind::Auth => "auth",
        }
    }

    /// Whether a session that failed this way says something about the agent, so that
    /// the tables count it. An infrastructure or credentials failure never does.
    pub fn counts(self) -> bool {
        self == FailureKind::Agent
    }

    /// The kind an HTTP status of a model API means: 401/403 the credentials; 408,
    /// 409, 429 and 5xx (529 overloaded among them) the provider or the transport.
    /// `None` for any other status (a 400 is a request the agent made).
    pub fn of_http_status(status: u16) -> Option<FailureKind> {
        match status {
            401 | 403 => Some(FailureKind::Auth),
            408 | 409 | 429 | 500..=599 => Some(FailureKind::Infra),
            _ => None,
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session's failure: its kind, the evidence in words, and the HTTP status when one
/// was reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Whose failure.
    pub kind: FailureKind,
    /// What the harness saw ("HTTP 529 after 3 retries by the CLI").
    pub reason: String,
    /// The model API's HTTP status, when the evidence names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// How long the provider asked to wait before the next request, when the CLI's
    /// records say (Claude Code's last `api_retry` delay, which follows the API's
    /// `retry-after`): the trial's backoff is at least this long (capped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Failure {
    /// A failure of `kind` for `reason`.
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: reason.into(),
            http_status: None,
            retry_after_ms: None,
        }
    }

    /// The failure an HTTP status stands for, `None` when the status is the agent's.
    pub fn of_http_status(status: u16, reason: impl Into<String>) -> Option<Failure> {
        FailureKind::of_http_status(status).map(|kind| Failure {
            kind,
            reason: reason.into(),
            http_status: Some(status),
            retry_after_ms: None,
        })
    }
}

/// What an error message of a CLI's own structured error record means (Codex's
/// `error` and `turn.failed` events, aider's provider exceptions). Only ever applied
/// to a field the CLI itself writes for an error, never to the agent's text: an HTTP
/// status named in it ("unexpected status 529", "status: 401 Unauthorized"), a refused
/// key or account, or a connection that was refused, reset or timed out.
pub fn classify_error_message(message: &str) -> Option<Failure> {
    let lower = message.to_ascii_lowercase();
    if let Some(status) = http_status_in(&lower) {
        return Failure::of_http_status(status, format!("HTTP {status}: {}", short(message)));
    }
    const AUTH: [&str; 6] = [
        "invalid api key",
        "invalid x-api-key",
        "incorrect api key",
        "authentication",
        "credit balance",
        "insufficient_quota",
    ];
    if AUTH.iter().any(|w| lower.contains(w)) {
        return Some(Failure::new(FailureKind::Auth, short(message)));
    }
    const TRANSPORT: [&str; 19] = [
        "connection refused",
        "connection reset",
        "connection error",
        "connection closed",
        "connection was lost",
        "econnreset",
        "econnrefused",
        "etimedout",
        "socket hang up",
        // Codex: "stream disconnected before completion: Transport error: network
        // error: error decoding response body", "error sending request for url".
        "stream disconnected",
        "transport error",
        "error sending request",
        "error decoding response body",
        "incomplete message",
        "unexpected eof",
        "timed out",
        "timeout",
        "overloaded",
        "rate limit",
    ];
    if TRANSPORT.iter().any(|w| lower.contains(w)) {
        return Some(Failure::new(FailureKind::Infra, short(message)));
    }
    None
}

/// The first HTTP status a message names after "status" (`status 529`, `status:
/// 401`, `last status: 429`), or as a bare error status before an HTTP reason phrase
/// (`529 Overloaded`, `401 Unauthorized`).
fn http_status_in(lower: &str) -> Option<u16> {
    let three_digits = |s: &str| -> Option<u16> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        (digits.len() == 3)
            .then(|| digits.parse::<u16>().ok())
            .flatten()
            .filter(|n| (100..=599).contains(n))
    };
    for (i, _) in lower.match_indices("status") {
        let rest = lower[i + "status".len()..].trim_start_matches([':', ' ', '=', '"']);
        if let Some(n) = three_digits(rest) {
            return Some(n);
        }
    }
    const PHRASES: [&str; 8] = [
        " unauthorized",
        " forbidden",
        " too many requests",
        " overloaded",
        " internal server error",
        " bad gateway",
        " service unavailable",
        " gateway timeout",
    ];
    for phrase in PHRASES {
        if let Some(at) = lower.find(phrase)
            && at >= 3
            && let Some(n) = three_digits(&lower[at - 3..at])
        {
            return Some(n);
        }
    }
    None
}

/// A message cut to one line of at most 200 characters, for a reason text, with its
/// control characters escaped (it is the CLI's text, printed on terminals).
pub fn short(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    let cut = match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    };
    crate::terminal::line(&cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_split_into_credentials_provider_and_the_agents_own() {
        for s in [401, 403] {
            assert_eq!(FailureKind::of_http_status(s), Some(FailureKind::Auth));
        }
        for s in [408, 409, 429, 500, 502, 503, 529, 599] {
            assert_eq!(
                FailureKind::of_http_status(s),
                Some(FailureKind::Infra),
                "{s}"
            );
        }
        for s in [200, 400, 404, 413, 422] {
            assert_eq!(FailureKind::of_http_status(s), None, "{s}");
        }
    }

    #[test]
    fn cli_error_messages_name_their_status_or_transport_cause() {
        let kind = |m: &str| classify_error_message(m).map(|f| (f.kind, f.http_status));
        assert_eq!(
            kind("unexpected status 529 Overloaded: {\"type\":\"overloaded_error\"}"),
            Some((FailureKind::Infra, Some(529)))
        );
        assert_eq!(
            kind("exceeded retry limit, last status: 429 Too Many Requests"),
            Some((FailureKind::Infra, Some(429)))
        );
        assert_eq!(
            kind("401 Unauthorized: invalid x-api-key"),
            Some((FailureKind::Auth, Some(401)))
        );
        assert_eq!(
            kind("litellm.AuthenticationError: AnthropicException - invalid x-api-key"),
            Some((FailureKind::Auth, None))
        );
        assert_eq!(
            kind("stream error: connection reset by peer"),
            Some((FailureKind::Infra, None))
        );
        for dropped in [
            "stream disconnected before completion: Transport error: network error: error decoding response body",
            "error sending request for url (http://127.0.0.1:9/v1/responses)",
            "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary",
        ] {
            assert_eq!(kind(dropped), Some((FailureKind::Infra, None)), "{dropped}");
        }
        assert_eq!(
            kind("unexpected status 400 Bad Request: prompt too long"),
            None
        );
        assert_eq!(kind("the model refused"), None);
    }
}
