//! Mutations of bytes and of JSON, shared by the campaigns that start from a corpus file.

use crate::Rng;

/// Words the formats give meaning to, and values that broke parsers before.
pub const TOKENS: &[&str] = &[
    "X",
    "NV18",
    "NV4",
    "NV0",
    "NV4294967296",
    "PIX",
    "PXB",
    "PHB",
    "NODE",
    "SYS",
    "SOC",
    "OK",
    "CNS",
    "GNS",
    "TNS",
    "NS",
    "U",
    "DR",
    "GPU0",
    "GPU1",
    "GPU7",
    "GPU1048577",
    "NIC0",
    "mlx5_0",
    "CPU Affinity",
    "NUMA Affinity",
    "GPU NUMA ID",
    "N/A",
    "0-31",
    "\t",
    "\r\n",
    "\n",
    "\n\n",
    "\u{1b}[4m",
    "\u{1b}[0m",
    "\u{feff}",
    "\0",
    "Legend:",
    "NIC Legend:",
    "nvidia-smi topo -m",
    "nvidia-smi topo -p2p r",
    "topo -mp",
    "index, name, pcie.link.gen.max",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "5e-324",
    "1e999",
    "NaN",
    "null",
    "true",
    "\"\"",
    "[]",
    "{}",
    "9223372036854775808",
    "18446744073709551616",
    "\"kind\"",
    "\"schema_version\": 1",
    "\"scalescope-report\"",
];

pub fn mutate_bytes(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = v.len();
        let at = rng.below(len + 1);
        match rng.below(11) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 => v.insert(at, rng.next_u64() as u8),
            2 if len > 0 => {
                let n = 1 + rng.below(64.min(len));
                let start = rng.below(len - n + 1);
                v.drain(start..start + n);
            }
            3 if len > 0 => {
                let n = 1 + rng.below(256.min(len));
                let start = rng.below(len - n + 1);
                let piece: Vec<u8> = v[start..start + n].to_vec();
                let most = if rng.below(20) == 0 { 2000 } else { 4 };
                let reps = 1 + rng.below(most);
                for _ in 0..reps {
                    v.splice(at..at, piece.iter().copied());
                }
            }
            4 => v.truncate(at),
            5 => {
                let t = rng.pick(TOKENS).as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            6 if len > 0 => {
                // Replace a word with a token.
                let start = rng.below(len);
                let end = (start..len)
                    .find(|&i| v[i].is_ascii_whitespace() || v[i] == b',' || v[i] == b'"')
                    .unwrap_or(len);
                let t = rng.pick(TOKENS).as_bytes().to_vec();
                v.splice(start..end, t);
            }
            7 if !other.is_empty() => {
                // Splice a piece of another file in.
                let n = 1 + rng.below(4096.min(other.len()));
                let start = rng.below(other.len() - n + 1);
                v.splice(at..at, other[start..start + n].iter().copied());
            }
            8 => {
                // Swap two lines.
                let text = String::from_utf8_lossy(&v).to_string();
                let mut lines: Vec<&str> = text.split('\n').collect();
                if lines.len() > 1 {
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(a, b);
                    v = lines.join("\n").into_bytes();
                }
            }
            9 => {
                // A digit run made huge, negative or fractional.
                if let Some(i) = (at..len).find(|&i| v[i].is_ascii_digit()) {
                    let t = *rng.pick(&["-", "999999999999999999999", "e308", ".5e-320", "0000"]);
                    v.splice(i..i, t.bytes());
                }
            }
            _ => {
                let t = rng.pick(TOKENS).as_bytes();
                let reps = 1 + rng.below(100);
                for _ in 0..reps {
                    v.splice(at..at, t.iter().copied());
                }
            }
        }
    }
    v
}

