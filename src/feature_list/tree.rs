//! A loose document tree shared by the JSON and YAML parsers, and its lenient mapping to entries.
//!
//! Deserializing into this tree instead of into [`Entry`] directly means one malformed item
//! (an id that is a map, a key that is a sequence, a stray tag) cannot fail the whole file:
//! the tree accepts anything the syntax allows, and the tolerance rules are applied afterwards
//! in one place for both formats.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::id::fold_id;
use super::{Contract, Entry, FeatureList, Status};

/// Any value a JSON or YAML document can hold, with map keys kept as values in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    /// Decimal text, so that integers of any width keep their exact digits.
    Int(String),
    Float(f64),
    Str(String),
    /// Non-UTF-8 binary data (e.g. YAML `!!binary`); never a usable field value.
    Bytes,
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The value of the last pair whose key is the string `key`.
    ///
    /// Last-wins matches `serde_json::Value` for duplicate keys, so JSON and YAML agree.
    fn field(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(pairs) => pairs
                .iter()
                .rev()
                .find(|(k, _)| matches!(k, Node::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) | Node::Float(_) => "a number",
            Node::Str(_) => "a string",
            Node::Bytes => "binary data",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }

    /// The text form of a scalar: strings as is, numbers and booleans as they print.
    fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Str(s) | Node::Int(s) => Some(s.clone()),
            Node::Bool(b) => Some(b.to_string()),
            // Debug keeps a `.0` on whole numbers, matching how JSON and YAML write floats.
            Node::Float(f) => Some(format!("{f:?}")),
            Node::Null | Node::Bytes | Node::Seq(_) | Node::Map(_) => None,
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON or YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        Ok(std::str::from_utf8(v).map_or(Node::Bytes, |s| Node::Str(s.to_string())))
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Node, E> {
        Ok(String::from_utf8(v).map_or(Node::Bytes, Node::Str))
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        // No `with_capacity(size_hint)`: the hint comes from the input and must not size allocations.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut pairs = Vec::new();
        while let Some((k, v)) = map.next_entry::<Node, Node>()? {
            pairs.push((k, v));
        }
        Ok(Node::Map(pairs))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// A [`Node`] deserializer that counts every value it builds against a shared budget, so
/// that a reader whose parser has no node limit of its own (serde_json) stops a huge flat
/// document after `max_nodes` values instead of building all of it.
pub(crate) struct Bounded<'b> {
    /// Values still allowed; each value built takes one.
    left: &'b std::cell::Cell<usize>,
    /// The budget it started with, for the error message.
    max_nodes: usize,
}

impl<'b> Bounded<'b> {
    /// A seed that builds one document of at most `max_nodes` values, counting in `left`
    /// (set it to `max_nodes` first).
    pub(crate) fn new(left: &'b std::cell::Cell<usize>, max_nodes: usize) -> Bounded<'b> {
        Bounded { left, max_nodes }
    }

    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(rest) => {
                self.left.set(rest);
                Ok(())
            }
            None => Err(E::custom(format!(
                "the document holds more than {} values (the reader's budget)",
                self.max_nodes
            ))),
        }
    }

    fn again(&self) -> Bounded<'b> {
        Bounded {
            left: self.left,
            max_nodes: self.max_nodes,
        }
    }
}

impl<'de> de::DeserializeSeed<'de> for Bounded<'_> {
    type Value = Node;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        self.take()?;
        NodeVisitor.visit_string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        self.take()?;
        Ok(Node::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        self.take()?;
        Ok(Node::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        self.take()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.again())? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        self.take()?;
        let mut pairs = Vec::new();
        while let Some(key) = map.next_key_seed(self.again())? {
            let value = map.next_value_seed(self.again())?;
            pairs.push((key, value));
        }
        Ok(Node::Map(pairs))
    }
}

/// What the top level of the document must look like, for error messages.
pub(crate) const SHAPE_EXPECTED: &str =
    "expected a top-level array of entries, or an object with an array under \"features\"";

