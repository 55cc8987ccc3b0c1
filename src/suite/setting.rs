//! Settings of `suite.toml` that take one of a few words, as enums that reject any other
//! word while the file is parsed, with one spelling per variant for parsing, printing and
//! the records.

/// Declares a setting: the enum, its spellings (`as_str`, `ALL`), `Display`, and serde
/// both ways through the spelling. An unknown word is an error that names the key and
/// every accepted spelling, at the position of the value in the file.
macro_rules! setting {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($key:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $spelling:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling in `suite.toml`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $spelling ),+
                }
            }

            /// The value spelled `word`, if any.
            pub fn from_word(word: &str) -> Option<$name> {
                match word {
                    $( $spelling => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// What the key accepts, as the error message says it.
            fn expected() -> String {
                $crate::suite::setting::one_of(&[$($spelling),+])
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let word = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                $name::from_word(&word).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "{} must be {}, got '{}'",
                        $key,
                        $name::expected(),
                        word
                    ))
                })
            }
        }
    };
}

pub(crate) use setting;

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
pub(crate) fn one_of(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    setting! {
        /// A setting for the tests.
        enum Colour ("colour") { Red = "red", Green = "green", Blue = "blue" }
    }

    #[derive(Debug, serde::Deserialize)]
    struct File {
        colour: Colour,
    }

    #[test]
    fn every_spelling_parses_and_prints_back() {
        for colour in Colour::ALL {
            let file: File = toml::from_str(&format!("colour = \"{colour}\"")).unwrap();
            assert_eq!(file.colour, *colour);
            assert_eq!(
                serde_json::to_string(colour).unwrap(),
                format!("\"{colour}\"")
            );
        }
    }

    #[test]
    fn an_unknown_word_names_the_key_and_every_spelling() {
        let err = toml::from_str::<File>("colour = \"mauve\"").unwrap_err();
        assert!(
            err.message()
                .contains("colour must be \"red\", \"green\" or \"blue\", got 'mauve'"),
            "{err}"
        );
        assert_eq!(err.span(), Some(9..16));
    }

    #[test]
    fn a_non_string_is_refused() {
        assert!(toml::from_str::<File>("colour = 3").is_err());
    }
}