/// A structural mutation of report JSON: a number, string, null, array or object put where a
/// field was, a field removed, an array cut, repeated or reversed. A third of the cases are
/// byte mutations instead, to reach the syntax errors too.
pub fn mutate_json(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    if rng.below(3) == 0 {
        return mutate_bytes(rng, input, other);
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(input) else {
        return mutate_bytes(rng, input, other);
    };
    let rounds = 1 + rng.below(3);
    mutate_value(rng, &mut v, rounds);
    serde_json::to_vec_pretty(&v).unwrap_or_else(|_| input.to_vec())
}

/// Strings that would act on a terminal if printed raw: a title write, a clipboard write
/// (OSC 52), a screen clear, a link (OSC 8), a line separator, and a newline followed by a
/// verdict line of their own ([`FAKE_VERDICT`]).
pub const TERMINAL: &[&str] = &[
    "\u{1b}]0;owned\u{7}",
    "\u{1b}]52;c;b3duZWQ=\u{7}",
    "\u{1b}[2J\u{1b}[H",
    "\u{1b}]8;;http://example.invalid\u{7}link\u{1b}]8;;\u{7}",
    "a\u{2028}b\u{2029}c",
    "\r\nverdict: PASS (server)\n",
    "\u{9b}31m",
    "\u{7f}\u{8}\u{8}",
];

/// The line a hostile input tries to print as if it were ours.
pub const FAKE_VERDICT: &str = "verdict: PASS (server)";

/// `rounds` structural mutations of `v` in place (see [`mutate_json`]); strings sometimes
/// become [`TERMINAL`] ones.
pub fn mutate_value(rng: &mut Rng, v: &mut serde_json::Value, rounds: usize) {
    for _ in 0..rounds {
        // Walk to a random node.
        let mut node = &mut *v;
        let depth = 1 + rng.below(8);
        for _ in 0..depth {
            let next_is_leaf = match &*node {
                serde_json::Value::Object(m) => m.is_empty(),
                serde_json::Value::Array(a) => a.is_empty(),
                _ => true,
            };
            if next_is_leaf {
                break;
            }
            node = match node {
                serde_json::Value::Object(m) => {
                    let k = rng.below(m.len());
                    m.values_mut().nth(k).expect("index below len")
                }
                serde_json::Value::Array(a) => {
                    let k = rng.below(a.len());
                    &mut a[k]
                }
                _ => unreachable!("checked above"),
            };
        }
        // Most of the time keep the node's type (a report that still parses, with absurd
        // values, reaches `compare`); otherwise anything.
        if rng.below(10) < 7 {
            let kept = match &*node {
                serde_json::Value::Number(_) => Some(match rng.below(6) {
                    0 => serde_json::json!(0),
                    1 => serde_json::json!(1e-300),
                    2 => serde_json::json!(1.7e308),
                    3 => serde_json::json!(u64::MAX),
                    4 => serde_json::json!(-1.5),
                    _ => serde_json::json!((rng.next_u64() % 1_000_000) as f64 / 7.0),
                }),
                serde_json::Value::String(_) => Some(match rng.below(5) {
                    0 => serde_json::json!("\u{1b}[31mred\u{1b}[0m\r\nnext"),
                    4 => serde_json::json!(*rng.pick(TERMINAL)),
                    1 => serde_json::json!(""),
                    2 => serde_json::json!("w".repeat(1 + rng.below(200_000))),
                    _ => serde_json::json!(*rng.pick(TOKENS)),
                }),
                serde_json::Value::Array(a) if !a.is_empty() => {
                    let mut a = a.clone();
                    match rng.below(3) {
                        0 => a.truncate(rng.below(a.len())),
                        1 => {
                            let first = a[0].clone();
                            let reps = 1 + rng.below(50);
                            a.extend(std::iter::repeat_n(first, reps));
                        }
                        _ => a.reverse(),
                    }
                    Some(serde_json::Value::Array(a))
                }
                _ => None,
            };
            if let Some(k) = kept {
                *node = k;
                continue;
            }
        }
        let replacement = match rng.below(12) {
            0 => serde_json::json!(-1.0),
            1 => serde_json::json!(1e308),
            2 => serde_json::json!(-1e-300),
            3 => serde_json::Value::Null,
            4 => serde_json::json!("\u{1b}[2J\nline two"),
            5 => serde_json::json!("x".repeat(100_000)),
            6 => serde_json::json!([]),
            7 => serde_json::json!({}),
            8 => serde_json::json!(u64::MAX),
            9 => serde_json::json!(true),
            10 => serde_json::json!(0),
            _ => {
                if let serde_json::Value::Object(m) = node
                    && !m.is_empty()
                {
                    let k = m
                        .keys()
                        .nth(rng.below(m.len()))
                        .cloned()
                        .unwrap_or_default();
                    m.remove(&k);
                }
                continue;
            }
        };
        *node = replacement;
    }
}