/// Applies the passes-schema tolerance rules: finds the entry array and keeps every item
/// with a usable id.
///
/// Returns `Err` with a message when the top level has the wrong shape, or when an entry
/// with a usable id has a `passes` that is not a boolean (see [`to_entry`]).
pub(crate) fn to_feature_list(root: &Node) -> Result<FeatureList, String> {
    let mut entries = Vec::new();
    for item in entry_items(root)? {
        if let Some(entry) = to_entry(item)? {
            entries.push(entry);
        }
    }
    Ok(FeatureList {
        entries,
        contract: Contract::default(),
    })
}

/// Applies the status-schema rules: the same entry array and tolerance as the passes
/// schema, a state per entry instead of `passes`, and the contract from the top-level
/// object (empty when the top level is an array).
///
/// Returns `Err` when the top level has the wrong shape, or when an entry with a usable
/// id has a `status` that is not one of the six state words (null or absent is pending).
pub(crate) fn to_status_list(root: &Node) -> Result<FeatureList, String> {
    let mut entries = Vec::new();
    for item in entry_items(root)? {
        if let Some(entry) = to_status_entry(item)? {
            entries.push(entry);
        }
    }
    let contract = Contract {
        goal: root
            .field("goal")
            .and_then(Node::scalar_text)
            .unwrap_or_default(),
        acceptance: text_list(root.field("acceptance")),
        forbidden: text_list(root.field("forbidden")),
    };
    Ok(FeatureList { entries, contract })
}

/// The items of the entry array: the top level itself, or the object's `features`.
fn entry_items(root: &Node) -> Result<&[Node], String> {
    match root {
        Node::Seq(items) => Ok(items),
        Node::Map(_) => match root.field("features") {
            Some(Node::Seq(items)) => Ok(items),
            Some(_) => Err(format!("{SHAPE_EXPECTED}; \"features\" is not an array")),
            None => Err(format!(
                "{SHAPE_EXPECTED}; the object has no \"features\" key"
            )),
        },
        _ => Err(SHAPE_EXPECTED.to_string()),
    }
}

/// The scalars of a sequence as text, skipping the rest; anything but a sequence is empty.
fn text_list(node: Option<&Node>) -> Vec<String> {
    match node {
        Some(Node::Seq(items)) => items.iter().filter_map(Node::scalar_text).collect(),
        _ => Vec::new(),
    }
}

/// The fields both schemas share, with `passes` false; `Ok(None)` when the item is not a
/// map or has no usable id, `Err` when it gives its id twice with different values (a
/// reader could take either).
///
/// The id is read as a person reads it ([`fold_id`]): without the whitespace around it
/// (`"F1 "` is `F1`) or invisible characters in it, in compatibility form (`"F１"` is
/// `F1`).
fn common_fields(item: &Node) -> Result<Option<Entry>, String> {
    let Node::Map(pairs) = item else {
        return Ok(None);
    };
    let ids: Vec<Option<String>> = pairs
        .iter()
        .filter(|(k, _)| matches!(k, Node::Str(s) if s == "id"))
        .map(|(_, v)| match v {
            Node::Str(s) | Node::Int(s) => Some(fold_id(s)),
            _ => None,
        })
        .collect();
    if let Some(first) = ids.first()
        && ids.iter().any(|id| id != first)
    {
        let shown: Vec<String> = ids
            .iter()
            .map(|id| {
                id.as_ref()
                    .map_or_else(|| "a value that is no id".into(), |id| format!("{id:?}"))
            })
            .collect();
        return Err(format!(
            "an entry gives its \"id\" twice with different values ({}); a reader could take either",
            shown.join(", ")
        ));
    }
    let Some(Some(id)) = ids.last() else {
        return Ok(None);
    };
    let id = id.clone();
    // A blank id cannot be referred to (and cannot be written in Markdown), so it is not usable.
    if id.is_empty() {
        return Ok(None);
    }
    let text = |key: &str| {
        item.field(key)
            .and_then(Node::scalar_text)
            .unwrap_or_default()
    };
    Ok(Some(Entry {
        id,
        category: text("category"),
        description: text("description"),
        steps: text_list(item.field("steps")),
        passes: false,
        status: None,
        notes: String::new(),
    }))
}

