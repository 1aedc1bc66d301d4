//! Values from outside as types that hold only what they may (hyperfine's `src/options.rs` is
//! the pattern): each has one constructor that checks, and its serde deserializer runs that same
//! check, so that a job arriving as JSON (the agent's protocol, a saved job) is checked by being
//! read and nothing checks it again. The command line parses its flags into these types and
//! names the flag when one is refused; here a refusal names the value's field ([`Refused`]).

use std::cell::RefCell;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::MAX_GPUS;
use super::validate::{Bounds, quoted};

/// A value its type refused: which value (its field in jobs and requests, e.g. `gpus`), the
/// value itself where the message shows it, and why, in one line. The command line shows the
/// same message under the flag's name ([`Refused::named`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.named(self.field))]
pub struct Refused {
    /// The value's field in a job or request (`gpus`, `interval_s`, `pricing.years`).
    pub field: &'static str,
    /// The value as the message shows it after the name (`-1`), if it does.
    pub value: Option<String>,
    /// Why it was refused.
    pub why: String,
}

impl Refused {
    pub fn new(field: &'static str, why: impl Into<String>) -> Refused {
        Refused {
            field,
            value: None,
            why: why.into(),
        }
    }

    /// The message under `name` (a flag, `--gpus`; or the field): `--gpus: GPU 9 is out of
    /// range …`, or `--years -1: expected …` where the value is shown.
    pub fn named(&self, name: &str) -> String {
        match &self.value {
            Some(v) => format!("{name} {v}: {}", self.why),
            None => format!("{name}: {}", self.why),
        }
    }

    /// The error a deserializer returns for this refusal (and noted for [`refusal_in`]).
    pub fn into_de<E: serde::de::Error>(self) -> E {
        let error = E::custom(&self);
        NOTED.with(|n| {
            let mut n = n.borrow_mut();
            if let Some(slot) = n.as_mut()
                && slot.is_none()
            {
                *slot = Some(self);
            }
        });
        error
    }
}

thread_local! {
    /// While [`refusal_in`] runs: the first value refused during it.
    static NOTED: RefCell<Option<Option<Refused>>> = const { RefCell::new(None) };
}

/// Runs `read` (a deserialization) and says whether a value in it was refused by its type, so
/// that a reader can tell a request out of range (a [`Refused`]) from one it could not read.
pub fn refusal_in<R>(read: impl FnOnce() -> R) -> (R, Option<Refused>) {
    let outer = NOTED.with(|n| n.borrow_mut().replace(None));
    let result = read();
    let noted = NOTED
        .with(|n| std::mem::replace(&mut *n.borrow_mut(), outer))
        .flatten();
    (result, noted)
}

/// The GPUs a job works on: every GPU of the machine, or these indices (distinct, each below
/// [`MAX_GPUS`], in the order given). Written as a list, empty for every GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSelection(Vec<usize>);

impl GpuSelection {
    /// The field a selection is in jobs and requests.
    pub const FIELD: &'static str = "gpus";

    /// Every GPU of the machine.
    pub fn all() -> GpuSelection {
        GpuSelection(Vec::new())
    }

