//! Similarity by meaning, for the requests whose words are not the tools' words ("what street
//! is at 52.52, 13.40" for `maps_reverse_geocode`, "what do you remember about Apollo" for a
//! memory server's `search_nodes`). BM25 cannot bridge those; a static embedding model can,
//! at a cost a search can afford: a text's vector is the mean of its tokens' vectors, so
//! embedding is a table look-up per token and a comparison is one dot product.
//!
//! The model is WordLlama's `l2_supercat` (MIT), cut to 128 of its 256 dimensions and
//! quantised to bytes by `scripts/build_search_model.py`, then cut to the tokens written in
//! ASCII by `scripts/shrink_search_model.py` (tool names and descriptions are English; the
//! 6,766 other tokens were 0.95 MB of the binary, decision 0087); why this model and not a
//! transformer: docs/decisions/0040-tool-search-meaning.md. It is compiled into the binary,
//! so search works with no download and no network.
//!
//! Tokens are found by greedy longest match against the model's vocabulary, word by word with
//! SentencePiece's `▁` word-start marker, instead of by Llama 2's byte-pair merges: on the
//! tool-search task sets the two tokenisations gave the same recall, and the greedy one
//! needs neither the merge table nor a tokenizer crate.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The model file (format in `scripts/build_search_model.py`).
static MODEL: &[u8] = include_bytes!("../../../../../assets/search/wordllama-l2-supercat-128.bin");

const MAGIC: &[u8; 8] = b"TGWL0001";

/// SentencePiece's marker for "a word starts here".
const WORD_START: char = '\u{2581}';

/// A static token-embedding model: vocabulary, and per token a quantised vector and its scale.
#[derive(Debug)]
pub struct Embedder {
    token_ids: HashMap<&'static str, u32>,
    /// Longest token, in bytes: the longest match worth trying.
    longest: usize,
    dimensions: usize,
    scales: Vec<f32>,
    vectors: &'static [u8],
}

/// The compiled-in model, parsed on first use. `None` only if the file in the binary is
/// malformed (a build from a broken checkout): search then ranks by words alone, and says so
/// once in the log.
pub fn embedder() -> Option<&'static Embedder> {
    static EMBEDDER: OnceLock<Option<Embedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| match Embedder::parse(MODEL) {
            Ok(embedder) => Some(embedder),
            Err(reason) => {
                tracing::warn!("tool search ranks by words only: the embedding model {reason}");
                None
            }
        })
        .as_ref()
}

impl Embedder {
    /// Reads the model file's layout; every length is checked against the bytes there are.
    pub fn parse(bytes: &'static [u8]) -> Result<Self, ModelError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(MAGIC.len())? != MAGIC {
            return Err(ModelError::WrongMagic);
        }
        let vocabulary = reader.u32()? as usize;
        let dimensions = reader.u32()? as usize;
        if vocabulary == 0 || dimensions == 0 {
            return Err(ModelError::Empty);
        }
        let mut token_ids = HashMap::with_capacity(vocabulary);
        let mut longest = 0;
        for id in 0..vocabulary {
            let len = usize::from(reader.u16()?);
            let token =
                std::str::from_utf8(reader.take(len)?).map_err(|_| ModelError::TokenNotUtf8(id))?;
            longest = longest.max(token.len());
            // Llama's vocabulary has a few duplicates of special tokens; the first id wins.
            token_ids.entry(token).or_insert(id as u32);
        }
        let scales = reader
            .take(vocabulary * 4)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let vectors = reader.take(vocabulary * dimensions)?;
        if reader.at != bytes.len() {
            return Err(ModelError::TrailingBytes(bytes.len() - reader.at));
        }
        Ok(Embedder {
            token_ids,
            longest,
            dimensions,
            scales,
            vectors,
        })
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The unit-length mean of the vectors of `text`'s tokens, or all zeros when no token of
    /// the vocabulary occurs in it. `cache` keeps each word's tokens across calls (an index
    /// embeds many texts with the same words).
    pub fn embed(&self, text: &str, cache: &mut TokenCache) -> Vec<f32> {
        let mut sum = vec![0f32; self.dimensions];
        let mut count = 0usize;
        for word in text.split_whitespace() {
            let tokens = cache
                .words
                .entry(word.to_string())
                .or_insert_with(|| self.tokens(word));
            for &token in tokens.iter() {
                self.add(token, &mut sum);
                count += 1;
            }
        }
        if count > 0 {
            normalise(&mut sum);
        }
        sum
    }

