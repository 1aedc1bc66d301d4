//! Quantities as users write and read them: byte sizes (`4K`, `512M`, `1G`, `4K..1G`; binary
//! multiples, K = 1024) parsed and formatted, counts of samples and GPUs in words, and a list
//! cut short with how many more.

/// Parses one size: a whole number with an optional K, M, G or T suffix (binary, case-insensitive,
/// optional trailing `B`/`iB`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (digits, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{t:?} is not a size (examples: 4096, 4K, 512M, 1G)"))?;
    if n == 0 {
        return Err(format!("{t:?}: a size must be greater than zero"));
    }
    n.checked_mul(1u64 << shift)
        .filter(|b| *b <= MAX_SIZE)
        .ok_or_else(|| format!("{t:?} is larger than any GPU's memory (at most 16T)"))
}

/// The largest size taken: 16 TiB, beyond any GPU's memory (the catalog's bound too).
pub const MAX_SIZE: u64 = 16 << 40;

/// Parses a list of sizes: `512M`, `4K,1M,1G`, or a sweep `4K..1G` (doubling), or a mix.
pub fn parse_sizes(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() > 1 && parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "{s:?}: an empty item (two commas, or one at an end; e.g. 4K,1M,1G)"
        ));
    }
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        if let Some((lo, hi)) = part.split_once("..") {
            let end = |v: &str| parse_size(v).map_err(|e| format!("sweep {part:?}: {e}"));
            let (lo, hi) = (end(lo)?, end(hi)?);
            if lo > hi {
                return Err(format!(
                    "{part:?}: the sweep's start is larger than its end"
                ));
            }
            let mut v = lo;
            while v <= hi {
                out.push(v);
                match v.checked_mul(2) {
                    Some(next) => v = next,
                    None => break,
                }
            }
        } else {
            out.push(parse_size(part)?);
        }
    }
    if out.is_empty() {
        return Err("no sizes given".to_string());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A count of samples as words: `1 sample`, `32 samples` (a batch of one is common for large
/// models).
pub fn samples(n: f64) -> String {
    if n == 1.0 {
        "1 sample".into()
    } else {
        format!("{n} samples")
    }
}

/// A GPU count as words: `1 GPU`, `8 GPUs`.
pub fn gpus(n: usize) -> String {
    if n == 1 {
        "1 GPU".to_string()
    } else {
        format!("{n} GPUs")
    }
}

/// A byte count for people: `512 MiB`, `4 KiB`, `1.5 GiB`, `8 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The first `keep` of `items`, comma-separated, then "and N more" when there are more: a list
/// that stays one readable line on a machine of a thousand GPUs.
pub fn first_of<T: std::fmt::Display>(items: &[T], keep: usize) -> String {
    let shown: Vec<String> = items.iter().take(keep).map(T::to_string).collect();
    match items.len().saturating_sub(keep) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// A difference in percent as text, e.g. `+12.3%`; "—" when unknown or not finite, and in
/// exponent form from a million percent on (a figure against one near zero).
pub fn signed_percent(percent: Option<f64>) -> String {
    match percent.filter(|d| d.is_finite()) {
        None => "—".to_string(),
        Some(d) if d.abs() >= 1e6 => format!("{d:+.2e}%"),
        Some(d) => format!("{d:+.1}%"),
    }
}

/// The runs of consecutive numbers in `xs`, as (first, last): `[0, 1, 2, 6]` → `(0, 2), (6, 6)`.
pub fn runs(xs: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &x in xs {
        match out.last_mut() {
            Some((_, last)) if x == *last + 1 => *last = x,
            _ => out.push((x, x)),
        }
    }
    out
}

/// CUDA ordinals as people write them: `0–3` for a run of consecutive GPUs (of three or more,
/// or the whole list), else `0, 2, 5`; `0–3, 6` for both.
pub fn gpu_list(gpus: &[usize]) -> String {
    let runs = runs(gpus);
    let whole = runs.len() == 1;
    runs.iter()
        .map(|&(a, b)| match b - a {
            0 => a.to_string(),
            1 if !whole => format!("{a}, {b}"),
            _ => format!("{a}–{b}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// GPU indices with consecutive runs shortened, for tight spaces: `0–7`, `0,1`, `0–3,6`.
pub fn gpu_set(gpus: &[usize]) -> String {
    runs(gpus)
        .iter()
        .map(|&(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a},{b}"),
            _ => format!("{a}–{b}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_percents_say_dash_for_what_is_not_a_figure() {
        assert_eq!(signed_percent(Some(12.34)), "+12.3%");
        assert_eq!(signed_percent(Some(-0.04)), "-0.0%");
        assert_eq!(signed_percent(None), "—");
        assert_eq!(signed_percent(Some(f64::NAN)), "—");
        assert_eq!(signed_percent(Some(f64::INFINITY)), "—");
        assert_eq!(signed_percent(Some(2.5e7)), "+2.50e7%");
    }

    #[test]
    fn gpu_sets_shorten_runs() {
        assert_eq!(gpu_set(&[0, 1, 2, 3, 4, 5, 6, 7]), "0–7");
        assert_eq!(gpu_set(&[0, 1]), "0,1");
        assert_eq!(gpu_set(&[0, 1, 2, 3, 6]), "0–3,6");
        assert_eq!(gpu_set(&[1, 3, 5]), "1,3,5");
        assert_eq!(gpu_set(&[]), "");
    }

    #[test]
    fn gpu_lists_read_as_written() {
        assert_eq!(gpu_list(&[0, 1]), "0–1");
        assert_eq!(gpu_list(&[0, 1, 2, 3]), "0–3");
        assert_eq!(gpu_list(&[0, 2, 5]), "0, 2, 5");
        assert_eq!(gpu_list(&[0, 1, 2, 3, 6]), "0–3, 6");
        assert_eq!(gpu_list(&[0, 1, 4, 5]), "0, 1, 4, 5");
        assert_eq!(gpu_list(&[4]), "4");
        assert_eq!(gpu_list(&[]), "");
    }

    /// The assumption warnings of a 1,000-GPU capture listed every GPU and pair (40 KB lines).
    #[test]
    fn first_of_names_a_few_and_counts_the_rest() {
        assert_eq!(first_of(&[1, 2, 3], 8), "1, 2, 3");
        assert_eq!(first_of(&[1, 2, 3], 3), "1, 2, 3");
        let many: Vec<usize> = (0..1000).collect();
        assert_eq!(first_of(&many, 2), "0, 1 and 998 more");
        assert_eq!(first_of::<usize>(&[], 2), "");
    }

    /// "at 1 samples" was printed for a batch of one.
    #[test]
    fn one_sample_is_singular() {
        assert_eq!(samples(1.0), "1 sample");
        assert_eq!(samples(32.0), "32 samples");
        assert_eq!(samples(0.5), "0.5 samples");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("8"), Ok(8));
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("abc").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn sweeps() {
        assert_eq!(parse_sizes("4K..16K"), Ok(vec![4096, 8192, 16384]));
        assert_eq!(parse_sizes("1M,4K"), Ok(vec![4096, 1 << 20]));
        assert!(parse_sizes("1G..4K").is_err());
        assert!(parse_sizes("").is_err());
        assert!(parse_sizes("4K,,1M").unwrap_err().contains("empty item"));
        assert!(
            parse_sizes("4K..")
                .unwrap_err()
                .starts_with("sweep \"4K..\": ")
        );
    }

    #[test]
    fn format() {
        assert_eq!(format_bytes(512 << 20), "512 MiB");
        assert_eq!(format_bytes(8), "8 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }
}
