//! Text to index terms: identifier splitting, lowercasing, English stop words and stemming.
//!
//! One analyzer serves the tools and the queries, so a query word meets the tool word it
//! names whatever the spelling: `getWeatherForecast`, `get_weather_forecast` and
//! "get weather forecasts" all become `get`, `weather`, `forecast`.

use std::borrow::Cow;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that carry no meaning for finding a tool, dropped from tools and queries alike.
///
/// NLTK's English list without the words that do name what a tool does (`up`, `down`,
/// `on`, `off`, `out`, `over`, `under`, `all`, `no`, `not`, `before`, `after`, `again`,
/// `more`, `most`, `few`, `same`, `other`, `own`, `now`, `once`, `then`) and without its
/// contraction fragments. Sorted, for a binary search.
const STOP_WORDS: [&str; 95] = [
    "a",
    "about",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "during",
    "each",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "my",
    "myself",
    "of",
    "or",
    "our",
    "ours",
    "ourselves",
    "please",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
];

/// Splits `text` into words: maximal runs of alphanumeric characters, cut again where
/// camelCase or PascalCase starts a new word (`weatherForecast`, `HTTPServer`) and between
/// letters and digits (`v2`). The words keep their case; everything else separates them.
pub(crate) fn split_words<'t>(text: &'t str, mut word: impl FnMut(&'t str)) {
    let mut start: Option<usize> = None;
    // The class of the previous character of the current run.
    let mut prev = Class::Separator;
    let mut at = 0usize;
    let mut current = class_at(text, 0);
    while let Some((c, width)) = current {
        let after = at.saturating_add(width);
        let upcoming = class_at(text, after);
        if c == Class::Separator {
            if let Some(from) = start.take() {
                emit(text, from, at, &mut word);
            }
        } else if let Some(from) = start {
            let next = upcoming.map_or(Class::Separator, |(n, _)| n);
            if is_boundary(prev, c, next) {
                emit(text, from, at, &mut word);
                start = Some(at);
            }
        } else {
            start = Some(at);
        }
        prev = c;
        at = after;
        current = upcoming;
    }
    if let Some(from) = start {
        emit(text, from, text.len(), &mut word);
    }
}

/// The class and UTF-8 width of the character at byte `at` of `text` (a character
/// boundary), or `None` at the end; ASCII without decoding.
fn class_at(text: &str, at: usize) -> Option<(Class, usize)> {
    let byte = *text.as_bytes().get(at)?;
    if byte.is_ascii() {
        return Some((class(char::from(byte)), 1));
    }
    let c = text.get(at..)?.chars().next()?;
    Some((class(c), c.len_utf8()))
}

fn emit<'t>(text: &'t str, from: usize, to: usize, word: &mut impl FnMut(&'t str)) {
    if let Some(w) = text.get(from..to)
        && !w.is_empty()
    {
        word(w);
    }
}

/// What a character is to the word splitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Not alphanumeric: ends a word.
    Separator,
    /// A lowercase letter.
    Lower,
    /// An uppercase (or titlecase) letter.
    Upper,
    /// A numeric character.
    Digit,
    /// A letter without case (CJK, say).
    Caseless,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            _ => Class::Separator,
        };
    }
    if !c.is_alphanumeric() {
        Class::Separator
    } else if c.is_numeric() {
        Class::Digit
    } else if c.is_lowercase() {
        Class::Lower
    } else if c.is_uppercase() || c.to_lowercase().ne(std::iter::once(c)) {
        Class::Upper
    } else {
        Class::Caseless
    }
}

/// Whether a new word starts at a character of class `c`, after `prev` and before `next`,
/// inside one run of alphanumeric characters.
fn is_boundary(prev: Class, c: Class, next: Class) -> bool {
    match (prev, c) {
        (Class::Digit, Class::Digit) => false,
        (Class::Digit, _) | (_, Class::Digit) => true,
        (Class::Lower, Class::Upper) => true,
        // The last capital of an acronym starts the next word: `HTTPServer` → `HTTP`, `Server`.
        (Class::Upper, Class::Upper) => next == Class::Lower,
        _ => false,
    }
}

/// The whole of an identifier-like chunk, lowercased (`get_weather`), when it holds more
/// than one word; `None` for a single word (its term already covers it).
///
/// Leading and trailing characters that are not alphanumeric are dropped first, so that
/// `"get_weather",` in a query and the tool name `get_weather` give the same term.
pub(crate) fn compound(chunk: &str) -> Option<String> {
    let trimmed = chunk.trim_matches(|c: char| !c.is_alphanumeric());
    let mut words = 0usize;
    split_words(trimmed, |_| words = words.saturating_add(1));
    (words > 1).then(|| trimmed.to_lowercase())
}