    /// These GPUs (empty: every GPU); refused when one is listed twice (a typo, `0,0` for
    /// `0,1`: one GPU would stand for two) or no machine could have it.
    pub fn new(indices: Vec<usize>) -> Result<GpuSelection, Refused> {
        if indices.len() > MAX_GPUS {
            return Err(Refused::new(
                Self::FIELD,
                format!(
                    "{} indices given; a machine has at most {MAX_GPUS}",
                    indices.len()
                ),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for &g in &indices {
            if g >= MAX_GPUS {
                return Err(Refused::new(
                    Self::FIELD,
                    format!(
                        "GPU {g} is out of range (indices go up to {})",
                        MAX_GPUS - 1
                    ),
                ));
            }
            if !seen.insert(g) {
                return Err(Refused::new(
                    Self::FIELD,
                    format!(
                        "GPU {g} is listed twice in {} (expected distinct indices, e.g. 0,1,3)",
                        quoted(&list(&indices))
                    ),
                ));
            }
        }
        Ok(GpuSelection(indices))
    }

    /// `0,1,3` or `all`, as `--gpus` takes it.
    pub fn parse(text: &str) -> Result<GpuSelection, Refused> {
        let t = text.trim();
        if t == "all" {
            return Ok(Self::all());
        }
        if t.is_empty() {
            return Err(Refused::new(
                Self::FIELD,
                "no GPU given (expected e.g. 0,1,3 or all)",
            ));
        }
        let mut out = Vec::new();
        for part in t.split(',').map(str::trim) {
            // `0,,1` or `0,1,` is a typo (a GPU left out?), not a list of two.
            if part.is_empty() {
                return Err(Refused::new(
                    Self::FIELD,
                    format!(
                        "an empty entry in {} (expected indices separated by single commas, e.g. 0,1,3)",
                        quoted(text)
                    ),
                ));
            }
            out.push(part.parse::<usize>().map_err(|_| {
                Refused::new(
                    Self::FIELD,
                    format!(
                        "{} is not a GPU index (expected e.g. 0,1,3 or all)",
                        quoted(part)
                    ),
                )
            })?);
        }
        Self::new(out)
    }

    /// The indices asked for; empty for every GPU.
    pub fn indices(&self) -> &[usize] {
        &self.0
    }

    /// True for every GPU of the machine.
    pub fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    /// The GPUs of `topo` this selects: those named, or every one when none are.
    pub fn of(&self, topo: &crate::model::Topology) -> Vec<usize> {
        if self.is_all() {
            topo.gpu_indices()
        } else {
            self.0.clone()
        }
    }
}

/// The indices asked for, read as a slice (empty for every GPU): the selection stays as it
/// was checked, since nothing can change it in place.
impl std::ops::Deref for GpuSelection {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.0
    }
}

fn list(indices: &[usize]) -> String {
    indices
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `0,1,3`, or `all` (what [`GpuSelection::parse`] reads back).
impl fmt::Display for GpuSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_all() {
            f.write_str("all")
        } else {
            f.write_str(&list(&self.0))
        }
    }
}

impl Serialize for GpuSelection {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A list (`null` too, as protocol 2's watch request wrote every GPU), checked as
/// [`GpuSelection::new`] checks it.
impl<'de> Deserialize<'de> for GpuSelection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Option::<Vec<usize>>::deserialize(d)?.unwrap_or_default();
        GpuSelection::new(list).map_err(Refused::into_de)
    }
}

/// How often a watch samples, in seconds: 0.1 s (GPM's samples are meaningful from about
/// 100 ms) to an hour.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Interval(f64);

impl Interval {
    /// The field an interval is in requests.
    pub const FIELD: &'static str = "interval_s";
    /// The accepted range.
    pub const BOUNDS: Bounds = super::traffic::INTERVAL_S;

    /// `seconds`, refused outside [`Self::BOUNDS`].
    pub fn new(seconds: f64) -> Result<Interval, Refused> {
        Self::BOUNDS
            .check(seconds)
            .map(Interval)
            .map_err(|e| Refused::new(Self::FIELD, e))
    }

    /// A duration (`500ms`, `2s`) or seconds (`0.5`), as `--interval` takes it.
    pub fn parse(text: &str) -> Result<Interval, Refused> {
        let t = text.trim();
        let seconds = match t.parse::<f64>() {
            Ok(v) => v,
            Err(_) => humantime::parse_duration(t)
                .map(|d| d.as_secs_f64())
                .map_err(|_| {
                    Refused::new(
                        Self::FIELD,
                        format!(
                            "{} is not a duration (e.g. 1s, 500ms, 2s, 0.25)",
                            quoted(text)
                        ),
                    )
                })?,
        };
        Self::new(seconds)
    }

    /// The interval in seconds.
    pub fn seconds(self) -> f64 {
        self.0
    }

    /// The interval as a [`std::time::Duration`].
    pub fn duration(self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.0)
    }
}

/// One second.
impl Default for Interval {
    fn default() -> Self {
        Interval(1.0)
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Interval::new(f64::deserialize(d)?).map_err(Refused::into_de)
    }
}

/// How long a measured test runs on (untimed) for its energy, in seconds: from 0.2 s (three
/// steps of the energy counter, 100 ms apart on H100 and H200) to a minute.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct EnergyWindow(f64);

impl EnergyWindow {
    /// The field a window is in jobs.
    pub const FIELD: &'static str = "energy_window_s";
    /// The accepted range.
    pub const BOUNDS: Bounds = Bounds::closed(0.2, 60.0, "s");