/// One item as a passes-schema entry (`Ok(None)` when it is not a map or has no usable
/// id), or the reason its `passes` cannot be read.
///
/// `passes` must be a boolean (`true`/`false`; YAML 1.2 also spells them `True`,
/// `TRUE`, ...) or absent (not claimed). Anything else is a value a reader could take
/// either way (`1`, `"yes"`, `"true"`, YAML 1.1 `yes`/`on`, which a YAML 1.2 parser reads
/// as strings, or `null`), and two `passes` keys with different values are too: both
/// refuse the whole list instead of counting it as false.
fn to_entry(item: &Node) -> Result<Option<Entry>, String> {
    let Some(mut entry) = common_fields(item)? else {
        return Ok(None);
    };
    entry.passes = match single_field(item, "passes", &entry.id)? {
        None => false,
        Some(Node::Bool(b)) => *b,
        Some(other) => {
            return Err(format!(
                "feature {:?}: passes must be true or false, not {} ({})",
                entry.id,
                other.kind(),
                other
                    .scalar_text()
                    .unwrap_or_else(|| other.kind().to_string())
            ));
        }
    };
    Ok(Some(entry))
}

/// The value of `key` in `item`, or an error naming the entry when the key is given twice
/// with different values (a reader could take either one).
fn single_field<'n>(item: &'n Node, key: &str, id: &str) -> Result<Option<&'n Node>, String> {
    let Node::Map(pairs) = item else {
        return Ok(None);
    };
    let mut values = pairs
        .iter()
        .filter(|(k, _)| matches!(k, Node::Str(s) if s == key))
        .map(|(_, v)| v);
    let first = values.next();
    if let Some(first) = first
        && values.any(|v| v != first)
    {
        return Err(format!(
            "feature {id:?}: the key {key:?} is given twice with different values"
        ));
    }
    Ok(first)
}

/// Refuses a list in which two entries have the same id: a reader could take either
/// entry's claim.
pub(crate) fn refuse_duplicate_ids(list: &FeatureList) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for entry in &list.entries {
        if !seen.insert(entry.id.as_str()) {
            return Err(format!(
                "feature {:?} appears twice (ids are compared as a reader sees them: \
                 without invisible characters, fullwidth and other compatibility forms \
                 as the characters they stand for); a reader could take either entry",
                entry.id
            ));
        }
    }
    Ok(())
}