    /// The token ids of one word: from its start, the longest vocabulary entry that matches,
    /// repeatedly; a character no entry starts with is skipped.
    fn tokens(&self, word: &str) -> Vec<u32> {
        let marked = format!("{WORD_START}{word}");
        let mut ids = Vec::new();
        let mut at = 0;
        while at < marked.len() {
            let mut end = (at + self.longest).min(marked.len());
            let found = loop {
                if end <= at {
                    break None;
                }
                if marked.is_char_boundary(end)
                    && let Some(&id) = self.token_ids.get(&marked[at..end])
                {
                    break Some((id, end));
                }
                end -= 1;
            };
            match found {
                Some((id, next)) => {
                    ids.push(id);
                    at = next;
                }
                None => {
                    // Skip one character.
                    at += marked[at..].chars().next().map_or(1, char::len_utf8);
                }
            }
        }
        ids
    }

    fn add(&self, token: u32, sum: &mut [f32]) {
        let token = token as usize;
        let scale = self.scales[token];
        let row = &self.vectors[token * self.dimensions..(token + 1) * self.dimensions];
        for (s, &q) in sum.iter_mut().zip(row) {
            *s += f32::from(q as i8) * scale;
        }
    }
}

/// Each word's tokens, kept while an index is built.
#[derive(Debug, Default)]
pub struct TokenCache {
    words: HashMap<String, Vec<u32>>,
}

/// Scales `v` to unit length (a zero vector stays zero).
fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

/// The dot product: the cosine of two unit vectors.
/// Summed in eight lanes, which the compiler turns into vector instructions (one running sum
/// cannot be: float addition is not associative); a search compares the query's words with
/// every indexed word's vector, most of its time.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() - a.len() % 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for k in 0..8 {
            lanes[k] += x[k] * y[k];
        }
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + rest
}

/// What is wrong with an embedding model file; each reads after "the embedding model".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("is not a toolgate embedding file (wrong magic)")]
    WrongMagic,
    #[error("is empty")]
    Empty,
    #[error("has a token that is not UTF-8 (id {0})")]
    TokenNotUtf8(usize),
    #[error("has {0} bytes after its vectors")]
    TrailingBytes(usize),
    #[error("is cut short at byte {0}")]
    CutShort(usize),
}

struct Reader {
    bytes: &'static [u8],
    at: usize,
}

impl Reader {
    fn take(&mut self, len: usize) -> Result<&'static [u8], ModelError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(ModelError::CutShort(self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u16(&mut self) -> Result<u16, ModelError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, ModelError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> &'static Embedder {
        embedder().expect("the compiled-in model parses")
    }

    #[test]
    fn the_compiled_in_model_has_llama_2_ascii_vocabulary() {
        let m = model();
        assert_eq!(m.dimensions(), 128);
        // Llama 2's 32,000 tokens less those written outside ASCII and the byte tokens
        // (scripts/shrink_search_model.py).
        assert_eq!(m.token_ids.len(), 25234);
        assert!(
            m.token_ids
                .keys()
                .all(|t| t.chars().all(|c| c.is_ascii() || c == WORD_START))
        );
        // Whole common words are single tokens, with the word-start marker.
        assert_eq!(m.tokens("the").len(), 1);
        assert_eq!(m.tokens("address").len(), 1);
    }

    #[test]
    fn unknown_words_fall_back_to_pieces() {
        let m = model();
        let pieces = m.tokens("kubectl");
        assert!(pieces.len() >= 2, "{pieces:?}");
        // A character no token starts with is skipped, not a failure.
        let mut cache = TokenCache::default();
        let v = m.embed("\u{1F600}", &mut cache);
        assert_eq!(v.len(), 128);
    }

    #[test]
    fn related_meanings_are_closer_than_unrelated_ones() {
        let m = model();
        let mut cache = TokenCache::default();
        let street = m.embed("what street is at these coordinates", &mut cache);
        let geocode = m.embed("Convert coordinates into an address", &mut cache);
        let weather = m.embed("Post a message to a channel", &mut cache);
        assert!(
            cosine(&street, &geocode) > cosine(&street, &weather) + 0.1,
            "{} vs {}",
            cosine(&street, &geocode),
            cosine(&street, &weather)
        );
        let unit = cosine(&street, &street);
        assert!((unit - 1.0).abs() < 1e-4, "{unit}");
    }

    #[test]
    fn malformed_files_are_refused_with_the_reason() {
        let err = Embedder::parse(b"NOTAMODEL").unwrap_err().to_string();
        assert!(err.contains("magic"), "{err}");
        let err = Embedder::parse(&MODEL[..MODEL.len() / 2])
            .unwrap_err()
            .to_string();
        assert!(err.contains("cut short"), "{err}");
    }
}