    /// `seconds`, refused outside [`Self::BOUNDS`].
    pub fn new(seconds: f64) -> Result<EnergyWindow, Refused> {
        Self::BOUNDS
            .check(seconds)
            .map(EnergyWindow)
            .map_err(|e| Refused::new(Self::FIELD, e))
    }

    /// A number of seconds, as `--energy-window` takes it.
    pub fn parse(text: &str) -> Result<EnergyWindow, Refused> {
        let seconds = text.trim().parse::<f64>().map_err(|_| {
            Refused::new(
                Self::FIELD,
                format!("{} is not a number of seconds", quoted(text)),
            )
        })?;
        Self::new(seconds)
    }

    /// The window in seconds.
    pub fn seconds(self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for EnergyWindow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        EnergyWindow::new(f64::deserialize(d)?).map_err(Refused::into_de)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_list_is_parsed_and_checked_once() {
        let s = GpuSelection::parse("0, 2,3").unwrap();
        assert_eq!(s.indices(), [0, 2, 3]);
        assert_eq!(s.to_string(), "0,2,3");
        assert!(GpuSelection::parse("all").unwrap().is_all());
        let twice = GpuSelection::parse("0, 2,2").unwrap_err();
        assert_eq!(
            twice.named("--gpus"),
            "--gpus: GPU 2 is listed twice in \"0,2,2\" (expected distinct indices, e.g. 0,1,3)"
        );
        assert!(GpuSelection::parse("0,x").is_err());
        for typo in ["0,,1", "0,1,", ",0"] {
            let e = GpuSelection::parse(typo).unwrap_err().to_string();
            assert!(e.contains("an empty entry"), "{typo}: {e}");
        }
        assert!(
            GpuSelection::parse(" ")
                .unwrap_err()
                .why
                .contains("no GPU given")
        );
        let far = GpuSelection::new(vec![usize::MAX]).unwrap_err();
        assert!(far.to_string().starts_with("gpus: GPU"), "{far}");
    }

    #[test]
    fn reading_a_selection_runs_the_same_check() {
        let ok: GpuSelection = serde_json::from_str("[1,0]").unwrap();
        assert_eq!(ok.indices(), [1, 0]);
        let all: GpuSelection = serde_json::from_str("null").unwrap();
        assert!(all.is_all());
        assert_eq!(serde_json::to_string(&all).unwrap(), "[]");
        let (read, refused) = refusal_in(|| serde_json::from_str::<GpuSelection>("[0,0]"));
        let refused = refused.expect("noted");
        assert_eq!(refused, GpuSelection::new(vec![0, 0]).unwrap_err());
        assert!(read.unwrap_err().to_string().contains(&refused.to_string()));
        // A list that is not one is no refusal: the request could not be read.
        let (read, refused) = refusal_in(|| serde_json::from_str::<GpuSelection>("\"0\""));
        assert!(read.is_err() && refused.is_none());
    }

    #[test]
    fn an_interval_is_a_duration_in_range() {
        assert_eq!(Interval::parse("500ms").unwrap().seconds(), 0.5);
        assert_eq!(Interval::parse("0.25").unwrap().seconds(), 0.25);
        assert_eq!(
            Interval::parse("0").unwrap_err().named("--interval"),
            "--interval: 0 s is out of range: expected 0.1 to 3600 s"
        );
        assert!(
            Interval::parse("fast")
                .unwrap_err()
                .why
                .contains("\"fast\" is not a duration")
        );
        assert!(Interval::parse("2h").is_err());
        let (read, refused) = refusal_in(|| serde_json::from_str::<Interval>("0"));
        assert!(read.is_err());
        assert_eq!(refused.unwrap().field, "interval_s");
        assert_eq!(serde_json::to_string(&Interval::default()).unwrap(), "1.0");
    }

    #[test]
    fn an_energy_window_is_seconds_in_range() {
        assert_eq!(EnergyWindow::parse(" 0.5").unwrap().seconds(), 0.5);
        for bad in ["0.1", "61", "NaN", "-1"] {
            let e = EnergyWindow::parse(bad).unwrap_err();
            assert!(
                e.why.contains("is out of range: expected 0.2 to 60 s"),
                "{e}"
            );
        }
        assert!(
            EnergyWindow::parse("2s")
                .unwrap_err()
                .why
                .contains("not a number")
        );
        let (read, refused) = refusal_in(|| serde_json::from_str::<EnergyWindow>("1e9"));
        assert!(read.is_err());
        assert_eq!(refused.unwrap().field, "energy_window_s");
    }
}