/// Turns text into terms: words (see [`split_words`]), lowercased, stop words dropped, and
/// ASCII words stemmed with Snowball's English stemmer (Porter 2).
pub(crate) struct Analyzer {
    stemmer: Stemmer,
}

impl Analyzer {
    /// The analyzer of tools and queries.
    pub(crate) fn new() -> Analyzer {
        Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// The term of one word, or `None` for a stop word.
    pub(crate) fn term(&self, word: &str) -> Option<String> {
        let lower: Cow<'_, str> =
            if word.is_ascii() && !word.bytes().any(|b| b.is_ascii_uppercase()) {
                Cow::Borrowed(word)
            } else {
                Cow::Owned(word.to_lowercase())
            };
        if lower.is_empty() || STOP_WORDS.binary_search(&lower.as_ref()).is_ok() {
            return None;
        }
        // Snowball's English rules are for English words: digits, other scripts and very
        // short words are kept as they are.
        if lower.len() > 2 && lower.bytes().all(|b| b.is_ascii_lowercase()) {
            return Some(self.stemmer.stem(&lower).into_owned());
        }
        Some(lower.into_owned())
    }

    /// The terms of a query: the terms of its words, then, for each whitespace-separated
    /// chunk that holds several words, the whole chunk lowercased (see [`compound`]), so a
    /// query naming a tool exactly meets that tool's own compound term.
    pub(crate) fn query(&self, query: &str, out: &mut Vec<String>) {
        split_words(query, |word| out.extend(self.term(word)));
        out.extend(query.split_whitespace().filter_map(compound));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        split_words(text, |w| out.push(w));
        out
    }

    fn terms(text: &str) -> Vec<String> {
        let analyzer = Analyzer::new();
        let mut out = Vec::new();
        split_words(text, |word| out.extend(analyzer.term(word)));
        out
    }

    #[test]
    fn identifiers_split_at_separators_case_and_digits() {
        let split: Vec<String> = words("get_weatherForecast-v2.now")
            .into_iter()
            .map(str::to_lowercase)
            .collect();
        assert_eq!(split, ["get", "weather", "forecast", "v", "2", "now"]);
        assert_eq!(words("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(words("parseJSON"), ["parse", "JSON"]);
        assert_eq!(words("GetURLs2Fetch"), ["Get", "UR", "Ls", "2", "Fetch"]);
        assert_eq!(words("  list   files "), ["list", "files"]);
        assert_eq!(words("sha256sum"), ["sha", "256", "sum"]);
        assert_eq!(words("über_größe"), ["über", "größe"]);
        assert!(words("__--..\0 \t").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn terms_are_lowercased_stemmed_and_free_of_stop_words() {
        assert_eq!(
            terms("Lists the files in a Directory"),
            ["list", "file", "directori"]
        );
        assert_eq!(
            terms("get_weatherForecast-v2.now"),
            ["get", "weather", "forecast", "v", "2", "now"]
        );
        assert_eq!(terms("Turn the lights off"), ["turn", "light", "off"]);
        assert_eq!(terms("ÉTÉ 42"), ["été", "42"]);
        assert!(terms("the of and to").is_empty());
    }

    #[test]
    fn the_stop_word_list_is_sorted_and_lowercase() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| w.to_lowercase() == *w));
    }

    #[test]
    fn compounds_are_whole_lowercased_identifiers() {
        assert_eq!(compound("get_Weather"), Some("get_weather".to_owned()));
        assert_eq!(compound("\"get_weather\","), Some("get_weather".to_owned()));
        assert_eq!(compound("weather"), None);
        assert_eq!(compound("__"), None);
        let mut out = Vec::new();
        Analyzer::new().query("call getWeather now", &mut out);
        assert_eq!(out, ["call", "get", "weather", "now", "getweather"]);
    }

    proptest::proptest! {
        #[test]
        fn splitting_and_terms_never_panic_and_are_lowercase(text in "\\PC{0,64}|[a-zA-Z0-9_.\\- ]{0,64}") {
            let analyzer = Analyzer::new();
            split_words(&text, |word| {
                assert!(!word.is_empty());
                assert!(text.contains(word));
                assert!(word.chars().all(char::is_alphanumeric), "{word:?}");
            });
            let mut terms = Vec::new();
            analyzer.query(&text, &mut terms);
            for term in &terms {
                assert!(!term.is_empty());
                assert_eq!(term, &term.to_lowercase(), "{text:?}");
                assert!(!term.chars().any(char::is_whitespace), "{term:?}");
            }
        }

        #[test]
        fn any_unicode_never_panics(text in proptest::collection::vec(proptest::char::any(), 0..48)) {
            let text: String = text.into_iter().collect();
            let mut terms = Vec::new();
            Analyzer::new().query(&text, &mut terms);
            for term in &terms {
                assert_eq!(term, &term.to_lowercase(), "{text:?}");
            }
        }
    }
}