/// One item as a status-schema entry (`Ok(None)` when it is skipped as unusable), or the
/// reason its state cannot be read. A `passes` key is ignored: the state is the claim.
fn to_status_entry(item: &Node) -> Result<Option<Entry>, String> {
    let Some(mut entry) = common_fields(item)? else {
        return Ok(None);
    };
    let state = match single_field(item, "status", &entry.id)? {
        None | Some(Node::Null) => Status::Pending,
        Some(Node::Str(word)) => word
            .parse::<Status>()
            .map_err(|e| format!("feature {:?}: {e}", entry.id))?,
        Some(other) => {
            return Err(format!(
                "feature {:?}: status must be a state word, not {}",
                entry.id,
                other.kind()
            ));
        }
    };
    entry.set_state(state);
    entry.notes = item
        .field("notes")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    Ok(Some(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::Str(text.to_string())
    }

    fn map(pairs: &[(&str, Node)]) -> Node {
        Node::Map(pairs.iter().map(|(k, v)| (s(k), v.clone())).collect())
    }

    #[test]
    fn an_id_given_twice_with_different_values_is_refused_and_twice_the_same_is_one_id() {
        let item = map(&[("id", s("A")), ("id", s("B"))]);
        let why = to_entry(&item).unwrap_err();
        assert!(why.contains("gives its \"id\" twice"), "{why}");
        let item = map(&[("id", s("A")), ("id", Node::Seq(vec![]))]);
        assert!(to_entry(&item).is_err());
        let item = map(&[("id", s("A")), ("id", s(" A "))]);
        assert_eq!(
            to_entry(&item).map(|e| e.map(|e| e.id)),
            Ok(Some("A".to_string()))
        );
        // Other keys given twice still resolve to the last value.
        let item = map(&[
            ("id", s("A")),
            ("description", s("x")),
            ("description", s("y")),
        ]);
        assert_eq!(
            to_entry(&item).map(|e| e.map(|e| e.description)),
            Ok(Some("y".to_string()))
        );
    }

    #[test]
    fn an_id_is_read_without_the_whitespace_around_it() {
        let item = map(&[("id", s("\tF1 "))]);
        assert_eq!(
            to_entry(&item).map(|e| e.map(|e| e.id)),
            Ok(Some("F1".to_string()))
        );
    }

    #[test]
    fn an_id_is_read_as_it_looks_and_two_that_look_alike_are_one_id() {
        for raw in [
            "F1\u{200b}",
            "F\u{ff11}",
            "\u{feff}F1",
            "F\u{ad}1",
            "F1\u{200e}",
        ] {
            let item = map(&[("id", s(raw))]);
            assert_eq!(
                to_entry(&item).map(|e| e.map(|e| e.id)),
                Ok(Some("F1".to_string())),
                "{raw:?}"
            );
        }
        let item = map(&[("id", s("F1")), ("id", s("F1\u{200b}"))]);
        assert_eq!(
            to_entry(&item).map(|e| e.map(|e| e.id)),
            Ok(Some("F1".to_string()))
        );
        let root = Node::Seq(vec![
            map(&[("id", s("F1"))]),
            map(&[("id", s("F\u{ff11}"))]),
        ]);
        let list = to_feature_list(&root).unwrap_or_default();
        let err = refuse_duplicate_ids(&list).err().unwrap_or_default();
        assert!(err.contains("\"F1\" appears twice"), "{err}");
        // An id of invisible characters alone is blank, so not usable.
        assert_eq!(to_entry(&map(&[("id", s("\u{200b}\u{feff}"))])), Ok(None));
    }

    #[test]
    fn blank_and_non_scalar_ids_are_not_usable() {
        for id in [
            s(""),
            s("  "),
            Node::Null,
            Node::Float(1.5),
            Node::Seq(vec![]),
        ] {
            assert_eq!(to_entry(&map(&[("id", id.clone())])), Ok(None), "{id:?}");
        }
    }

    #[test]
    fn non_string_scalars_in_text_fields_become_their_text() {
        let item = map(&[
            ("id", Node::Int("7".into())),
            ("description", Node::Float(2.0)),
            ("category", Node::Bool(true)),
            (
                "steps",
                Node::Seq(vec![Node::Float(0.5), Node::Null, Node::Bytes]),
            ),
        ]);
        let entry = to_entry(&item).ok().flatten();
        assert_eq!(entry.as_ref().map(|e| e.description.as_str()), Some("2.0"));
        assert_eq!(entry.as_ref().map(|e| e.category.as_str()), Some("true"));
        assert_eq!(entry.map(|e| e.steps), Some(vec!["0.5".to_string()]));
    }

    #[test]
    fn passes_accepts_only_booleans_and_refuses_every_other_value() {
        let passes =
            |v: Node| to_entry(&map(&[("id", s("A")), ("passes", v)])).map(|e| e.map(|e| e.passes));
        assert_eq!(passes(Node::Bool(true)), Ok(Some(true)));
        assert_eq!(passes(Node::Bool(false)), Ok(Some(false)));
        assert_eq!(
            to_entry(&map(&[("id", s("A"))])).map(|e| e.map(|e| e.passes)),
            Ok(Some(false))
        );
        // A reader could take each of these either way, so none is silently false.
        for value in [
            s(" TRUE "),
            s("true"),
            s("false"),
            s("yes"),
            s("on"),
            s("Y"),
            Node::Int("1".into()),
            Node::Int("0".into()),
            Node::Float(1.0),
            Node::Null,
            Node::Seq(vec![Node::Bool(true)]),
        ] {
            let err = passes(value.clone()).err().unwrap_or_default();
            assert!(
                err.contains("\"A\"") && err.contains("passes"),
                "{value:?}: {err}"
            );
        }
    }

    #[test]
    fn a_claim_key_given_twice_with_different_values_is_refused() {
        let two = map(&[
            ("id", s("A")),
            ("passes", Node::Bool(false)),
            ("passes", Node::Bool(true)),
        ]);
        assert!(to_entry(&two).is_err());
        let same = map(&[
            ("id", s("A")),
            ("passes", Node::Bool(true)),
            ("passes", Node::Bool(true)),
        ]);
        assert_eq!(to_entry(&same).map(|e| e.map(|e| e.passes)), Ok(Some(true)));
        let states = map(&[
            ("id", s("A")),
            ("status", s("pending")),
            ("status", s("completed")),
        ]);
        assert!(to_status_entry(&states).is_err());
    }

    #[test]
    fn two_entries_with_one_id_are_refused() {
        let root = Node::Seq(vec![
            map(&[("id", s("A"))]),
            map(&[("id", s("B"))]),
            map(&[("id", s("A")), ("passes", Node::Bool(true))]),
        ]);
        let list = to_feature_list(&root).unwrap_or_default();
        let err = refuse_duplicate_ids(&list).err().unwrap_or_default();
        assert!(err.contains("\"A\"") && err.contains("twice"), "{err}");
    }

    fn status_entry(pairs: &[(&str, Node)]) -> Result<Option<Entry>, String> {
        to_status_entry(&map(pairs))
    }

    #[test]
    fn a_missing_or_null_status_is_pending() {
        for item in [
            status_entry(&[("id", s("A"))]),
            status_entry(&[("id", s("A")), ("status", Node::Null)]),
        ] {
            assert_eq!(
                item.map(|e| e.map(|e| e.status)),
                Ok(Some(Some(Status::Pending)))
            );
        }
    }

    #[test]
    fn a_status_that_is_not_a_state_word_is_refused_whatever_its_type() {
        for status in [
            s("done"),
            s(""),
            Node::Bool(true),
            Node::Int("1".into()),
            Node::Float(1.0),
            Node::Bytes,
            Node::Seq(vec![s("completed")]),
            map(&[("completed", Node::Bool(true))]),
        ] {
            let err = status_entry(&[("id", s("A")), ("status", status.clone())]).err();
            assert!(err.is_some_and(|e| e.contains("\"A\"")), "{status:?}");
        }
    }

    #[test]
    fn an_unusable_item_is_skipped_before_its_status_is_read() {
        assert_eq!(status_entry(&[("status", s("done"))]), Ok(None));
        let root = Node::Seq(vec![s("x"), map(&[("id", s(" ")), ("status", s("?"))])]);
        assert_eq!(to_status_list(&root), Ok(FeatureList::default()));
    }

    #[test]
    fn notes_are_scalar_text_and_anything_else_is_empty() {
        let notes =
            |v: Node| status_entry(&[("id", s("A")), ("notes", v)]).map(|e| e.map(|e| e.notes));
        assert_eq!(notes(s("n")), Ok(Some("n".to_string())));
        assert_eq!(notes(Node::Int("3".into())), Ok(Some("3".to_string())));
        assert_eq!(notes(Node::Seq(vec![s("n")])), Ok(Some(String::new())));
    }

    #[test]
    fn the_contract_comes_only_from_a_top_level_mapping() {
        let root = map(&[
            ("goal", s("g")),
            (
                "acceptance",
                Node::Seq(vec![s("a"), Node::Null, Node::Int("2".into())]),
            ),
            ("forbidden", s("not a list")),
            ("features", Node::Seq(vec![])),
        ]);
        let contract = to_status_list(&root).map(|l| l.contract);
        assert_eq!(
            contract,
            Ok(Contract {
                goal: "g".into(),
                acceptance: vec!["a".into(), "2".into()],
                forbidden: vec![],
            })
        );
        assert_eq!(
            to_status_list(&Node::Seq(vec![])),
            Ok(FeatureList::default())
        );
        // The passes schema never reads a contract.
        assert_eq!(
            to_feature_list(&root).map(|l| l.contract),
            Ok(Contract::default())
        );
    }

    #[test]
    fn features_key_that_is_not_an_array_is_a_shape_error() {
        let root = map(&[("features", map(&[]))]);
        assert!(to_feature_list(&root).is_err());
        assert!(to_feature_list(&map(&[("other", Node::Seq(vec![]))])).is_err());
        assert!(to_feature_list(&s("x")).is_err());
    }
}
