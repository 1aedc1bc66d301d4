//! The temperatures of an `nvidia-smi -q` capture (text or XML): the GPU's and its memory's,
//! and the driver's limits in either form nvidia-smi prints them (absolute, or against the
//! GPU's operating limit: T.Limit). One table of names per format; a value that is not a
//! temperature is an error naming its entry.

use crate::model::Temperatures;

/// Where each temperature is, as `-q` text (section `Temperature`) or XML (`<temperature>`)
/// names it, and the field it goes to.
pub struct TemperatureNames {
    pub section: &'static str,
    pub fields: [(&'static str, Field); 10],
}

/// One of [`Temperatures`]' fields.
#[derive(Clone, Copy)]
pub enum Field {
    Gpu,
    Memory,
    Slowdown,
    Shutdown,
    MaxOperating,
    MemoryMaxOperating,
    Tlimit,
    SlowdownTlimit,
    ShutdownTlimit,
    MaxOperatingTlimit,
}

/// `nvidia-smi -q`.
pub const TEXT: TemperatureNames = TemperatureNames {
    section: "Temperature",
    fields: [
        ("GPU Current Temp", Field::Gpu),
        ("Memory Current Temp", Field::Memory),
        ("GPU Slowdown Temp", Field::Slowdown),
        ("GPU Shutdown Temp", Field::Shutdown),
        ("GPU Max Operating Temp", Field::MaxOperating),
        ("Memory Max Operating Temp", Field::MemoryMaxOperating),
        ("GPU T.Limit Temp", Field::Tlimit),
        ("GPU Slowdown T.Limit Temp", Field::SlowdownTlimit),
        ("GPU Shutdown T.Limit Temp", Field::ShutdownTlimit),
        ("GPU Max Operating T.Limit Temp", Field::MaxOperatingTlimit),
    ],
};

/// `nvidia-smi -q -x`.
pub const XML: TemperatureNames = TemperatureNames {
    section: "temperature",
    fields: [
        ("gpu_temp", Field::Gpu),
        ("memory_temp", Field::Memory),
        ("gpu_temp_slow_threshold", Field::Slowdown),
        ("gpu_temp_max_threshold", Field::Shutdown),
        ("gpu_temp_max_gpu_threshold", Field::MaxOperating),
        ("gpu_temp_max_mem_threshold", Field::MemoryMaxOperating),
        ("gpu_temp_tlimit", Field::Tlimit),
        ("gpu_temp_slow_tlimit_threshold", Field::SlowdownTlimit),
        ("gpu_temp_max_tlimit_threshold", Field::ShutdownTlimit),
        (
            "gpu_temp_max_gpu_tlimit_threshold",
            Field::MaxOperatingTlimit,
        ),
    ],
};

/// The temperatures `get` finds (`get(&[section, name])` → the entry and its text); `Err` with
/// the entry and the reason where a value is neither a temperature nor N/A.
pub fn read<E>(
    names: &TemperatureNames,
    get: impl Fn(&[&str]) -> Option<(E, String)>,
) -> Result<Temperatures, (E, String)> {
    let mut t = Temperatures::default();
    for (name, field) in names.fields {
        let Some((entry, text)) = get(&[names.section, name]) else {
            continue;
        };
        let v = celsius(&text).map_err(|m| (entry, m))?;
        let slot = match field {
            Field::Gpu => &mut t.gpu_c,
            Field::Memory => &mut t.memory_c,
            Field::Slowdown => &mut t.slowdown_c,
            Field::Shutdown => &mut t.shutdown_c,
            Field::MaxOperating => &mut t.max_operating_c,
            Field::MemoryMaxOperating => &mut t.memory_max_operating_c,
            Field::Tlimit => &mut t.tlimit_c,
            Field::SlowdownTlimit => &mut t.slowdown_tlimit_c,
            Field::ShutdownTlimit => &mut t.shutdown_tlimit_c,
            Field::MaxOperatingTlimit => &mut t.max_operating_tlimit_c,
        };
        *slot = v;
    }
    Ok(t)
}

/// `41 C` → 41, `-8 C` → −8; `N/A`, `[N/A]`, `Not Supported` and the like → `None`.
fn celsius(text: &str) -> Result<Option<i32>, String> {
    let t = text.trim();
    // What nvidia-smi prints for a value it could not read (`[Unknown Error]`, `[GPU requires
    // reset]`, `N/A`, `Insufficient Permissions`; the caller drops those it knows too): unknown.
    let lower = t.to_ascii_lowercase();
    if t.is_empty()
        || t.starts_with('[')
        || [
            "n/a",
            "not supported",
            "unknown",
            "insufficient permissions",
        ]
        .iter()
        .any(|w| lower.contains(w))
    {
        return Ok(None);
    }
    let number = t
        .strip_suffix('C')
        .or_else(|| t.strip_suffix("°C"))
        .unwrap_or(t)
        .trim();
    match number.parse::<i32>() {
        Ok(v) if (-300..=300).contains(&v) => Ok(Some(v)),
        _ => Err(format!(
            "expected a temperature such as `41 C`, found {t:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperatures_read_in_both_forms() {
        assert_eq!(celsius("41 C"), Ok(Some(41)));
        assert_eq!(celsius("-8 C"), Ok(Some(-8)));
        assert_eq!(celsius("N/A"), Ok(None));
        assert_eq!(celsius("[Unknown Error]"), Ok(None));
        assert_eq!(celsius("[GPU requires reset]"), Ok(None));
        assert_eq!(celsius("Insufficient Permissions"), Ok(None));
        assert!(celsius("hot").is_err());
        assert!(celsius("99999 C").is_err());
    }
}
