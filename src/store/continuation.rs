//! Whether a results directory may go on from another: `merge` joins shards of one run,
//! a sequential run's next look starts from the merged run of the looks before it
//! (`--after`), and `resume` continues a run from its own suite or traces. Each asks one
//! table which fields of the two runs must agree, and a refusal names the field that
//! differs with both values, so that none of them accepts a directory another would
//! refuse for the same reason.

use std::path::PathBuf;

use crate::error::{Field, Mismatch, Purpose};
use crate::store::Manifest;

/// The fields `purpose` compares. `resume` rebuilds the rest from the run's own
/// manifest, so only what can have changed since is compared: the suite's or traces'
/// content, and the loopbench that continues it.
pub fn compared(purpose: Purpose) -> &'static [Field] {
    match purpose {
        Purpose::Merge | Purpose::NextLook => &Field::ALL,
        Purpose::Resume | Purpose::Replay => &[Field::Content, Field::Version],
    }
}

/// Holds `theirs` (the manifest of `dir`) to `ours` for `purpose`: the first field of
/// [`compared`] on which they differ, if any. `other` is the directory `ours` is of.
pub fn check(
    purpose: Purpose,
    ours: &Manifest,
    theirs: &Manifest,
    dir: impl Into<PathBuf>,
    other: impl Into<PathBuf>,
) -> Result<(), Mismatch> {
    let Some(&field) = compared(purpose)
        .iter()
        .find(|&&f| !agrees(f, ours, theirs))
    else {
        return Ok(());
    };
    Err(Mismatch {
        purpose,
        dir: dir.into(),
        other: other.into(),
        field,
        ours: value(field, ours),
        theirs: value(field, theirs),
    })
}

/// The run of `manifest` as it would be made now, for [`Purpose::Resume`]: with the
/// content hash of its suite or traces as they are now, by this loopbench.
pub fn as_now(manifest: &Manifest, content_hash: &str) -> Manifest {
    Manifest {
        suite_hash: content_hash.to_string(),
        loopbench_version: env!("CARGO_PKG_VERSION").to_string(),
        ..manifest.clone()
    }
}

/// Whether `a` and `b` agree on `field`; the content hash in full.
fn agrees(field: Field, a: &Manifest, b: &Manifest) -> bool {
    match field {
        Field::Content => a.suite_hash == b.suite_hash,
        _ => value(field, a) == value(field, b),
    }
}

/// `field`'s value in `manifest`, as a message shows it (a content hash shortened).
fn value(field: Field, manifest: &Manifest) -> String {
    match field {
        Field::Kind => if manifest.replay.is_some() {
            "a replay"
        } else {
            "a suite's run"
        }
        .into(),
        Field::Suite => manifest.suite.clone(),
        Field::Content => manifest
            .suite_hash
            .get(..12)
            .unwrap_or(&manifest.suite_hash)
            .into(),
        Field::Seed => manifest
            .seed
            .map_or_else(|| "none".into(), |s| s.to_string()),
        Field::Replicates => manifest.replicates.to_string(),
        Field::Arms => manifest.arms.join(","),
        Field::Tasks => manifest.tasks.join(","),
        Field::Sandbox => manifest.verify_sandbox.name().into(),
        Field::Version => manifest.loopbench_version.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxKind;
    use crate::store::ReplayInputs;

    fn manifest() -> Manifest {
        Manifest {
            suite: "seed".into(),
            suite_hash: "a".repeat(64),
            arms: vec!["json".into(), "yaml".into()],
            tasks: vec!["todo".into()],
            seed: Some(7),
            replicates: 10,
            verify_sandbox: SandboxKind::Bwrap,
            loopbench_version: "0.1.0".into(),
            ..Manifest::stamped()
        }
    }

    /// `base` with `field` changed.
    fn changed(field: Field) -> Manifest {
        let mut m = manifest();
        match field {
            Field::Kind => {
                m.replay = Some(
                    serde_json::from_str::<ReplayInputs>(r#"{"task":"/t","formats":[]}"#).unwrap(),
                )
            }
            Field::Suite => m.suite = "other".into(),
            Field::Content => m.suite_hash = "b".repeat(64),
            Field::Seed => m.seed = Some(8),
            Field::Replicates => m.replicates = 20,
            Field::Arms => m.arms.reverse(),
            Field::Tasks => m.tasks.push("invoicer".into()),
            Field::Sandbox => m.verify_sandbox = SandboxKind::None,
            Field::Version => m.loopbench_version = "0.2.0".into(),
        }
        m
    }

    #[test]
    fn each_purpose_refuses_exactly_the_fields_it_compares_and_names_both_values() {
        let expected = |purpose: Purpose, field: Field| match purpose {
            Purpose::Merge | Purpose::NextLook => true,
            Purpose::Resume | Purpose::Replay => matches!(field, Field::Content | Field::Version),
        };
        for purpose in [
            Purpose::Merge,
            Purpose::NextLook,
            Purpose::Resume,
            Purpose::Replay,
        ] {
            assert_eq!(check(purpose, &manifest(), &manifest(), "b", "a"), Ok(()));
            for field in Field::ALL {
                let result = check(purpose, &manifest(), &changed(field), "b", "a");
                assert_eq!(
                    result.is_err(),
                    expected(purpose, field),
                    "{purpose:?} with {field:?} changed: {result:?}"
                );
                let Err(mismatch) = result else { continue };
                assert_eq!(mismatch.field, field);
                assert_ne!(mismatch.ours, mismatch.theirs);
                let text = mismatch.to_string();
                let named = match (purpose, field) {
                    (Purpose::Resume, Field::Content) => "changed since this run started".into(),
                    (Purpose::Replay, Field::Content) => "changed since this replay started".into(),
                    _ => field.differs(),
                };
                assert!(text.contains(&named), "{text}");
                assert!(text.contains(&mismatch.ours), "{text}");
                assert!(text.contains(&mismatch.theirs), "{text}");
            }
        }
    }

    #[test]
    fn a_refusal_reads_as_before_with_both_values_added() {
        let merge = check(
            Purpose::Merge,
            &manifest(),
            &changed(Field::Seed),
            "s2",
            "s1",
        );
        assert_eq!(
            merge.unwrap_err().to_string(),
            "'s2' is from a different run than 's1' (the seed differs: 8 there, 7 in the \
             first); only shards of one run can be merged"
        );
        let look = check(
            Purpose::NextLook,
            &manifest(),
            &changed(Field::Arms),
            "m",
            "m",
        );
        assert_eq!(
            look.unwrap_err().to_string(),
            "--after: 'm' is a run of another experiment (the arms differ: yaml,json \
             there, json,yaml in this look)"
        );
    }
}
