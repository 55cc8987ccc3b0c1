//! Harbor's `env` tables (`[environment]`, `[verifier]`, a step's verifier,
//! `[solution]`) may name the harness's own variables: `${NAME}` is the value of `NAME`
//! in the environment loopbench was started with, `${NAME:-default}` that value or,
//! where it is unset or empty, `default`. They are resolved once, when the task is
//! read; a `${NAME}` whose variable is unset is refused at its line, never passed on as
//! the literal text (an LLM-judge check would then fail for want of its key, as if the
//! agent's work were wrong). A `$` not followed by `{` is kept as it is.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use toml::Spanned;

use super::super::environment::{self, At};
use crate::error::Result;

/// Resolves the templates of a task's `env` tables from the harness's environment, and
/// keeps the names of the variables whose values it took: a value the host gives a
/// task is a secret as much as one passed by `pass_env`, and is redacted alike.
#[derive(Debug, Default)]
pub(super) struct HostValues {
    taken: RefCell<BTreeSet<String>>,
}

impl HostValues {
    /// The table checked as every `env` table is, each value's templates resolved from
    /// the harness's environment.
    pub(super) fn env_table(
        &self,
        at: &At<'_>,
        env: &Spanned<BTreeMap<String, String>>,
    ) -> Result<BTreeMap<String, String>> {
        env_table(at, env, &|name: &str| {
            let found = std::env::var(name).ok();
            if found.as_deref().is_some_and(|v| !v.is_empty()) {
                self.taken.borrow_mut().insert(name.to_string());
            }
            found
        })
    }

    /// The variables whose values the task took, by name.
    pub(super) fn into_names(self) -> Vec<String> {
        self.taken.into_inner().into_iter().collect()
    }
}

/// The table checked as every `env` table is, each value's templates resolved through
/// `lookup`.
fn env_table(
    at: &At<'_>,
    env: &Spanned<BTreeMap<String, String>>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>> {
    let span = env.span();
    let table = environment::env_table(at, env.clone())?;
    table
        .into_iter()
        .map(|(key, value)| {
            let resolved = resolve(&value, lookup).map_err(|why| {
                // At the line of the template itself, where it can be found.
                let needle = format!("${{{}", why.name);
                let at_template = at
                    .text
                    .get(span.clone())
                    .and_then(|t| t.find(&needle))
                    .map(|i| span.start + i..span.start + i + needle.len());
                at.err(
                    at_template.or(Some(span.clone())),
                    format!("env: {key}: {}", why.message),
                )
            })?;
            Ok((key, resolved))
        })
        .collect()
}

/// Why a value's template could not be resolved.
#[derive(Debug, PartialEq, Eq)]
struct Unresolved {
    /// The variable it names.
    name: String,
    /// What is wrong, as a sentence.
    message: String,
}

/// `value` with each `${NAME}` and `${NAME:-default}` replaced through `lookup`.
fn resolve(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, Unresolved> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(Unresolved {
                name: after.to_string(),
                message: format!("'{value}' opens a ${{...}} template that is never closed"),
            });
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Unresolved {
                name: inner.to_string(),
                message: format!(
                    "'${{{inner}}}' is not a template loopbench resolves: expected ${{NAME}} or \
                     ${{NAME:-default}}"
                ),
            });
        }
        match (lookup(name), default) {
            (Some(found), Some(default)) if found.is_empty() => out.push_str(default),
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(Unresolved {
                    name: name.to_string(),
                    message: format!(
                        "'${{{name}}}' names a variable the harness's environment does not have \
                         (export {name}, or give a default: ${{{name}:-VALUE}})"
                    ),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "KEY" => Some("sk-1".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn templates_resolve_from_the_environment_or_their_default() {
        let r = |v: &str| resolve(v, &lookup);
        assert_eq!(r("${KEY}").unwrap(), "sk-1");
        assert_eq!(r("Bearer ${KEY}!").unwrap(), "Bearer sk-1!");
        assert_eq!(r("${MODEL:-gpt-x}").unwrap(), "gpt-x");
        assert_eq!(r("${EMPTY:-fallback}").unwrap(), "fallback");
        assert_eq!(r("${KEY:-unused}").unwrap(), "sk-1");
        assert_eq!(r("$HOME and $$ stay").unwrap(), "$HOME and $$ stay");
        assert_eq!(r("${EMPTY}").unwrap(), "");
        let missing = r("x ${MISSING} y").unwrap_err();
        assert_eq!(missing.name, "MISSING");
        assert!(missing.message.contains("export MISSING"), "{missing:?}");
        assert!(r("${KEY").unwrap_err().message.contains("never closed"));
        assert!(r("${A B}").unwrap_err().message.contains("not a template"));
    }
}
